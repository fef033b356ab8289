package nfs

import (
	"context"
	"encoding/binary"
	"io/fs"
	"os"
	"strings"
	"time"

	billy "github.com/go-git/go-billy/v5"
	"github.com/semfs/semfs/server"
	gonfs "github.com/willscott/go-nfs"
)

// billyFS is the billy view go-nfs works through: one per connection and mount
// app. Every method turns the path go-nfs built into a core path (server.CleanPath
// refuses ".."), calls the core with the call's identity (the handle's app, the
// AUTH_UNIX uid the record stream saw) and returns core errors as *fs.PathError
// with the errno toNFS gives, recording the exact NFS status for the reply.
//
// Paths are never followed: Stat is Lstat, so go-nfs's checks ("is the target a
// directory", "is it a regular file") see a symlink as a symlink and refuse it.
//
// Called only from its connection's serving goroutine (see connHandler).
type billyFS struct {
	h     *connHandler
	app   string
	appID uint32
	// mountRoot is the directory a MOUNT of a subdirectory named ("" for the
	// export's root); only ToHandle's answer for the MOUNT reply reads it.
	mountRoot string
}

var (
	_ billy.Filesystem = (*billyFS)(nil)
	_ billy.Change     = (*billyFS)(nil)
	_ gonfs.UnixChange = (*billyFS)(nil)
)

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

