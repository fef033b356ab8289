package client

import (
	"context"
	"net/http"
)

// GrepRequest is POST /v1/grep's body (docs/grep.md). Pattern is Go RE2
// syntax, or a literal with Fixed; a newline separates alternatives.
type GrepRequest struct {
	Pattern    string   `json:"pattern"`
	Fixed      bool     `json:"fixed,omitempty"`
	IgnoreCase bool     `json:"ignoreCase,omitempty"`
	Paths      []string `json:"paths,omitempty"`   // globs: with a "/" (a leading one anchors at the root) on the path or a directory of it, without on any one name in it
	Limit      int      `json:"limit,omitempty"`   // matching lines; 0 = 1,000; at most 1,000,000
	Context    int      `json:"context,omitempty"` // lines before and after each match
	All        bool     `json:"all,omitempty"`     // also files not content-indexed (too big, binary, not UTF-8)
	Counts     bool     `json:"counts,omitempty"`  // also GrepResponse.Counts (grep -c)
}

// GrepMatch is one matching line, or one binary file that matches (Binary,
// Line 0).
type GrepMatch struct {
	Path   string   `json:"path"`
	Line   int      `json:"line"`
	Column int      `json:"column"`
	Text   string   `json:"text"`
	Before []string `json:"before,omitempty"`
	After  []string `json:"after,omitempty"`
	Binary bool     `json:"binary,omitempty"`
	// Lines is, for a binary match, how many matching lines it stands for
	// (GNU grep -c's count; a NUL ends a line there too).
	Lines int `json:"lines,omitempty"`
}

// GrepStats says how an answer was found.
type GrepStats struct {
	Candidates int     `json:"candidates"`
	Scanned    int     `json:"scanned"`
	Indexed    int     `json:"indexed"`
	Ms         float64 `json:"ms"`
}

// GrepResponse is the answer, sorted by path then line.
type GrepResponse struct {
	Matches   []GrepMatch `json:"matches"`
	Files     int         `json:"files"`
	Truncated bool        `json:"truncated"`
	Stats     GrepStats   `json:"stats"`
	// Counts (with GrepRequest.Counts): every file searched that the caller
	// may read, by path, with its count of matching lines, 0 included.
	Counts []GrepCount `json:"counts,omitempty"`
}

// GrepCount is one file's count of matching lines, as grep -c prints it.
type GrepCount struct {
	Path  string `json:"path"`
	Lines int    `json:"lines"`
}

// Grep finds the lines of the export's files that match req.Pattern, among
// the files the caller may read.
func (c *Client) Grep(ctx context.Context, req GrepRequest) (GrepResponse, error) {
	var out GrepResponse
	err := c.do(ctx, http.MethodPost, "/v1/grep", req, &out)
	return out, err
}

// ContentStats is the content index's state in Health.
type ContentStats struct {
	Files    int            `json:"files"`
	Bytes    int64          `json:"bytes"`
	Skipped  map[string]int `json:"skipped"` // by reason: "too big", "binary", "not UTF-8"
	Pending  int            `json:"pending"` // written since indexed, or queued: grep reads them directly
	Trigrams int            `json:"trigrams"`
	Damaged  string         `json:"damaged,omitempty"`
}
