package ninep

import (
	"context"
	"io/fs"
	"math"
	"os"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"github.com/hugelgupf/p9/linux"
	"github.com/hugelgupf/p9/p9"
	"github.com/semfs/semfs/server"
)

// Linux open flags as 9P2000.L carries them (P9_DOTL_*, equal to x86 Linux's).
const (
	dotlExcl    = 0o200
	dotlTrunc   = 0o1000
	atRemoveDir = 0x200 // unlinkat(2) AT_REMOVEDIR
)

// file is one fid's view of the tree: a core path plus the identity of the attach
// it descends from. It holds no descriptor until Open or Create, so a fid that is
// only walked and stat'ed costs nothing on the server; every call goes through
// the core by path, which keeps all access inside the backing directory.
//
// Concurrency follows p9.File's contract; in addition path is guarded by mu
// because Renamed (global guarantee) and Lock/StatFS/Close (no guarantee) may
// overlap, and the open state is published atomically because p9 orders Open
// before ReadAt/WriteAt/Readdir only through locks it takes shared.
type file struct {
	srv  *Server
	conn *conn           // the connection the fid belongs to; nil for direct use (Server.Attacher)
	ctx  context.Context // carries the attach's server.Identity into every core call

	// attachNonce is set only on the transient root p9 hands to Tattach: walking
	// it by an attach token (see conn.go) yields the attach's real root.
	attachNonce string

	// rawMode is the mode of a Tsetattr on this fid as the wire carried it,
	// setuid and setgid included (rawmode.go); 0 when none is pending.
	rawMode atomic.Uint32

	mu   sync.RWMutex
	path string // core path: "" is the root

	// id is the identity (server.Attr.FileID: inode and birth time) of the
	// file the fid was bound to when it was walked or created; 0 when not
	// known (the attach root, which cannot be replaced). Every use of the fid
	// by path checks it (verify): once another client renames the file away
	// and puts another under its name, the fid answers ESTALE, never the other
	// file's data. An opened fid keeps its descriptor, so it reads and writes
	// its own file, as a local open file does. p9's Renamed moves path, not id.
	// Atomic: the shim re-binds a fid p9 walked again for it (fast.go replied).
	id atomic.Uint64

	// kind is the file type when the fid was made (0: not known), as p9 keeps
	// it for its own checks; the shim checks the same (shimfids.go).
	kind p9.FileMode

	open    atomic.Pointer[openFile]
	dirOpen atomic.Bool

	dmu  sync.Mutex
	ents []p9.Dirent // directory snapshot of this open fid, see Readdir
}

// openFile is a regular file opened by Tlopen or Tlcreate.
type openFile struct {
	fl       *server.File
	writable bool         // the descriptor was opened for writing (truncate may use it)
	mode     p9.OpenFlags // the access the client asked for (p9 checks reads and writes against it)
}

var _ p9.File = (*file)(nil)

func (f *file) p() string {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.path
}

// verify says whether a, just read at the fid's path, is still the fid's
// file: ESTALE when another file took its name.
func (f *file) verify(a server.Attr) error {
	if id := f.id.Load(); id != 0 && a.FileID() != id {
		return linux.ESTALE
	}
	return nil
}

// child returns a new fid's file for path p under the same attach. Every file a
// fid p9 holds is made here or by attachRoot, and reported to the connection's
// fast path (fast.go), which learns from it whose fid is whose; the shim's own
// walks (shimfids.go) make theirs unreported.
func (f *file) child(p string, kind p9.FileMode, report bool) *file {
	c := &file{srv: f.srv, conn: f.conn, ctx: f.ctx, path: p, kind: kind}
	if report && f.conn != nil {
		f.conn.made(c)
	}
	return c
}

// guard turns a panic below a p9 handler into EIO for this request, logged with
// its stack, so that one bad request never takes the connection or the daemon down.
func (f *file) guard(op string, err *error) {
	if r := recover(); r != nil {
		f.srv.log.Error("ninep: panic in request; answered EIO", "op", op, "path", f.p(), "panic", r, "stack", string(debug.Stack()))
		*err = linux.EIO
	}
}

