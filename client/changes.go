package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Change is one event of the change feed (docs/changes.md).
type Change struct {
	Rev  uint64    `json:"rev"`
	Op   string    `json:"op"`             // create, write, truncate, mkdir, remove, rename, symlink, link, setattr, tag
	Path string    `json:"path"`           // a rename's new path
	From string    `json:"from,omitempty"` // a rename's old path
	Type string    `json:"type"`           // file, dir, symlink, fifo; "" when unknown
	App  string    `json:"app"`            // the attributed app; "" unattributed; "host" for the backing directory's own changes
	Size int64     `json:"size"`
	At   time.Time `json:"at"`
}

// ChangesResponse is GET /v1/changes's answer.
type ChangesResponse struct {
	Cursor  string   `json:"cursor"`
	Changes []Change `json:"changes"`
	Reset   bool     `json:"reset"` // the cursor was not in the daemon's history: list again, go on from Cursor
	More    bool     `json:"more,omitempty"`
}

// ChangesStats is the history's size, in Health.
type ChangesStats struct {
	Cursor  string    `json:"cursor"`
	Events  int       `json:"events"`
	Oldest  uint64    `json:"oldest,omitempty"`
	Since   time.Time `json:"since,omitzero"`
	Keep    int       `json:"keep"`
	KeepFor string    `json:"keepFor"`
	Fresh   string    `json:"fresh,omitempty"`
	Log     string    `json:"log,omitempty"`
}

// ChangesRequest asks for the changes after Since ("" = the current cursor,
// no changes), waiting up to Timeout for the first (0: answer at once), at
// most Limit of them (0: the daemon's default), on paths matching Paths
// (doublestar globs; none: all).
type ChangesRequest struct {
	Since   string
	Timeout time.Duration
	Limit   int
	Paths   []string
}

// ChangesOnce is one GET /v1/changes.
func (c *Client) ChangesOnce(ctx context.Context, req ChangesRequest) (ChangesResponse, error) {
	q := url.Values{}
	if req.Since != "" {
		q.Set("since", req.Since)
	}
	if req.Timeout > 0 {
		q.Set("timeout", req.Timeout.String())
	}
	if req.Limit > 0 {
		q.Set("limit", strconv.Itoa(req.Limit))
	}
	if len(req.Paths) > 0 {
		q.Set("paths", strings.Join(req.Paths, ","))
	}
	path := "/v1/changes"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	var out ChangesResponse
	err := c.do(ctx, http.MethodGet, path, nil, &out)
	return out, err
}

// ErrStop, returned by a Changes handler, ends the loop without an error.
var ErrStop = errors.New("stop")

// Changes follows the feed from req.Since until ctx ends or a handler
// returns an error: each page of changes goes to onChanges with the cursor
// after it (keep it to resume), and a reset to onReset with the fresh cursor
// (the history the old cursor pointed into is gone: list the tree again, then
// go on; nil onReset makes a reset an error). Pages are long polls of
// req.Timeout (30 s when 0). It returns the last cursor handled: a handler
// returning ErrStop has handled its page, any other error has not.
func (c *Client) Changes(ctx context.Context, req ChangesRequest, onChanges func(cs []Change, cursor string) error, onReset func(cursor string) error) (string, error) {
	if req.Timeout <= 0 {
		req.Timeout = 30 * time.Second
	}
	if req.Since == "" {
		r, err := c.ChangesOnce(ctx, ChangesRequest{})
		if err != nil {
			return "", err
		}
		req.Since = r.Cursor
	}
	for {
		r, err := c.ChangesOnce(ctx, req)
		if err != nil {
			if ctx.Err() != nil {
				return req.Since, nil
			}
			return req.Since, err
		}
		if r.Reset {
			if onReset == nil {
				return req.Since, fmt.Errorf("semfs changes: cursor %s is no longer in the daemon's history (reset to %s)", req.Since, r.Cursor)
			}
			if err := onReset(r.Cursor); err != nil {
				return stopped(req.Since, r.Cursor, err)
			}
		} else if len(r.Changes) > 0 {
			if err := onChanges(r.Changes, r.Cursor); err != nil {
				return stopped(req.Since, r.Cursor, err)
			}
		}
		req.Since = r.Cursor
	}
}

// stopped is Changes's answer when a handler returned err: ErrStop means the
// page was handled (its cursor is the one to keep), any other error that it
// was not.
func stopped(before, after string, err error) (string, error) {
	if errors.Is(err, ErrStop) {
		return after, nil
	}
	return before, err
}
