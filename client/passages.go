package client

// The scopes of QueryRequest.Scope.
const (
	ScopeAll  = "all"  // tags, names and contents (the default)
	ScopeTags = "tags" // tags and names only
)

// Passage is a run of lines of a file that matched a query (Result.Passages).
type Passage struct {
	Line  int     `json:"line"` // its first line, 1-based
	Text  string  `json:"text"` // at most about 2,000 bytes
	Score float64 `json:"score"`
}

// PassageStats is the passage index's state in Health (meaning over contents).
type PassageStats struct {
	Files    int    `json:"files"`
	Bytes    int64  `json:"bytes"`
	Passages int    `json:"passages"`
	Embedded int    `json:"embedded"` // passages with their vector
	Pending  int    `json:"pending"`  // paths queued plus passages waiting for their vector
	Model    string `json:"model,omitempty"`
	Damaged  string `json:"damaged,omitempty"`
}