// walk resolves names one by one from f. "." and ".." are resolved lexically and
// never above the attach root (p9's server refuses them on the wire; direct
// callers such as p9's conformance suite use them).
//
// A clone (no names) is stat'ed only when the caller wants attributes: p9
// already knows the fid's type, and Linux clones a fid before every open.
// report: the result is for p9 (see child); otherwise it is the shim's, which
// asks the core inline (lstat).
func (f *file) walk(names []string, wantAttr, report bool) ([]p9.QID, *file, server.Attr, error) {
	if f.attachNonce != "" && len(names) == 1 && isAttachToken(names[0]) {
		return f.attachRoot(names[0])
	}
	p := f.p()
	var qids []p9.QID
	var a server.Attr
	var err error
	if len(names) == 0 {
		if !wantAttr {
			c := f.child(p, f.kind, report)
			c.id.Store(f.id.Load())
			return nil, c, a, nil
		}
		if a, err = f.lstat(p, !report); err != nil {
			return nil, nil, a, toErrno(err)
		}
		if err := f.verify(a); err != nil {
			return nil, nil, a, err
		}
		c := f.child(p, kindOf(a), report)
		c.id.Store(f.id.Load())
		return nil, c, a, nil
	}
	for i, name := range names {
		switch name {
		case ".":
		case "..":
			p, _ = server.Split(p)
		default:
			if err := server.CheckName("walk", name); err != nil {
				return nil, nil, a, toErrno(err)
			}
			p = server.Join(p, name)
		}
		if !report && !f.srv.fs.Inline(p) {
			// The shim's walk, in the connection's only reader: a virtual
			// path may run a query, so p9 walks it in a goroutine of its own.
			return nil, nil, a, errNotInline
		}
		switch name {
		case ".", "..":
		default:
			if i == 0 && f.id.Load() != 0 {
				// The walk starts at the fid's directory only if that is
				// still the one the fid was bound to (one statx on the
				// descriptor the lookup opens anyway).
				var dir server.Attr
				if dir, a, err = f.srv.fs.LstatIn(f.ctx, p, !report); err != nil {
					return nil, nil, a, toErrno(err)
				}
				if err := f.verify(dir); err != nil {
					return nil, nil, a, err
				}
				break
			}
		}
		if i > 0 || name == "." || name == ".." || f.id.Load() == 0 {
			if a, err = f.lstat(p, !report); err != nil {
				return nil, nil, a, toErrno(err)
			}
		}
		if i < len(names)-1 && !a.IsDir() {
			return nil, nil, a, linux.ENOTDIR
		}
		qids = append(qids, qidOf(a))
	}
	c := f.child(p, kindOf(a), report)
	if p != "" {
		c.id.Store(a.FileID())
	}
	return qids, c, a, nil
}

// Walk implements p9.File.Walk.
func (f *file) Walk(names []string) (qids []p9.QID, nf p9.File, err error) {
	defer f.guard("walk", &err)
	qids, c, _, err := f.walk(names, false, true)
	if err != nil {
		return nil, nil, err
	}
	return qids, c, nil
}

// WalkGetAttr implements p9.File.WalkGetAttr: p9's server walks with it, and
// answering both from one lstat halves the work of every walk.
func (f *file) WalkGetAttr(names []string) (qids []p9.QID, nf p9.File, mask p9.AttrMask, attr p9.Attr, err error) {
	defer f.guard("walk", &err)
	qids, c, a, err := f.walk(names, true, true)
	if err != nil {
		return nil, nil, p9.AttrMask{}, p9.Attr{}, err
	}
	return qids, c, attrMask, toAttr(a), nil
}

// lstat is the core's Lstat of p; inline for the shim, which answers in the
// connection's only reader (server.FS.LstatInline).
func (f *file) lstat(p string, inline bool) (server.Attr, error) {
	if inline {
		return f.srv.fs.LstatInline(f.ctx, p)
	}
	return f.srv.fs.Lstat(f.ctx, p)
}

// stat returns the fid's attributes; inline as for lstat.
func (f *file) stat(inline bool) (server.Attr, error) {
	if of := f.open.Load(); of != nil {
		// An open file may have been unlinked: fstat still answers.
		if inline {
			return of.fl.StatInline()
		}
		return of.fl.Stat()
	}
	a, err := f.lstat(f.p(), inline)
	if err != nil {
		return a, err
	}
	return a, f.verify(a)
}

