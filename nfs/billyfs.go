package nfs

import (
	"context"
	"encoding/binary"
	"os"
	"strings"
	"time"

	billy "github.com/go-git/go-billy/v5"
	"github.com/semfs/semfs/server"
)

// billyFS is the file system of one connection and mount app: what go-nfs's
// MOUNT hands back, and what a handle resolves to (FromHandle) for the
// adapter's own answers, which take the call's identity from it (ctx) and
// make files through it (Create). go-nfs answers no NFS procedure any more,
// so the billy methods it alone called refuse (notHere); Lstat and Create
// remain, for CREATE (fastCreate). Core errors come back as *fs.PathError
// with the errno toNFS gives, the exact NFS status recorded on the call.
//
// Paths are never followed: Stat is Lstat.
//
// Called only from the goroutine serving the call (see connHandler).
type billyFS struct {
	h     *connHandler
	app   string
	appID uint32
	// mountRoot is the directory a MOUNT of a subdirectory named ("" for the
	// export's root); only ToHandle's answer for the MOUNT reply reads it.
	mountRoot string
}

// billyFS is no billy.Change: go-nfs changes attributes only in the
// procedures the adapter answers itself (connHandler.Change says so).
var _ billy.Filesystem = (*billyFS)(nil)

func (b *billyFS) req() *request { return b.h.current() }

// ctx carries the identity of the call being served.
func (b *billyFS) ctx() context.Context {
	return server.WithIdentity(context.Background(), identity(b.req(), b.app))
}

// identity is what the call's AUTH_UNIX credentials say, mounted as app.
func identity(r *request, app string) server.Identity {
	return server.Identity{MountApp: app, UID: r.uid, HasUID: r.hasUID, GID: r.gid, HasGID: r.hasUID,
		Groups: r.gids[:r.ngids:r.ngids], Proto: "nfs"}
}

// begin starts a billy call: panics are recovered by the deferred guard, and the
// call's result decides the reply's status (done).
func (b *billyFS) begin(op, name string) (string, error) {
	b.h.s.maybePanic(op)
	p, err := server.CleanTreePath(op, name)
	if err != nil {
		return "", b.done(op, name, err)
	}
	return p, nil
}

// done records the outcome of the latest billy call on the request: go-nfs turns
// the failure of its latest call into the reply, so that call's status is the one
// the reply carries.
func (b *billyFS) done(op, p string, err error) error {
	if err == nil {
		b.req().fail(0)
		return nil
	}
	return pathError(b.req(), op, p, err)
}

func (b *billyFS) Join(elem ...string) string { return strings.Join(elem, "/") }

func (b *billyFS) Create(name string) (f billy.File, err error) {
	defer b.h.guard("create", &err)
	p, err := b.begin("create", name)
	// Every cached attribute may be stale once the file is made (its directory's
	// first); the new file's own are cached again below, from its descriptor.
	b.h.invalidate()
	if err != nil {
		return nil, err
	}
	r := b.req()
	ctx := b.ctx()
	excl := r.proc == procCreate && r.createHow != createUnchecked
	sf, created, err := b.h.s.fsys.Create(ctx, p, 0o644, excl)
	if err != nil && r.proc == procCreate && r.createHow == createExclusive && server.KindOf(err) == server.KindExists {
		// A retransmitted EXCLUSIVE create succeeds if the file carries its
		// verifier (RFC 1813 3.3.8).
		if a, lerr := b.h.s.fsys.Lstat(ctx, p); lerr == nil && a.Mode.IsRegular() && verfMatches(a, r.verf) {
			sf, _, err = b.h.s.fsys.Create(ctx, p, 0, false)
		}
	}
	if err != nil {
		return nil, b.done("create", p, err)
	}
	if created && r.proc == procCreate && r.createHow == createExclusive {
		at, mt := verfTimes(r.verf)
		if _, err := b.h.s.fsys.SetAttr(ctx, p, server.SetAttr{Atime: &at, Mtime: &mt}); err != nil {
			sf.Close()
			return nil, b.done("create", p, err)
		}
	}
	var ino uint64
	a, ok := sf.Created()
	if !ok || r.createHow == createExclusive && r.proc == procCreate {
		a, err = sf.Stat() // EXCLUSIVE set the times since
	}
	if err == nil {
		ino = a.Ino
		// Read after the create's last change to the file (owner, durable
		// record, EXCLUSIVE's times): go-nfs's handle and post-op attributes
		// are of this file, and need no path lookup of it.
		b.h.remember(p, a)
		if created {
			b.h.fresh = freshFile{r: b.req(), ino: ino}
		}
	}
	e := b.h.s.fds.adopt(p, ino, sf)
	return &billyFile{b: b, e: e, p: p}, b.done("create", p, nil)
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

// Open and OpenFile refuse: go-nfs opens files only for READ, WRITE and
// attribute changes, which the adapter answers itself.
func (b *billyFS) Open(name string) (billy.File, error) { return b.OpenFile(name, os.O_RDONLY, 0) }

func (b *billyFS) OpenFile(name string, flag int, perm os.FileMode) (billy.File, error) {
	return nil, b.notHere("open", name)
}

// notHere is the answer of the billy calls go-nfs no longer makes: the
// procedures that made them are the adapter's (fastpath.go, make.go,
// setattr.go, readdir.go).
func (b *billyFS) notHere(op, name string) error {
	return b.done(op, name, server.E(op, server.KindNotSupported, name, nil))
}

func (b *billyFS) Stat(name string) (os.FileInfo, error) { return b.Lstat(name) }

func (b *billyFS) Lstat(name string) (fi os.FileInfo, err error) {
	defer b.h.guard("lstat", &err)
	p, err := b.begin("lstat", name)
	if err != nil {
		return nil, err
	}
	a, err := b.h.lstat(p)
	if err != nil {
		return nil, b.done("lstat", p, err)
	}
	err = b.done("lstat", p, nil)
	_, base := server.Split(p)
	return newFileInfo(base, a), err
}

func (b *billyFS) Rename(oldName, newName string) error { return b.notHere("rename", oldName) }

func (b *billyFS) Remove(name string) error { return b.notHere("remove", name) }

func (b *billyFS) TempFile(dir, prefix string) (billy.File, error) {
	return nil, b.done("tempfile", dir, server.E("tempfile", server.KindNotSupported, dir, nil))
}

func (b *billyFS) ReadDir(name string) ([]os.FileInfo, error) { return nil, b.notHere("readdir", name) }

func (b *billyFS) MkdirAll(name string, perm os.FileMode) error { return b.notHere("mkdir", name) }

func (b *billyFS) Symlink(target, link string) error { return b.notHere("symlink", link) }

func (b *billyFS) Readlink(link string) (string, error) { return "", b.notHere("readlink", link) }

func (b *billyFS) Chroot(path string) (billy.Filesystem, error) {
	return nil, b.done("chroot", path, server.E("chroot", server.KindNotSupported, path, nil))
}

func (b *billyFS) Root() string { return "/" }
