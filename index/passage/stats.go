package passage

// Stats is the passage index's state for `semfs status` and the metrics.
type Stats struct {
	Files    int    `json:"files"`    // files split into passages
	Bytes    int64  `json:"bytes"`    // their text
	Passages int    `json:"passages"` // live passages
	Embedded int    `json:"embedded"` // of them, with a vector
	Pending  int    `json:"pending"`  // paths queued for reading, plus passages waiting for their vector
	Model    string `json:"model,omitempty"`
	Damaged  string `json:"damaged,omitempty"` // why the saved index was not used at start ("missing" on a first start)
}

// Stats counts what the index holds now.
func (x *Index) Stats() Stats {
	x.mu.RLock()
	st := Stats{Files: x.files.Len(), Bytes: x.bytes, Passages: x.live, Embedded: x.embedded, Model: x.model, Damaged: x.damaged}
	if x.opt.CPU >= 0 && (x.opt.Embedder != nil || x.opt.EmbedderFrom != nil) {
		st.Pending = x.live - x.embedded
	}
	x.mu.RUnlock()
	st.Pending += x.q.Dirty(nil)
	return st
}