// GetAttr implements p9.File.GetAttr.
func (f *file) GetAttr(req p9.AttrMask) (qid p9.QID, mask p9.AttrMask, attr p9.Attr, err error) {
	return f.getAttr(false)
}

// getAttr is GetAttr; inline for the shim (see lstat).
func (f *file) getAttr(inline bool) (qid p9.QID, mask p9.AttrMask, attr p9.Attr, err error) {
	defer f.guard("getattr", &err)
	a, err := f.stat(inline)
	if err != nil {
		return p9.QID{}, p9.AttrMask{}, p9.Attr{}, toErrno(err)
	}
	return qidOf(a), attrMask, toAttr(a), nil
}

// SetAttr implements p9.File.SetAttr. A size change on a fid opened for writing
// goes through its descriptor (so ftruncate works on an unlinked file and counts
// as a write of that file); everything else goes through the core by path, which
// acts on a symlink itself and never on its target.
func (f *file) SetAttr(valid p9.SetAttrMask, attr p9.SetAttr) (err error) {
	defer f.guard("setattr", &err)
	if valid.Permissions {
		attr.Permissions = f.setattrPerm(attr.Permissions)
	}
	s := toSetAttr(valid, attr)
	if of := f.open.Load(); of != nil && of.writable && s.Size != nil {
		if err := of.fl.Truncate(*s.Size); err != nil {
			return toErrno(err)
		}
		s.Size = nil
	}
	if setAttrEmpty(s) {
		return nil
	}
	if f.id.Load() != 0 {
		if _, err := f.stat(false); err != nil {
			return toErrno(err)
		}
	}
	_, err = f.srv.fs.SetAttr(f.ctx, f.p(), s)
	return toErrno(err)
}

// Open implements p9.File.Open. Directories are opened for Readdir only; regular
// files get a core descriptor. O_APPEND is not passed down: Linux's v9fs computes
// append offsets itself, and the core writes at explicit offsets.
func (f *file) Open(mode p9.OpenFlags) (qid p9.QID, iounit uint32, err error) {
	defer f.guard("open", &err)
	if f.conn != nil && f.conn.handoverOpen(f) {
		// The shim's own Tlopen (shimfids.go): f now holds the file the shim
		// opened for this fid.
		st, err := f.stat(false)
		if err != nil {
			return p9.QID{}, 0, toErrno(err)
		}
		return qidOf(st), 0, nil
	}
	p := f.p()
	a, err := f.srv.fs.Lstat(f.ctx, p)
	if err != nil {
		return p9.QID{}, 0, toErrno(err)
	}
	if err := f.verify(a); err != nil {
		return p9.QID{}, 0, err
	}
	if a.IsDir() {
		if mode.Mode() != p9.ReadOnly {
			return p9.QID{}, 0, linux.EISDIR
		}
		// Opening a directory to list it needs read access, as open(2) does
		// (only checked where the core checks callers: a root daemon).
		if err := f.srv.fs.CheckAccessOf(f.ctx, "open", p, a, server.MayRead); err != nil {
			return p9.QID{}, 0, toErrno(err)
		}
		f.dirOpen.Store(true)
		return qidOf(a), 0, nil
	}
	flags := os.O_RDONLY
	switch mode.Mode() {
	case p9.WriteOnly:
		flags = os.O_WRONLY
	case p9.ReadWrite:
		flags = os.O_RDWR
	}
	if mode&dotlTrunc != 0 {
		flags |= os.O_TRUNC
	}
	fl, err := f.srv.fs.Open(f.ctx, p, flags)
	if err != nil {
		return p9.QID{}, 0, toErrno(err)
	}
	st, err := fl.Stat()
	if err == nil {
		err = f.verify(st) // replaced between the lstat and the open
	}
	if err != nil {
		fl.Close()
		return p9.QID{}, 0, toErrno(err)
	}
	f.open.Store(&openFile{fl: fl, writable: flags&(os.O_WRONLY|os.O_RDWR) != 0, mode: mode.Mode()})
	return qidOf(st), 0, nil
}

