package nfs

import (
	"context"
	"io/fs"
	"os"

	"github.com/semfs/semfs/server"
)

// resolve finds the current core path of the file a handle names: the path the
// handle map rebuilds, verified by a stat that must show the same inode and
// generation. If the file is no longer there (renamed by another front end while
// nobody told us, or the map lost its last second in a crash), the directory it
// was last seen in is scanned for the inode; otherwise the handle is stale.
func (s *Server) resolve(h fileHandle, lstat func(string) (server.Attr, error)) (string, inodeID, error) {
	match := func(id inodeID) bool {
		return id.ino == h.ino && (h.gen == 0 || id.gen == 0 || id.gen == h.gen)
	}
	p, n, ok := s.hm.path(h.ino)
	if ok {
		if a, err := lstat(p); err == nil && match(idOf(a)) {
			return p, idOf(a), nil
		}
		if n.parent != 0 {
			if dir, _, ok := s.hm.path(n.parent); ok {
				if ents, err := s.fsys.ReadDir(context.Background(), dir); err == nil {
					for _, e := range ents {
						if e.Attr.Ino != h.ino {
							continue
						}
						cand := server.Join(dir, e.Name)
						if id := idOf(e.Attr); match(id) {
							_ = s.hm.put(h.ino, node{parent: n.parent, gen: id.gen, name: e.Name})
							return cand, id, nil
						}
					}
				}
			}
		}
	} else if a, err := lstat(""); err == nil && match(idOf(a)) {
		id := idOf(a)
		// The root's node was never recorded (or was lost): it needs no map.
		_ = s.hm.put(h.ino, node{gen: id.gen})
		return "", id, nil
	}
	return "", inodeID{}, server.E("resolve", server.KindStale, p, nil)
}

// commit makes everything written to the file at p durable (COMMIT).
func (s *Server) commit(ctx context.Context, p string, id inodeID) error {
	_, _, err := s.commitStat(ctx, p, id)
	return err
}

// commitStat is commit, and the file's attributes after the sync when they
// come cheap (ok): from the descriptor it synced (an fstat instead of a path
// lookup, statx and close: the file a COMMIT names is nearly always open in the
// fd cache, written just before).
func (s *Server) commitStat(ctx context.Context, p string, id inodeID) (a server.Attr, ok bool, err error) {
	if id.isDir {
		return a, false, nil
	}
	if e := s.fds.lookup(p, id.ino); e != nil {
		defer s.fds.release(e)
		e.dirty.Store(false)
		if err := e.f.Sync(); err != nil {
			e.dirty.Store(true)
			return a, false, err
		}
		a, err := e.f.Stat()
		return a, err == nil, nil
	}
	// Opened as the daemon: an fsync makes nothing readable, and a caller
	// may write a file it cannot read (nfsd asks COMMIT for no read access).
	f, err := s.fsys.Open(context.Background(), p, os.O_RDONLY)
	if err != nil {
		if k := server.KindOf(err); k == server.KindInvalid || k == server.KindIsDir {
			return a, false, nil // not a regular file: nothing to flush
		}
		return a, false, err
	}
	defer f.Close()
	return a, false, f.Sync()
}

// readDir lists core directory p as go-nfs wants it, sorted by name.
func (s *Server) readDir(ctx context.Context, p string) ([]fs.FileInfo, error) {
	ents, err := s.fsys.ReadDir(ctx, p)
	if err != nil {
		return nil, err
	}
	out := make([]fs.FileInfo, len(ents))
	for i, e := range ents {
		out[i] = newFileInfo(e.Name, e.Attr)
	}
	return out, nil
}

// maybeHold is the test hook that holds a call mid-way (see Server.hold).
func (s *Server) maybeHold(op string) {
	if f, _ := s.hold.Load().(func(string)); f != nil {
		f(op)
	}
}

// maybePanic is the test hook that proves panics are contained.
func (s *Server) maybePanic(op string) {
	if v, _ := s.panicOp.Load().(string); v != "" && v == op {
		panic("nfs test: injected panic in " + op)
	}
}
