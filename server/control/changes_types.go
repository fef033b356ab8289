package control

import "github.com/semfs/semfs/server/feed"

// Change is one event of the change feed (GET /v1/changes).
type Change = feed.Event

// ChangesStats is the history's size in Health.
type ChangesStats = feed.Stats

// ChangesResponse is GET /v1/changes's answer. Changes is never null.
type ChangesResponse struct {
	Cursor  string   `json:"cursor"`  // give it back as since for what comes next
	Changes []Change `json:"changes"` // in rev order
	// Reset: since is not in the daemon's history (lost to the bound, a
	// rebuilt index, a restart that could not keep the log): list again, then
	// go on from Cursor.
	Reset bool `json:"reset"`
	// More: limit cut the answer short; ask again at once.
	More bool `json:"more,omitempty"`
}

// Limits of GET /v1/changes.
const (
	DefaultChangesLimit = 1000
	MaxChangesLimit     = 10000
	MaxChangesTimeout   = 5 * 60 // seconds
)