// ReadAt implements p9.File.ReadAt.
func (f *file) ReadAt(b []byte, off int64) (n int, err error) {
	defer f.guard("read", &err)
	of := f.open.Load()
	if of == nil {
		if f.dirOpen.Load() {
			// read(2) of a directory: EISDIR, as diod answers (differential
			// P3); the listing is Treaddir's.
			return 0, linux.EISDIR
		}
		return 0, linux.EBADF
	}
	n, err = of.fl.ReadAt(b, off)
	if n > 0 {
		return n, nil // a short read is how 9P says end of file
	}
	return 0, toErrno(err)
}

// WriteAt implements p9.File.WriteAt. The data is in the backing file when this
// returns, before p9 sends Rwrite: a client that loses its connection afterwards
// loses nothing it was told was written.
func (f *file) WriteAt(b []byte, off int64) (n int, err error) {
	defer f.guard("write", &err)
	of := f.open.Load()
	if of == nil {
		return 0, linux.EBADF
	}
	n, err = of.fl.WriteAt(b, off)
	return n, toErrno(err)
}

// readCached is ReadAt for the fast path (fast.go), which must not wait for the
// disk: ok=false, nothing read, when the data is not all in the page cache.
func (f *file) readCached(b []byte, off int64) (n int, ok bool, err error) {
	ok = true
	defer f.guard("read", &err)
	of := f.open.Load()
	if of == nil {
		return 0, true, linux.EBADF
	}
	if n, ok, err = of.fl.ReadAtCached(b, off); !ok {
		return 0, false, nil
	}
	if n > 0 {
		return n, true, nil
	}
	return 0, true, toErrno(err)
}

// tryWrite is WriteAt for the fast path, which must not wait for a snapshot:
// ok=false, nothing written, while the core is frozen.
func (f *file) tryWrite(b []byte, off int64) (n int, ok bool, err error) {
	ok = true
	defer f.guard("write", &err)
	of := f.open.Load()
	if of == nil {
		return 0, true, linux.EBADF
	}
	n, ok, err = of.fl.TryWriteAt(b, off)
	return n, ok, toErrno(err)
}

// FSync implements p9.File.FSync. A directory has no core descriptor; namespace
// changes are already on disk when the core reports them, so it succeeds.
func (f *file) FSync() (err error) {
	defer f.guard("fsync", &err)
	if of := f.open.Load(); of != nil {
		return toErrno(of.fl.Sync())
	}
	if f.dirOpen.Load() {
		return nil
	}
	return linux.EBADF
}

// Close implements p9.File.Close (the last reference to the fid is gone: clunk,
// remove, or the connection ending). Closing a written file sends its updatedAt
// to the index at once. A second Close does nothing.
func (f *file) Close() (err error) {
	defer f.guard("clunk", &err)
	f.dmu.Lock()
	f.ents = nil
	f.dmu.Unlock()
	if of := f.open.Swap(nil); of != nil {
		return toErrno(of.fl.Close())
	}
	return nil
}

// tryClose is Close for the shim, which must not wait: ok=false, still open,
// when the file's update cannot be sent at once (server.File.TryClose).
func (f *file) tryClose() (ok bool, err error) {
	ok = true
	defer f.guard("clunk", &err)
	of := f.open.Load()
	if of == nil {
		return true, nil
	}
	if ok, err = of.fl.TryClose(); !ok {
		return false, nil
	}
	f.open.Store(nil)
	return true, toErrno(err)
}

// perm converts the permission bits of a create or setattr request, setuid,
// setgid and sticky included (the kernel decides whether the caller may set
// them, as for a local chmod).
func perm(m p9.FileMode) fs.FileMode {
	p := fs.FileMode(m & 0o777)
	if m&p9.Sticky != 0 {
		p |= fs.ModeSticky
	}
	if m&0o2000 != 0 {
		p |= fs.ModeSetgid
	}
	if m&0o4000 != 0 {
		p |= fs.ModeSetuid
	}
	return p
}

// creating returns f's context with the gid the client asked for (Linux computes
// it, including setgid directories); the core gives a new file to the caller's
// uid and that gid where the caller may choose it, as a local filesystem would.
func (f *file) creating(gid p9.GID) context.Context {
	if !gid.Ok() {
		return f.ctx
	}
	id := server.IdentityFrom(f.ctx)
	id.CreateGID, id.HasCreateGID = uint32(gid), true
	return server.WithIdentity(f.ctx, id)
}

