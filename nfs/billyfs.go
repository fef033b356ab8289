package nfs

import (
	"encoding/binary"
	"io/fs"
	"os"
	"strings"
	"syscall"
	"time"

	billy "github.com/go-git/go-billy/v5"
	"github.com/semfs/semfs/server"
)

// billyFS is one mount app of a connection: what go-nfs's MOUNT hands back
// (a billy.Filesystem, whose methods all refuse: go-nfs asks it nothing), and
// what a handle resolves to (resolveHandle), whose app a call's identity
// carries (call.ctx).
type billyFS struct {
	app   string
	appID uint32
	// mountRoot is the directory a MOUNT of a subdirectory named ("" for the
	// export's root); only ToHandle's answer for the MOUNT reply reads it.
	mountRoot string
}

// billyFS is no billy.Change: go-nfs changes attributes only in the
// procedures the adapter answers itself (connHandler.Change says so).
var _ billy.Filesystem = (*billyFS)(nil)

// identity is what the call's AUTH_UNIX credentials say, mounted as app.
func identity(r *request, app string) server.Identity {
	return server.Identity{MountApp: app, UID: r.uid, HasUID: r.hasUID, GID: r.gid, HasGID: r.hasUID,
		Groups: r.gids[:r.ngids:r.ngids], Proto: "nfs"}
}

func (b *billyFS) Join(elem ...string) string { return strings.Join(elem, "/") }

// create makes (or, UNCHECKED, opens) the regular file at core path p for
// CREATE, as the caller, and returns its descriptor, adopted by the cache;
// the caller releases it. An EXCLUSIVE create keeps the client's verifier
// in the file's times, and a retransmitted one succeeds (RFC 1813 3.3.8).
func (h *call) create(b *billyFS, p string) (*fdEntry, error) {
	// Every cached attribute may be stale once the file is made (its directory's
	// first); the new file's own are cached again below, from its descriptor.
	h.invalidate()
	r := h.r
	ctx := h.ctx(b)
	excl := r.createHow != createUnchecked
	sf, created, err := h.s.fsys.Create(ctx, p, 0o644, excl)
	if err != nil && r.createHow == createExclusive && server.KindOf(err) == server.KindExists {
		// A retransmitted EXCLUSIVE create succeeds if the file carries its
		// verifier.
		if a, lerr := h.s.fsys.Lstat(ctx, p); lerr == nil && a.Mode.IsRegular() && verfMatches(a, r.verf) {
			sf, _, err = h.s.fsys.Create(ctx, p, 0, false)
		}
	}
	if err != nil {
		return nil, pathError(r, "create", p, err)
	}
	if created && r.createHow == createExclusive {
		at, mt := verfTimes(r.verf)
		if _, err := h.s.fsys.SetAttr(ctx, p, server.SetAttr{Atime: &at, Mtime: &mt, OfCreate: true}); err != nil {
			sf.Close()
			return nil, pathError(r, "create", p, err)
		}
	}
	var ino uint64
	a, ok := sf.Created()
	if !ok || r.createHow == createExclusive {
		a, err = sf.Stat() // EXCLUSIVE set the times since
	}
	if err == nil {
		ino = a.Ino
		// Read after the create's last change to the file (owner, durable
		// record, EXCLUSIVE's times): the reply's handle and attributes are
		// of this file, and need no path lookup of it.
		h.remember(p, a)
		if created {
			h.fresh = ino
		}
	}
	r.fail(0)
	return h.s.fds.adopt(p, ino, sf), nil
}

// verfTimes stores an EXCLUSIVE create's verifier in the new file's atime and
// mtime seconds, as Linux's nfsd does; the client's following SETATTR replaces
// them with real times.
func verfTimes(v [8]byte) (atime, mtime time.Time) {
	return time.Unix(int64(binary.BigEndian.Uint32(v[:4])), 0), time.Unix(int64(binary.BigEndian.Uint32(v[4:])), 0)
}

func verfMatches(a server.Attr, v [8]byte) bool {
	at, mt := verfTimes(v)
	return a.Atime.Unix() == at.Unix() && a.Mtime.Unix() == mt.Unix()
}

// The billy methods refuse: go-nfs answers only MOUNT, which asks the file
// system for nothing; every NFS procedure is the adapter's (dispatch.go).
func (b *billyFS) notHere(op, name string) error {
	return &fs.PathError{Op: op, Path: "/" + name, Err: syscall.ENOTSUP}
}

func (b *billyFS) Create(name string) (billy.File, error) { return nil, b.notHere("create", name) }
func (b *billyFS) Open(name string) (billy.File, error)   { return nil, b.notHere("open", name) }
func (b *billyFS) OpenFile(name string, flag int, perm os.FileMode) (billy.File, error) {
	return nil, b.notHere("open", name)
}
func (b *billyFS) Stat(name string) (os.FileInfo, error)  { return nil, b.notHere("stat", name) }
func (b *billyFS) Lstat(name string) (os.FileInfo, error) { return nil, b.notHere("lstat", name) }
func (b *billyFS) Rename(oldName, newName string) error   { return b.notHere("rename", oldName) }
func (b *billyFS) Remove(name string) error               { return b.notHere("remove", name) }
func (b *billyFS) TempFile(dir, prefix string) (billy.File, error) {
	return nil, b.notHere("tempfile", dir)
}
func (b *billyFS) ReadDir(name string) ([]os.FileInfo, error)   { return nil, b.notHere("readdir", name) }
func (b *billyFS) MkdirAll(name string, perm os.FileMode) error { return b.notHere("mkdir", name) }
func (b *billyFS) Symlink(target, link string) error            { return b.notHere("symlink", link) }
func (b *billyFS) Readlink(link string) (string, error)         { return "", b.notHere("readlink", link) }
func (b *billyFS) Chroot(path string) (billy.Filesystem, error) {
	return nil, b.notHere("chroot", path)
}
func (b *billyFS) Root() string { return "/" }
