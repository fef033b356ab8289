package client

// The scopes of QueryRequest.Scope.
const (
	ScopeAll  = "all"  // tags, names and contents (the default)
	ScopeTags = "tags" // tags and names only
)

// Passage is the text of a file that matched a query (Result.Passages): a
// passage of its lines, or of a longer one the at most 480 bytes where the
// query's words are densest (docs/contents.md).
type Passage struct {
	Line  int     `json:"line"` // the line Text begins on, 1-based
	Text  string  `json:"text"` // the file's bytes, at most 480
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