// Create implements p9.File.Create (Tlcreate). Without O_EXCL an existing file is
// opened, as open(2) with O_CREAT does; with O_TRUNC it is then truncated.
//
// A Tlcreate the shim sends p9 to make a fid it created itself known (shimfids.go)
// is answered with that fid's file, already open, and creates nothing.
func (f *file) Create(name string, flags p9.OpenFlags, mode p9.FileMode, _ p9.UID, gid p9.GID) (nf p9.File, qid p9.QID, iounit uint32, err error) {
	defer f.guard("create", &err)
	if f.conn != nil {
		if a := f.conn.handoverCreate(f, name); a != nil {
			st, err := a.stat(false)
			if err != nil {
				return nil, p9.QID{}, 0, toErrno(err)
			}
			return a, qidOf(st), 0, nil
		}
	}
	c, qid, _, err := f.create(name, flags, mode, gid, false)
	if err != nil {
		return nil, p9.QID{}, 0, err
	}
	return c, qid, 0, nil
}

// tryCreate is create for the shim (shimfids.go): a panic below becomes EIO for
// this request, as in every p9.File method.
func (f *file) tryCreate(name string, flags p9.OpenFlags, mode p9.FileMode, gid p9.GID) (nf *file, qid p9.QID, ok bool, err error) {
	ok = true
	defer f.guard("create", &err)
	return f.create(name, flags, mode, gid, true)
}

// create is Create's work. try: for the shim (shimfids.go), which must not wait
// (ok=false, nothing done: see server.FS.TryCreate) and whose fids p9 does not
// hear of (the new file is not reported, see child).
func (f *file) create(name string, flags p9.OpenFlags, mode p9.FileMode, gid p9.GID, try bool) (nf *file, qid p9.QID, ok bool, err error) {
	if err := server.CheckName("create", name); err != nil {
		return nil, p9.QID{}, true, toErrno(err)
	}
	p := server.Join(f.p(), name)
	var fl *server.File
	var created bool
	if try {
		if fl, created, ok, err = f.srv.fs.TryCreate(f.creating(gid), p, perm(mode), flags&dotlExcl != 0); !ok {
			return nil, p9.QID{}, false, nil
		}
	} else {
		fl, created, err = f.srv.fs.Create(f.creating(gid), p, perm(mode), flags&dotlExcl != 0)
	}
	if err != nil {
		return nil, p9.QID{}, true, toErrno(err)
	}
	if !created && flags&dotlTrunc != 0 {
		if err := fl.Truncate(0); err != nil {
			fl.Close()
			return nil, p9.QID{}, true, toErrno(err)
		}
	}
	st, ok := fl.Created() // what the core read after making the file
	if !ok {
		if st, err = fl.Stat(); err != nil {
			fl.Close()
			return nil, p9.QID{}, true, toErrno(err)
		}
	}
	c := f.child(p, p9.ModeRegular, !try)
	c.id.Store(st.FileID())
	c.open.Store(&openFile{fl: fl, writable: true, mode: flags.Mode()})
	return c, qidOf(st), true, nil
}

// Mkdir implements p9.File.Mkdir.
func (f *file) Mkdir(name string, mode p9.FileMode, _ p9.UID, gid p9.GID) (qid p9.QID, err error) {
	defer f.guard("mkdir", &err)
	if err := server.CheckName("mkdir", name); err != nil {
		return p9.QID{}, toErrno(err)
	}
	p := server.Join(f.p(), name)
	a, err := f.srv.fs.Mkdir(f.creating(gid), p, perm(mode))
	if err != nil {
		return p9.QID{}, toErrno(err)
	}
	return qidOf(a), nil
}

// Symlink implements p9.File.Symlink. The target is stored verbatim and never
// resolved by the server.
func (f *file) Symlink(target, name string, _ p9.UID, gid p9.GID) (qid p9.QID, err error) {
	defer f.guard("symlink", &err)
	if err := server.CheckName("symlink", name); err != nil {
		return p9.QID{}, toErrno(err)
	}
	p := server.Join(f.p(), name)
	a, err := f.srv.fs.Symlink(f.creating(gid), target, p)
	if err != nil {
		return p9.QID{}, toErrno(err)
	}
	return qidOf(a), nil
}

