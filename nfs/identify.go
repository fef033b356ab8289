package nfs

import (
	"context"

	"github.com/semfs/semfs/server"
)

// inodeID is which file a core path names right now.
type inodeID struct {
	ino   uint64
	gen   uint64 // birth time in ns; 0 where the filesystem has none
	isDir bool
	nlink uint32
}

// identify lstats core path p through the core (never following a final
// symlink) and returns its inode and generation.
func (s *Server) identify(p string) (inodeID, error) {
	a, err := s.fsys.Lstat(context.Background(), p)
	if err != nil {
		return inodeID{}, err
	}
	return idOf(a), nil
}

func idOf(a server.Attr) inodeID {
	id := inodeID{ino: a.Ino, isDir: a.IsDir(), nlink: a.Nlink}
	if !a.Btime.IsZero() {
		id.gen = uint64(a.Btime.UnixNano())
		if id.gen == 0 {
			id.gen = 1
		}
	}
	return id
}

// lstat is Lstat with a cache for the duration of the call (the handler's
// attrs, emptied by newCall): an answer may stat the same path more than once
// (the handle's resolution, then the reply's attributes). Mutations in the
// call clear it (invalidate). A call answered inline (h.inline) stats raw
// (server.FS.LstatInline), as 9P's shim does: the same containment and
// result, without telling the Go scheduler.
func (h *call) lstat(p string) (server.Attr, error) {
	if h.hidden(p) {
		return server.Attr{}, errHidden("lstat", p)
	}
	if a, ok := h.attrs[p]; ok {
		return a, nil
	}
	var a server.Attr
	var err error
	if h.inline {
		a, err = h.s.fsys.LstatInline(context.Background(), p)
	} else {
		a, err = h.s.fsys.Lstat(context.Background(), p)
	}
	if err == nil {
		h.attrs[p] = a
	}
	return a, err
}

// invalidate forgets the call's cached attributes after a change.
func (h *connHandler) invalidate() { clear(h.attrs) }

// remember caches a for p for the rest of the call, as a lookup of p would
// have: for attributes the call has just read from the file's own descriptor
// after its last change (a new file's), so that the handle and the post-op
// attributes that follow need no second path lookup of the same file.
func (h *call) remember(p string, a server.Attr) { h.attrs[p] = a }
