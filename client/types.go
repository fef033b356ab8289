package client

import "time"

// RegisterRequest binds the calling uid to App.
type RegisterRequest struct {
	App string `json:"app"`
}

// RegisterResponse is the identity bound to the caller.
type RegisterResponse struct {
	App string `json:"app"`
	UID uint32 `json:"uid"`
}

// Vector is an embedding the caller computed itself. Model names the model
// (e.g. "all-MiniLM-L6-v2"); the daemon checks it and the dimensions.
type Vector struct {
	Model  string    `json:"model"`
	Values []float32 `json:"vector"`
}

// TagRequest replaces a file's tags. Path is relative to the backing directory
// (a leading "/" is allowed).
type TagRequest struct {
	Path        string   `json:"path"`
	Task        string   `json:"task"`
	RelatedApps []string `json:"relatedApps"`
	Embedding   *Vector  `json:"embedding,omitempty"`
}

// TagsRequest tags many files at once, all or nothing.
type TagsRequest struct {
	Tags []TagRequest `json:"tags"`
}

// TagsResponse holds the records, in request order.
type TagsResponse struct {
	Records []Record `json:"records"`
}

// QueryRequest asks for files by meaning and keywords. Limit <= 0 returns every match.
type QueryRequest struct {
	Text      string  `json:"text"`
	Limit     int     `json:"limit,omitempty"`
	Embedding *Vector `json:"embedding,omitempty"`
	// Rank is RankBest (also what "" means) or RankSeed; the daemon refuses
	// any other value (CodeInvalid).
	Rank string `json:"rank,omitempty"`
	// Explain asks for Result.Explain.
	Explain bool `json:"explain,omitempty"`
	// Scope is ScopeAll ("" means it too: tags, names and contents) or
	// ScopeTags (tags and names only); RankSeed never looks at contents.
	Scope string `json:"scope,omitempty"`
}

// The rank modes of QueryRequest.Rank.
const (
	RankBest = "best" // words (BM25) fused with meaning; exact names first
	RankSeed = "seed" // the seed's rule: substring points + similarity
)

// QueryResponse lists matches best first. Results is never null.
type QueryResponse struct {
	Results []Result `json:"results"`
}

// Record is one file's attribution and tags.
type Record struct {
	Path        string    `json:"path"`        // slash-separated, relative to the backing dir
	CreatedBy   string    `json:"createdBy"`   // "" = unattributed
	Task        string    `json:"task"`        // "" = untagged
	RelatedApps []string  `json:"relatedApps"` // [] when none
	CreatedAt   time.Time `json:"createdAt"`
	UpdatedAt   time.Time `json:"updatedAt"`
}

// Result is one query answer: the record and its score.
type Result struct {
	Record
	Score   float64      `json:"score"`
	Explain *Explanation `json:"explain,omitempty"` // only when the query asked
	// Passages are the file's best 1–3 passages when its contents matched.
	Passages []Passage `json:"passages,omitempty"`
}

// Explanation is why a file matched (see docs/query.md).
type Explanation struct {
	Rank       string              `json:"rank"`
	Names      []string            `json:"names,omitempty"` // query words equal to a whole name of the file
	Words      map[string][]string `json:"words,omitempty"` // field ("path", "task", "apps"; seed: "any") -> query words found
	Keyword    float64             `json:"keyword"`
	Similarity *float64            `json:"similarity,omitempty"`
	Semantic   float64             `json:"semantic,omitempty"`
}

// Health is the daemon's state.
type Health struct {
	Status        string            `json:"status"` // "ok", or "unhealthy" (answered with HTTP 503)
	Version       string            `json:"version"`
	StartedAt     time.Time         `json:"startedAt"`
	DataDir       string            `json:"dataDir"`
	IndexDir      string            `json:"indexDir"`
	Socket        string            `json:"socket"`
	Listeners     map[string]string `json:"listeners"` // "nfs", "9p", "9p-unix" -> address
	Index         IndexStats        `json:"index"`
	Registered    map[string]string `json:"registered"` // uid -> app
	LastReconcile string            `json:"lastReconcile,omitempty"`
	Watch         string            `json:"watch,omitempty"`    // how host changes to the backing directory are followed
	Content       *ContentStats     `json:"content,omitempty"`  // grep's content index
	Passages      *PassageStats     `json:"passages,omitempty"` // meaning over contents
	Policy        *PolicyStatus     `json:"policy,omitempty"`   // the --policy file's state; nil without one
	Changes       *ChangesStats     `json:"changes,omitempty"`  // the change feed's history
	// Error says why the daemon is unhealthy (e.g. its backing directory was
	// moved or removed); nil when Status is "ok".
	Error *ErrorDetail `json:"error,omitempty"`
}

// PolicyStatus is the --policy file, when it was last loaded whole, and why
// the last reload failed ("" when it did not; the last policy loaded stays
// in force).
type PolicyStatus struct {
	File   string    `json:"file"`
	Loaded time.Time `json:"loaded"`
	Error  string    `json:"error,omitempty"`
}

// IndexStats counts the index's records and vectors.
type IndexStats struct {
	Records     int            `json:"records"`
	Tagged      int            `json:"tagged"`
	Vectors     map[string]int `json:"vectors"` // in memory, by model
	Model       string         `json:"model"`   // in-process model; "" when none
	KeywordOnly string         `json:"keywordOnly,omitempty"`
	Degraded    string         `json:"degraded,omitempty"`
	Reembed     Reembed        `json:"reembed"`
	Err         string         `json:"error,omitempty"`
}

// Reembed is the background re-embedder's progress.
type Reembed struct {
	Running   bool   `json:"running"`
	Pending   int    `json:"pending"`
	Queued    int    `json:"queued"`
	Done      int    `json:"done"`
	Failed    int    `json:"failed"`
	LastError string `json:"lastError,omitempty"`
}

// ErrorBody is the JSON shape of every error response.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail says what went wrong; Code is stable and machine-readable.
type ErrorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Error codes the daemon answers with, plus CodeUnreachable, which only the
// client uses (no daemon answered).
const (
	CodeBadRequest  = "bad_request"  // malformed JSON, unknown fields, trailing data
	CodeInvalid     = "invalid"      // a well-formed request with a bad value
	CodeInvalidPath = "invalid_path" // a path that escapes or is not a valid path
	CodeNotFound    = "not_found"    // no such file or route
	CodeTooLarge    = "too_large"    // body over the limit
	CodeMethod      = "method_not_allowed"
	CodeForbidden   = "forbidden"
	CodeInternal    = "internal"    // the daemon failed; the request may not have happened
	CodeUnavailable = "unavailable" // the daemon is shutting down, busy, or its backing directory is gone
	CodeUnreachable = "unreachable" // client side: no daemon answered on the socket
)

// MaxBody is the largest request body the daemon accepts.
const MaxBody = 1 << 20
