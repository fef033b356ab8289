package control

import (
	"time"

	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/index/content"
	"github.com/semfs/semfs/index/passage"
	"github.com/semfs/semfs/server/policy"
)

// RegisterRequest binds the calling uid to App.
type RegisterRequest struct {
	App string `json:"app"`
}

// RegisterResponse is the identity bound to the caller.
type RegisterResponse struct {
	App string `json:"app"`
	UID uint32 `json:"uid"`
}

// TagRequest replaces a file's tags. Path is relative to the backing directory.
type TagRequest struct {
	Path        string        `json:"path"`
	Task        string        `json:"task"`
	RelatedApps []string      `json:"relatedApps"`
	Embedding   *index.Vector `json:"embedding,omitempty"`
}

// TagsRequest tags many files at once, all or nothing.
type TagsRequest struct {
	Tags []TagRequest `json:"tags"`
}

// TagsResponse holds the records, in request order.
type TagsResponse struct {
	Records []index.Record `json:"records"`
}

// QueryRequest asks for files by meaning and keywords. Limit <= 0 returns every match.
// Rank is "best" (the default, also when absent) or "seed" (the seed's rule,
// unchanged); any other value is a 400. Explain adds to each result why it
// matched.
type QueryRequest struct {
	Text      string        `json:"text"`
	Limit     int           `json:"limit,omitempty"`
	Embedding *index.Vector `json:"embedding,omitempty"`
	Rank      string        `json:"rank,omitempty"`
	Explain   bool          `json:"explain,omitempty"`
	// Scope is "all" (the default: tags, names and contents) or "tags"
	// (the tag-only search); the seed rank never looks at contents.
	Scope string `json:"scope,omitempty"`
}

// QueryResponse lists matches best first. Results is never null.
type QueryResponse struct {
	Results []index.Result `json:"results"`
}

// Health is the daemon's state, for `semfs status` and monitoring. It is
// answered 200 with Status "ok", or 503 with Status "unhealthy" and Error
// saying why (the backing directory was moved or removed): an error body in the
// usual shape that still carries every other field.
type Health struct {
	Status        string            `json:"status"` // "ok" or "unhealthy"
	Error         *ErrorDetail      `json:"error,omitempty"`
	Version       string            `json:"version"`
	StartedAt     time.Time         `json:"startedAt"`
	DataDir       string            `json:"dataDir"`
	IndexDir      string            `json:"indexDir"`
	Socket        string            `json:"socket"`
	Listeners     map[string]string `json:"listeners"` // "nfs", "9p", "9p-unix" -> address
	Index         index.Stats       `json:"index"`
	Registered    map[string]string `json:"registered"` // uid -> app
	LastReconcile string            `json:"lastReconcile,omitempty"`
	// Watch says how changes made directly in the backing directory are
	// followed: the mode (inotify, or scan after a fallback) and what it did.
	Watch string `json:"watch,omitempty"`
	// Content is the content index's state (grep): files and bytes indexed,
	// files skipped by reason, paths pending.
	Content *content.IndexStats `json:"content,omitempty"`
	// Passages is the passage index's state (meaning over contents): files
	// and bytes indexed, passages, those embedded, pending work.
	Passages *passage.Stats `json:"passages,omitempty"`
	// Policy is the --policy file's state (absent without one): when it was
	// last loaded whole and why the last reload failed, if it did; the
	// policy in force is the last one loaded.
	Policy *policy.Status `json:"policy,omitempty"`
	// Changes is the change feed's history (GET /v1/changes); nil without one.
	Changes *ChangesStats `json:"changes,omitempty"`
}

// GrepRequest is POST /v1/grep's body; GrepResponse its answer (docs/grep.md).
type (
	GrepRequest  = content.Request
	GrepResponse = content.Answer
	GrepMatch    = content.Match
)

// ErrorBody is the JSON shape of every error response.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail says what went wrong; Code is stable and machine-readable.
type ErrorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Error codes.
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
	CodeTimeout     = "timeout"     // the request did not arrive within the body timeout
)

// MaxBody is the largest request body accepted, except by /v1/tags.
const MaxBody = 1 << 20

// MaxTagsBody is the largest /v1/tags body: a batch of MaxBatch tags with
// paths, tasks and related apps of typical length fits, and so do a few
// thousand with client-supplied 384-dimension embeddings (about 4 KiB of JSON
// each); a larger batch is split by the client.
const MaxTagsBody = 16 << 20
