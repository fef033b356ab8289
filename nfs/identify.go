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