// Link implements p9.File.Link.
func (f *file) Link(target p9.File, name string) (err error) {
	defer f.guard("link", &err)
	t, ok := target.(*file)
	if !ok {
		return linux.EXDEV
	}
	if err := server.CheckName("link", name); err != nil {
		return toErrno(err)
	}
	_, err = f.srv.fs.Link(f.ctx, t.p(), server.Join(f.p(), name))
	if err != nil && server.KindOf(err) == server.KindIsDir {
		// The core says ISDIR for NFS's sake (Linux's nfsd answers
		// NFS3ERR_ISDIR); link(2) of a directory is EPERM, as diod answers
		// (differential P4).
		return linux.EPERM
	}
	return toErrno(err)
}

// Mknod implements p9.File.Mknod: named pipes and Unix socket nodes (v9fs
// sends bind(2) as Tmknod S_IFSOCK), and plain files. Device nodes are
// refused by the core with EPERM, as mknod(2) answers a caller without
// CAP_MKNOD (server.FS.Mknod says why).
func (f *file) Mknod(name string, mode p9.FileMode, _, _ uint32, _ p9.UID, gid p9.GID) (qid p9.QID, err error) {
	defer f.guard("mknod", &err)
	if err := server.CheckName("mknod", name); err != nil {
		return p9.QID{}, toErrno(err)
	}
	p := server.Join(f.p(), name)
	var a server.Attr
	switch mode.FileType() {
	case p9.ModeNamedPipe:
		a, err = f.srv.fs.Mknod(f.creating(gid), p, fs.ModeNamedPipe|perm(mode))
	case p9.ModeSocket:
		a, err = f.srv.fs.Mknod(f.creating(gid), p, fs.ModeSocket|perm(mode))
	case p9.ModeCharacterDevice:
		a, err = f.srv.fs.Mknod(f.creating(gid), p, fs.ModeDevice|fs.ModeCharDevice|perm(mode))
	case p9.ModeBlockDevice:
		a, err = f.srv.fs.Mknod(f.creating(gid), p, fs.ModeDevice|perm(mode))
	case p9.ModeRegular, 0:
		var fl *server.File
		fl, _, err = f.srv.fs.Create(f.creating(gid), p, perm(mode), true)
		if err == nil {
			a, err = fl.Stat()
			fl.Close()
		}
	default:
		return p9.QID{}, linux.EINVAL
	}
	if err != nil {
		return p9.QID{}, toErrno(err)
	}
	return qidOf(a), nil
}

// RenameAt implements p9.File.RenameAt (Trenameat, and Trename through the parent).
func (f *file) RenameAt(oldName string, newDir p9.File, newName string) (err error) {
	defer f.guard("rename", &err)
	nd, ok := newDir.(*file)
	if !ok {
		return linux.EXDEV
	}
	if err := server.CheckName("rename", oldName); err != nil {
		return toErrno(err)
	}
	if err := server.CheckName("rename", newName); err != nil {
		return toErrno(err)
	}
	return toErrno(f.srv.fs.Rename(f.ctx, server.Join(f.p(), oldName), server.Join(nd.p(), newName)))
}

// Rename implements p9.File.Rename; p9's server never calls it (it uses RenameAt
// on the parent), but it is correct for direct callers.
func (f *file) Rename(newDir p9.File, newName string) (err error) {
	defer f.guard("rename", &err)
	nd, ok := newDir.(*file)
	if !ok {
		return linux.EXDEV
	}
	if err := server.CheckName("rename", newName); err != nil {
		return toErrno(err)
	}
	np := server.Join(nd.p(), newName)
	if err := f.srv.fs.Rename(f.ctx, f.p(), np); err != nil {
		return toErrno(err)
	}
	f.mu.Lock()
	f.path = np
	f.mu.Unlock()
	return nil
}

// Renamed implements p9.File.Renamed: p9 tells every fid below a renamed entry
// its new name, which keeps path-based fids pointing at the same file.
func (f *file) Renamed(newDir p9.File, newName string) {
	nd, ok := newDir.(*file)
	if !ok {
		return
	}
	np := server.Join(nd.p(), newName)
	f.mu.Lock()
	f.path = np
	f.mu.Unlock()
}

