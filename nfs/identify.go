package nfs

import (
	"github.com/semfs/semfs/server"
	"golang.org/x/sys/unix"
)

// identifier tells which file a core path names right now: its inode number and
// generation (birth time). It is the one place nfs/ reads the backing directory
// without server.FS, because server.Attr has no birth time yet (see the report to
// the lead: with Attr.Btime this becomes server.FS.Lstat).
//
// Containment: paths are resolved under a descriptor of the backing directory with
// openat2(RESOLVE_BENEATH|RESOLVE_NO_MAGICLINKS), the last component with
// AT_SYMLINK_NOFOLLOW; it only ever stats.
type identifier struct {
	root int // O_PATH descriptor of the backing directory
}

func newIdentifier(dir string) (*identifier, error) {
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, server.E("open backing directory", server.KindOf(err), "", err)
	}
	return &identifier{root: fd}, nil
}

func (id *identifier) close() { unix.Close(id.root) }

type inodeID struct {
	ino   uint64
	gen   uint64
	isDir bool
	nlink uint32
}

// identify stats core path p without following a final symlink.
func (id *identifier) identify(p string) (inodeID, error) {
	var sx unix.Statx_t
	const mask = unix.STATX_TYPE | unix.STATX_INO | unix.STATX_NLINK | unix.STATX_BTIME
	var err error
	if p == "" {
		err = unix.Statx(id.root, "", unix.AT_EMPTY_PATH|unix.AT_SYMLINK_NOFOLLOW, mask, &sx)
	} else {
		dir, name := server.Split(p)
		dfd := id.root
		if dir != "" {
			dfd, err = unix.Openat2(id.root, dir, &unix.OpenHow{
				Flags:   unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC,
				Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS,
			})
			if err != nil {
				return inodeID{}, server.E("lstat", server.KindOf(err), p, err)
			}
			defer unix.Close(dfd)
		}
		err = unix.Statx(dfd, name, unix.AT_SYMLINK_NOFOLLOW, mask, &sx)
	}
	if err != nil {
		return inodeID{}, server.E("lstat", server.KindOf(err), p, err)
	}
	out := inodeID{ino: sx.Ino, isDir: sx.Mode&unix.S_IFMT == unix.S_IFDIR, nlink: sx.Nlink}
	if sx.Mask&unix.STATX_BTIME != 0 {
		out.gen = uint64(sx.Btime.Sec)*1e9 + uint64(sx.Btime.Nsec)
		if out.gen == 0 {
			out.gen = 1
		}
	}
	return out, nil
}
