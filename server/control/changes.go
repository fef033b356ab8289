package control

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/semfs/semfs/server"
	"github.com/semfs/semfs/server/feed"
)

// serveChanges answers GET /v1/changes?since=&timeout=&limit=&paths= (docs/changes.md):
// the changes after since, in rev order, as the caller may see them; with
// none yet, it waits up to timeout for one (a long poll, parked on the log's
// wake channel, no thread held). With Accept: text/event-stream it streams
// them as server-sent events instead, resuming at Last-Event-ID.
func (s *Server) serveChanges(w http.ResponseWriter, r *http.Request) {
	l := s.opt.Changes
	q := r.URL.Query()
	limit := DefaultChangesLimit
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > MaxChangesLimit {
			writeError(w, http.StatusBadRequest, CodeInvalid, fmt.Sprintf("limit must be 1 to %d", MaxChangesLimit))
			return
		}
		limit = n
	}
	var timeout time.Duration
	if v := q.Get("timeout"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			// A bare number is seconds, as Syncthing's and Dropbox's long polls take it.
			n, nerr := strconv.Atoi(v)
			d, err = time.Duration(n)*time.Second, nerr
		}
		if err != nil || d < 0 || d > MaxChangesTimeout*time.Second {
			writeError(w, http.StatusBadRequest, CodeInvalid, fmt.Sprintf("timeout must be a duration from 0 to %ds (e.g. 30s)", MaxChangesTimeout))
			return
		}
		timeout = d
	}
	globs, err := feed.ParseGlobs(q["paths"])
	if err != nil {
		writeError(w, http.StatusBadRequest, CodeInvalid, err.Error())
		return
	}
	stream := strings.Contains(r.Header.Get("Accept"), "text/event-stream")
	sinceText := q.Get("since")
	if stream && sinceText == "" {
		sinceText = r.Header.Get("Last-Event-ID")
	}
	var since feed.Cursor
	if sinceText != "" {
		if since, err = feed.ParseCursor(sinceText); err != nil {
			writeError(w, http.StatusBadRequest, CodeInvalid, "since: "+err.Error())
			return
		}
	}
	// The changes made before the request are in the history (method's
	// Sync has applied them; the log writes them on its own goroutine).
	if err := l.Settle(r.Context()); err != nil {
		writeError(w, http.StatusServiceUnavailable, CodeUnavailable, "waiting for the change log: "+err.Error())
		return
	}
	if sinceText == "" {
		// After Settle: a starting point is after every change made
		// before the request, which the caller must not read again.
		since = l.Head()
	}
	var view feed.View
	if s.opt.ChangesView != nil {
		view = s.opt.ChangesView(s.callerContext(r))
	} else {
		view = feed.SearchView(s.callerContext(r), s.opt.FS)
	}
	// Under a policy the caller's hidden paths are absent from the feed too
	// (the operator, whom rules leaves nil, sees them).
	if _, rules := s.rules(r); rules != nil {
		view = feed.Hiding(view, rules.Hidden)
	}
	keep := func(e feed.Event) (feed.Event, bool) {
		e, ok := feed.See(view, e)
		return e, ok && globs.Match(e)
	}
	// Long polls end when the server shuts down, not when they time out.
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	defer context.AfterFunc(s.stopping, cancel)()
	if stream {
		s.streamChanges(ctx, w, since, limit, timeout, keep)
		return
	}
	if sinceText == "" {
		writeJSON(w, http.StatusOK, ChangesResponse{Cursor: since.String(), Changes: []Change{}})
		return
	}
	deadline := time.Now().Add(timeout)
	for {
		p := l.Read(since, limit, keep)
		if p.Reset || len(p.Events) > 0 || p.More || !time.Now().Before(deadline) {
			writeChanges(w, p)
			return
		}
		since = p.Cursor // past events the caller does not see
		wctx, wcancel := context.WithDeadline(ctx, deadline)
		more := l.Wait(wctx, since)
		wcancel()
		if !more {
			writeChanges(w, feed.Page{Cursor: since})
			return
		}
	}
}

func writeChanges(w http.ResponseWriter, p feed.Page) {
	out := ChangesResponse{Cursor: p.Cursor.String(), Changes: p.Events, Reset: p.Reset, More: p.More}
	if out.Changes == nil {
		out.Changes = []Change{}
	}
	writeJSON(w, http.StatusOK, out)
}

// streamChanges is the server-sent events form: each event's id is the
// cursor after it; a reset is an event named "reset" whose id is the fresh
// cursor; a comment line every heartbeat (timeout, else 30 s) keeps proxies
// and the client's read deadline content. It ends when the client goes or
// the daemon stops.
func (s *Server) streamChanges(ctx context.Context, w http.ResponseWriter, since feed.Cursor, limit int, heartbeat time.Duration, keep func(feed.Event) (feed.Event, bool)) {
	l := s.opt.Changes
	rc := http.NewResponseController(w) // reaches the connection through observe's writer
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	if heartbeat <= 0 {
		heartbeat = 30 * time.Second
	}
	fmt.Fprintf(w, "retry: 1000\n\n")
	for {
		p := l.Read(since, limit, keep)
		if p.Reset {
			b, _ := json.Marshal(ChangesResponse{Cursor: p.Cursor.String(), Changes: []Change{}, Reset: true})
			fmt.Fprintf(w, "event: reset\nid: %s\ndata: %s\n\n", p.Cursor, b)
		}
		for _, e := range p.Events {
			b, _ := json.Marshal(e)
			fmt.Fprintf(w, "id: %s\ndata: %s\n\n", feed.Cursor{Epoch: p.Cursor.Epoch, Rev: e.Rev}, b)
		}
		if err := rc.Flush(); err != nil {
			return
		}
		since = p.Cursor
		if p.More {
			continue
		}
		wctx, wcancel := context.WithTimeout(ctx, heartbeat)
		more := l.Wait(wctx, since)
		wcancel()
		if ctx.Err() != nil {
			return
		}
		if !more {
			if _, err := fmt.Fprintf(w, ": %s\n\n", since); err != nil {
				return
			}
			if err := rc.Flush(); err != nil {
				return
			}
		}
	}
}

// callerContext is r's context carrying the socket peer as an Identity, so
// that the core decides what it may see as it would for that uid (root mode;
// a daemon that does not check its callers shows everything).
func (s *Server) callerContext(r *http.Request) context.Context {
	ctx := r.Context()
	p, _ := ctx.Value(peerKey{}).(peer)
	id := server.Identity{Proto: "control"}
	if p.ok {
		id.UID, id.HasUID, id.GID, id.HasGID = p.uid, true, p.gid, true
	}
	cctx := server.WithIdentity(ctx, id)
	if p.ok && s.opt.FS != nil && s.opt.FS.ChecksPermissions(cctx) {
		if _, groups, ok := server.UserGroups(p.uid); ok {
			id.Groups = groups
			cctx = server.WithIdentity(ctx, id)
		}
	}
	return cctx
}

// CallerUID is the control socket peer's uid in a request's context (the
// daemon attributes tags to the app registered for it).
func CallerUID(ctx context.Context) (uint32, bool) {
	p, ok := ctx.Value(peerKey{}).(peer)
	return p.uid, ok && p.ok
}
