package meta

import (
	"context"
	"time"

	"github.com/semfs/semfs/server"
)

// changesName is the changes file's name in the tree's root.
const changesName = "changes"

// ChangesFileEvents is how many of the newest events .semfs/changes holds.
const ChangesFileEvents = 1000

// ChangesFunc gives .semfs/changes for the caller in ctx: up to n of the
// newest events it may see, as JSON lines, newest last, and the time of
// the newest event in the whole history (the file's mtime, so that a kernel
// client's cache sees it change; zero when there is none).
type ChangesFunc func(ctx context.Context, n int) (content []byte, newest time.Time)

// changesAttr is the changes file's attributes: its size now and the newest
// event's time.
func (t *Tree) changesAttr(ctx context.Context, p string) server.Attr {
	_ = t.flush(ctx, p) // every change made before the look is in the history (best effort)
	b, newest := t.changes(ctx, ChangesFileEvents)
	a := t.attr(p, roMode, int64(len(b)))
	if newest.After(a.Mtime) {
		a.Mtime, a.Ctime = newest, newest
	}
	return a
}

// changes is the file's content, read once per open file (a 9P fid, one
// NFS READ), so that a reader reading it in pieces gets one consistent
// text while events keep coming. Precondition: f is the changes file.
func (f *file) changes() []byte {
	f.snapOnce.Do(func() {
		_ = f.t.flush(f.ctx, f.p)
		f.snap, _ = f.t.changes(f.ctx, ChangesFileEvents)
	})
	return f.snap
}