// UnlinkAt implements p9.File.UnlinkAt.
func (f *file) UnlinkAt(name string, flags uint32) (err error) {
	defer f.guard("unlink", &err)
	if err := server.CheckName("unlink", name); err != nil {
		return toErrno(err)
	}
	return toErrno(f.srv.fs.Remove(f.ctx, server.Join(f.p(), name), flags&atRemoveDir != 0))
}

// Readlink implements p9.File.Readlink.
func (f *file) Readlink() (target string, err error) {
	defer f.guard("readlink", &err)
	if f.id.Load() != 0 {
		if _, err := f.stat(false); err != nil {
			return "", toErrno(err)
		}
	}
	t, err := f.srv.fs.Readlink(f.ctx, f.p())
	return t, toErrno(err)
}

// v9fsMagic is V9FS_MAGIC, the f_type Linux reports for 9p mounts.
const v9fsMagic = 0x01021997

// StatFS implements p9.File.StatFS.
func (f *file) StatFS() (st p9.FSStat, err error) {
	defer f.guard("statfs", &err)
	s, err := f.srv.fs.StatFS(f.ctx)
	if err != nil {
		return p9.FSStat{}, toErrno(err)
	}
	return p9.FSStat{
		Type: v9fsMagic, BlockSize: s.BlockSize, Blocks: s.Blocks, BlocksFree: s.BlocksFree,
		BlocksAvailable: s.BlocksAvail, Files: s.Files, FilesFree: s.FilesFree, NameLength: s.NameLen,
	}, nil
}

// Lock implements p9.File.Lock (Tlock) and, for requests the connection shim
// made from a Tgetlock (getlockFlag), the lock test; see lock.go.
func (f *file) Lock(pid int, typ p9.LockType, flags p9.LockFlags, start, length uint64, client string) (st p9.LockStatus, err error) {
	defer f.guard("lock", &err)
	if typ > p9.Unlock {
		return p9.LockStatusError, linux.EINVAL
	}
	a, err := f.stat(false)
	if err != nil {
		return p9.LockStatusError, toErrno(err)
	}
	if !a.Mode.IsRegular() {
		return p9.LockStatusError, linux.EINVAL
	}
	k := fileKey{dev: a.Dev, ino: a.Ino}
	var connID uint64
	if f.conn != nil {
		connID = f.conn.id
	}
	from, to := span(start, length)
	if flags&getlockFlag != 0 {
		if f.conn == nil {
			return p9.LockStatusError, linux.EINVAL
		}
		tag, g := f.conn.getlockFor(client)
		if g == nil {
			return p9.LockStatusError, linux.EINVAL
		}
		o := lockOwner{conn: connID, client: g.client, pid: int32(pid)}
		w := newMessage(msgRgetlock, tag)
		if r, busy := f.srv.locks.conflict(k, o, typ == p9.WriteLock, from, to); busy {
			// size[4] Rgetlock tag[2] type[1] start[8] length[8] proc_id[4] client_id[s]
			lt, n := p9.ReadLock, uint64(0)
			if r.write {
				lt = p9.WriteLock
			}
			if r.end != math.MaxUint64 {
				n = r.end - r.start + 1
			}
			w.u8(uint8(lt))
			w.u64(r.start)
			w.u64(n)
			w.u32(uint32(r.owner.pid))
			w.str(r.owner.client)
		} else {
			w.u8(uint8(p9.Unlock))
			w.u64(start)
			w.u64(length)
			w.u32(uint32(pid))
			w.str(g.client)
		}
		g.reply = w.finish()
		return p9.LockStatusOK, nil
	}
	o := lockOwner{conn: connID, client: client, pid: int32(pid)}
	granted, err := f.srv.locks.set(k, o, typ, from, to)
	switch {
	case err != nil:
		return p9.LockStatusError, err
	case !granted:
		return p9.LockStatusBlocked, nil
	}
	return p9.LockStatusOK, nil
}

// Extended attributes are not supported. On the wire the connection shim
// answers Txattrwalk/Txattrcreate itself (see conn.go); these serve direct callers.

// Extended attributes: xattr.go.
