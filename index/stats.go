package index

// Stats is a snapshot of the index for `semfs status` and /v1/health.
type Stats struct {
	Records     int            `json:"records"`
	Tagged      int            `json:"tagged"`
	Vectors     map[string]int `json:"vectors"` // in memory, by model
	Model       string         `json:"model"`   // in-process model; "" when none
	KeywordOnly string         `json:"keywordOnly,omitempty"`
	// Degraded is set when Bleve failed during this run: queries still answer
	// exactly, by scanning every record, until the next Open rebuilds Bleve.
	Degraded string  `json:"degraded,omitempty"`
	Reembed  Reembed `json:"reembed"`
	Err      string  `json:"error,omitempty"` // counting records failed
}

// Reembed is the background re-embedder's progress since Open.
type Reembed struct {
	Running   bool   `json:"running"`
	Pending   int    `json:"pending"`
	Queued    int    `json:"queued"`
	Done      int    `json:"done"`
	Failed    int    `json:"failed"`
	LastError string `json:"lastError,omitempty"`
}

// Stats counts records (in memory) and reports the re-embedder's
// progress. Read guarantee: a consistent view, like Query.
func (x *Index) Stats() Stats {
	st := Stats{Vectors: map[string]int{}, KeywordOnly: x.keywordOnly}
	if x.emb != nil {
		st.Model = x.emb.Name()
	}
	if x.re != nil {
		st.Reembed = x.re.progress()
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	for m, s := range x.vecs {
		if s.len() > 0 {
			st.Vectors[m] = s.len()
		}
	}
	if x.degraded != nil {
		st.Degraded = x.degraded.Error()
	}
	if x.closed {
		st.Err = ErrClosed.Error()
		return st
	}
	st.Records = x.hay.len()
	for _, h := range x.hay.entries {
		if h.tagged {
			st.Tagged++
		}
	}
	return st
}
