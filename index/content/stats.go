package content

// IndexStats is the content index's state for `semfs status` and the metrics.
type IndexStats struct {
	Files    int            `json:"files"`   // content-indexed files
	Bytes    int64          `json:"bytes"`   // their text
	Skipped  map[string]int `json:"skipped"` // regular files not indexed, by reason: "too big", "binary", "not UTF-8"
	Pending  int            `json:"pending"` // dirty paths: written since indexed, or queued
	Trigrams int            `json:"trigrams"`
	Damaged  string         `json:"damaged,omitempty"` // why the saved index was not used at start ("missing" on a first start)
}

// Stats counts what the index holds now.
func (x *Index) Stats() IndexStats {
	x.mu.RLock()
	st := IndexStats{Files: int(x.live.GetCardinality()), Bytes: x.bytes, Trigrams: x.post.len(), Damaged: x.damaged,
		Skipped: map[string]int{}}
	for _, s := range []State{TooBig, Binary, NotUTF8} {
		st.Skipped[s.String()] = x.states[s]
	}
	x.mu.RUnlock()
	st.Pending = x.q.Dirty(nil)
	return st
}