// inoOf returns the inode of p if the call's handle resolved to it, else 0.
func (b *billyFS) inoOf(p string) uint64 {
	if b.h.resolvedFor == b.req() && b.h.resolved == p {
		return b.h.resolvedID.ino
	}
	if a, err := b.h.lstat(p); err == nil {
		return a.Ino
	}
	return 0
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

func (b *billyFS) Open(name string) (billy.File, error) { return b.OpenFile(name, os.O_RDONLY, 0) }

// OpenFile opens an existing regular file through the descriptor cache: only
// go-nfs's attribute setting does, for a size (see billyFile).
func (b *billyFS) OpenFile(name string, flag int, perm os.FileMode) (f billy.File, err error) {
	defer b.h.guard("open", &err)
	p, err := b.begin("open", name)
	if err != nil {
		return nil, err
	}
	if flag&os.O_CREATE != 0 {
		return b.Create(name)
	}
	write := flag&(os.O_WRONLY|os.O_RDWR) != 0
	e, err := b.h.s.fds.acquire(b.ctx(), p, b.inoOf(p), write)
	if err != nil {
		return nil, b.done("open", p, err)
	}
	return &billyFile{b: b, e: e, p: p}, b.done("open", p, nil)
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
	if r := b.req(); r.probesExistence() {
		// The name MKDIR, SYMLINK or LINK makes exists: only a caller who
		// may search its directory learns that (exist.go).
		dir, _ := server.Split(p)
		if err := b.h.searchBeforeExist(r, b, dir); err != nil {
			return nil, err
		}
	}
	err = b.done("lstat", p, nil)
	_, base := server.Split(p)
	return newFileInfo(base, a), err
}

func (b *billyFS) Rename(oldName, newName string) (err error) {
	defer b.h.guard("rename", &err)
	defer b.h.invalidate()
	op, err := b.begin("rename", oldName)
	if err != nil {
		return err
	}
	np, err := b.begin("rename", newName)
	if err != nil {
		return err
	}
	s := b.h.s
	if err := s.fsys.Rename(b.ctx(), op, np); err != nil {
		return b.done("rename", op, err)
	}
	s.fds.evict(op)
	s.fds.evict(np)
	s.recordPlace(np)
	return b.done("rename", op, nil)
}

// Remove serves REMOVE and RMDIR (go-nfs calls it for both).
func (b *billyFS) Remove(name string) (err error) {
	defer b.h.guard("remove", &err)
	defer b.h.invalidate()
	p, err := b.begin("remove", name)
	if err != nil {
		return err
	}
	s := b.h.s
	a, idErr := b.h.lstat(p)
	id := idOf(a)
	if err := s.fsys.Remove(b.ctx(), p, b.req().proc == procRmdir); err != nil {
		return b.done("remove", p, err)
	}
	s.fds.evict(p)
	if idErr == nil && (id.isDir || id.nlink <= 1) {
		s.hm.del(id.ino)
	}
	return b.done("remove", p, nil)
}

func (b *billyFS) TempFile(dir, prefix string) (billy.File, error) {
	return nil, b.done("tempfile", dir, server.E("tempfile", server.KindNotSupported, dir, nil))
}

func (b *billyFS) ReadDir(name string) (infos []os.FileInfo, err error) {
	defer b.h.guard("readdir", &err)
	p, err := b.begin("readdir", name)
	if err != nil {
		return nil, err
	}
	infos, err = b.h.s.readDir(b.ctx(), p)
	b.req().sawAll(infos)
	return infos, b.done("readdir", p, err)
}

// MkdirAll creates one directory: go-nfs checked that the parent exists.
func (b *billyFS) MkdirAll(name string, perm os.FileMode) (err error) {
	defer b.h.guard("mkdir", &err)
	defer b.h.invalidate()
	p, err := b.begin("mkdir", name)
	if err != nil {
		return err
	}
	if perm == 755 {
		perm = 0o755 // go-nfs's default when the client sets no mode is decimal 755
	}
	perm &= fs.ModePerm
	if r := b.req(); r.proc == procMkdir && r.hasMode {
		perm = server.PermOf(r.mkdirMode) // with the sticky bit go-nfs drops
	}
	_, err = b.h.s.fsys.Mkdir(b.ctx(), p, perm)
	return b.done("mkdir", p, err)
}

// Symlink stores target verbatim; the server never resolves it.
func (b *billyFS) Symlink(target, link string) (err error) {
	defer b.h.guard("symlink", &err)
	defer b.h.invalidate()
	p, err := b.begin("symlink", link)
	if err != nil {
		return err
	}
	_, err = b.h.s.fsys.Symlink(b.ctx(), target, p)
	return b.done("symlink", p, err)
}

func (b *billyFS) Readlink(link string) (t string, err error) {
	defer b.h.guard("readlink", &err)
	p, err := b.begin("readlink", link)
	if err != nil {
		return "", err
	}
	t, err = b.h.s.fsys.Readlink(b.ctx(), p)
	return t, b.done("readlink", p, err)
}

func (b *billyFS) Chroot(path string) (billy.Filesystem, error) {
	return nil, b.done("chroot", path, server.E("chroot", server.KindNotSupported, path, nil))
}

func (b *billyFS) Root() string { return "/" }

func (b *billyFS) setAttr(op, name string, sa server.SetAttr) (err error) {
	p, err := b.begin(op, name)
	if err != nil {
		return err
	}
	_, err = b.h.s.fsys.SetAttr(b.ctx(), p, sa)
	return b.done(op, p, err)
}

func (b *billyFS) Chmod(name string, mode os.FileMode) (err error) {
	defer b.h.guard("chmod", &err)
	defer b.h.invalidate()
	if b.req().proc == procSymlink {
		return nil // a symlink's own mode is meaningless on Linux; the create already happened
	}
	// go-nfs passes permission bits only.
	m := mode & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
	return b.setAttr("chmod", name, server.SetAttr{Mode: &m})
}

func (b *billyFS) Lchown(name string, uid, gid int) (err error) {
	defer b.h.guard("chown", &err)
	defer b.h.invalidate()
	u, g := uint32(uid), uint32(gid)
	return b.setAttr("chown", name, server.SetAttr{UID: &u, GID: &g})
}

func (b *billyFS) Chown(name string, uid, gid int) error { return b.Lchown(name, uid, gid) }

// Chtimes applies the times of a MKDIR's or SYMLINK's sattr3 (go-nfs passes
// the current mtime for a time the client left alone).
func (b *billyFS) Chtimes(name string, atime, mtime time.Time) (err error) {
	defer b.h.guard("chtimes", &err)
	defer b.h.invalidate()
	return b.setAttr("chtimes", name, server.SetAttr{Atime: &atime, Mtime: &mtime})
}

// Link serves LINK. The record stream rewrote the call so that target carries the
// source file's handle (see parseCall); anything else is refused.
func (b *billyFS) Link(target, link string) (err error) {
	defer b.h.guard("link", &err)
	defer b.h.invalidate()
	p, err := b.begin("link", link)
	if err != nil {
		return err
	}
	if !b.req().link {
		return b.done("link", p, server.E("link", server.KindInvalid, p, nil))
	}
	fhd, err := decodeHandle(b.h.s.hm.macs, []byte(target))
	if err != nil {
		b.req().fail(nfs3ErrStale)
		return &fs.PathError{Op: "link", Path: "/" + p, Err: err}
	}
	src, _, err := b.h.s.resolve(fhd, b.h.lstat)
	if err != nil {
		return b.done("link", p, err)
	}
	_, err = b.h.s.fsys.Link(b.ctx(), src, p)
	return b.done("link", p, err)
}

func (b *billyFS) Mkfifo(name string, mode uint32) (err error) {
	defer b.h.guard("mknod", &err)
	defer b.h.invalidate()
	p, err := b.begin("mknod", name)
	if err != nil {
		return err
	}
	_, err = b.h.s.fsys.Mkfifo(b.ctx(), p, fs.FileMode(mode)&fs.ModePerm)
	return b.done("mknod", p, err)
}

// Mknod and Socket are never called: MKNOD is answered in the record stream
// (ownMknod, setattr.go), since go-nfs made the handle before the node.
func (b *billyFS) Mknod(name string, mode, major, minor uint32) error {
	return b.done("mknod", name, server.E("mknod", server.KindNotSupported, name, nil))
}

func (b *billyFS) Socket(name string) error {
	return b.done("mknod", name, server.E("mknod", server.KindNotSupported, name, nil))
}
