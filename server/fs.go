package server

import (
	"context"
	"io"
	"log/slog"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/semfs/semfs/server/policy"
)

// Options configure an FS.
type Options struct {
	Sink       Sink          // receives the change stream; nil discards it
	Registry   *Registry     // uid -> app bindings; nil: uids never attribute
	Logger     *slog.Logger  // nil: slog.Default()
	WriteQuiet time.Duration // how long a written path must stay quiet before its Touch (default 1s)
	// BackingCheck is how often the core checks that the backing directory is
	// still the one at its path (default DefaultBackingCheck; negative: only
	// when CheckBacking is called).
	BackingCheck time.Duration
	// Journal is the file, beside the index, that keeps the durable records of
	// files that cannot carry MetaXattr (see journal.go). Set, every create
	// makes its file's record durable before it returns and SaveMeta keeps
	// tags; "" keeps no durable records (tools and tests that need none).
	Journal string
	// Virtual, when set, is shown at its name in the root (virtual.go);
	// ListVirtual lists it in the root's listing too (else it is reachable by
	// name only, so that find, du and backups of a mount never walk into it).
	Virtual     Virtual
	ListVirtual bool
	// Policy, when set, limits what each app sees and changes (policy.go).
	Policy *policy.Live
}

// FS is the containment-safe view of the backing directory shared by every front
// end. All methods are safe for concurrent use. Namespace mutations (create, mkdir,
// symlink, link, mknod, remove, rename) are serialised with each other together with
// their Sink call, so the index sees them in the order the disk did; reads and data
// writes run concurrently.
type FS struct {
	res  *resolver
	sink Sink
	reg  *Registry
	root bool // running as root: calls run with their callers' credentials (cred.go)
	// egid is the daemon's own group: a file it creates with its rights
	// (ownUnchecked) has another group only when its directory is setgid.
	egid uint32
	// dcred is what each switch to a caller's credentials restores (root only).
	dcred  daemonCred
	grants grantCache // the kernel's answers to access questions (cred.go)
	umask  uint32     // the process's umask at New (umask.go)
	log    *slog.Logger

	// gate is held shared by every operation that changes the backing directory
	// and exclusively by Freeze, so a snapshot sees each change wholly or not at all.
	gate sync.RWMutex
	// ns serialises namespace mutations and their Sink calls.
	ns sync.Mutex

	touches *touchQueue
	bk      *backingWatch
	meta    *metaStore // nil: no durable records (Options.Journal "")

	// openMu guards open, the Files not yet closed, so that a rename can move
	// their paths: writes after a rename must update the new name's record.
	openMu sync.Mutex
	open   map[*File]struct{}

	virt        Virtual // nil: none (virtual.go)
	listVirtual bool
	pol         *policy.Live // nil: no policy (policy.go)

	// ownChanges is the inotify Watcher's record of the files the core
	// created itself and the states its closes left written files in
	// (watch.go); nil while none follows the directory.
	ownChanges atomic.Pointer[ownChanges]
	// noGetxattrat is set once getxattrat(2) has been answered ENOSYS
	// (before Linux 6.13) or EPERM (a seccomp filter): ReadMetaEach reads
	// each record as ReadMeta does from then on.
	noGetxattrat atomic.Bool
}

// New opens the backing directory dir, which must exist.
func New(dir string, opts Options) (*FS, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, wrap("open backing directory", "", err)
	}
	res, err := newResolver(root)
	if err != nil {
		root.Close()
		return nil, wrap("open backing directory", "", err)
	}
	f := &FS{res: res, sink: opts.Sink, reg: opts.Registry, log: opts.Logger, open: map[*File]struct{}{},
		root: os.Geteuid() == 0, egid: uint32(os.Getegid()), grants: newGrantCache(4096), umask: readUmask(),
		virt: opts.Virtual, listVirtual: opts.ListVirtual}
	f.pol = opts.Policy // set apart from the literal above, which others edit too
	if f.log == nil {
		f.log = slog.Default()
	}
	if f.root {
		if f.dcred, err = readDaemonCred(); err != nil {
			res.close()
			return nil, wrap("read the daemon's groups", "", err)
		}
	}
	quiet := opts.WriteQuiet
	if quiet <= 0 {
		quiet = time.Second
	}
	if opts.Journal != "" {
		if f.meta, err = openMeta(res.rootFd, opts.Journal); err != nil {
			res.close()
			return nil, err
		}
	}
	f.touches = newTouchQueue(quiet, f.applyTouch)
	f.bk = newBackingWatch(dir, res.rootFd, opts.BackingCheck, f.log)
	return f, nil
}

// Close flushes pending write notifications into the sink and releases the
// backing directory.
func (f *FS) Close() error {
	f.bk.close()
	f.touches.close()
	f.flushSink(context.Background())
	if f.meta != nil {
		f.meta.j.close()
	}
	return f.res.close()
}

// flushSink waits until the sink has applied every change sent so far.
func (f *FS) flushSink(ctx context.Context) error {
	if fl, ok := f.sink.(Flusher); ok {
		return fl.Flush(ctx)
	}
	return nil
}

// App resolves the acting app for ctx: the mount's app, else the app registered for
// the caller's uid, else "" (unattributed; never guessed).
func (f *FS) App(ctx context.Context) string { return f.appOf(IdentityFrom(ctx)) }

// appOf is App for an identity.
func (f *FS) appOf(id Identity) string {
	if id.MountApp != "" {
		return id.MountApp
	}
	if id.HasUID && f.reg != nil {
		if app, ok := f.reg.Lookup(id.UID); ok {
			return app
		}
	}
	return ""
}

// parent resolves the directory holding p beneath the root, so that the last
// component can be acted on with *at system calls that never follow it. The caller
// closes the returned directory.
func (f *FS) parent(op, p string) (dirRef, string, error) {
	return f.parentAt(op, p, false)
}

// parentAt is parent; raw as for resolver.openDirAt.
func (f *FS) parentAt(op, p string, raw bool) (dirRef, string, error) {
	if err := f.gone(op, p); err != nil {
		return dirRef{}, "", err
	}
	if p == "" {
		return dirRef{}, "", E(op, KindInvalid, p, constError("the root has no parent"))
	}
	dir, name := Split(p)
	d, err := f.res.openDirAt(op, dir, false, raw)
	if err != nil {
		if se, ok := err.(*Error); ok {
			se.Path = p
		}
		return dirRef{}, "", err
	}
	return d, name, nil
}

// Lstat returns the attributes of p itself (a symlink is not followed).
func (f *FS) Lstat(ctx context.Context, p string) (Attr, error) {
	return f.lstat(ctx, p, false)
}

// lstat is Lstat; raw makes its system calls raw (see LstatInline).
func (f *FS) lstat(ctx context.Context, p string, raw bool) (a Attr, err error) {
	if f.virtual(p) {
		return f.virt.Lstat(ctx, p)
	}
	if err := f.viewSee(ctx, "lstat", p); err != nil {
		return Attr{}, err
	}
	if p == "" {
		// The root's own attributes: no directory is searched.
		if err := f.gone("lstat", p); err != nil {
			return Attr{}, err
		}
		return statxAt(f.res.rootFd, "", "lstat", p, raw)
	}
	err = f.as(ctx, "lstat", p, func() error {
		d, name, err := f.parentAt("lstat", p, raw)
		if err != nil {
			return err
		}
		defer d.close()
		a, err = statxAt(d.fd, name, "lstat", p, raw)
		return err
	})
	return a, err
}

// LstatMany is Lstat of each of paths (none of them the root), as one
// request: the files of one directory share its lookup and, in root mode, one
// switch to the caller's credentials. A query checks hundreds of candidate
// files, most of them in a few directories. errs[i] is paths[i]'s error.
func (f *FS) LstatMany(ctx context.Context, paths []string) (attrs []Attr, errs []error) {
	attrs, errs = make([]Attr, len(paths)), make([]error, len(paths))
	groups := groupByDir(paths, func(i int, p string) bool {
		if p == "" || f.virtual(p) {
			attrs[i], errs[i] = f.lstat(ctx, p, false)
			return false
		}
		if err := f.viewSee(ctx, "lstat", p); err != nil {
			errs[i] = err
			return false
		}
		return true
	})
	for _, in := range groups {
		err := f.as(ctx, "lstat", paths[in[0]], func() error {
			d, _, err := f.parent("lstat", paths[in[0]])
			if err != nil {
				return err
			}
			defer d.close()
			for _, i := range in {
				_, name := Split(paths[i])
				attrs[i], errs[i] = statx(d.fd, name, "lstat", paths[i])
			}
			return nil
		})
		if err != nil {
			for _, i := range in {
				errs[i] = errFor(err, paths[i])
			}
		}
	}
	return attrs, errs
}

// groupByDir groups the indexes of paths by their parent directory, the
// groups in order of their first path, leaving out each path keep refuses
// (keep answers it itself).
func groupByDir(paths []string, keep func(i int, p string) bool) [][]int {
	at := map[string]int{} // directory -> its group
	var groups [][]int
	for i, p := range paths {
		if !keep(i, p) {
			continue
		}
		dir, _ := Split(p)
		g, ok := at[dir]
		if !ok {
			g = len(groups)
			at[dir] = g
			groups = append(groups, nil)
		}
		groups[g] = append(groups[g], i)
	}
	return groups
}

// errFor is err, one directory's failure, as the error of p in it: an
// *Error of its own naming p.
func errFor(err error, p string) error {
	if se, ok := err.(*Error); ok {
		own := *se
		own.Path = p
		return &own
	}
	return err
}

// LstatIn is Lstat of p (not the root) together with the attributes of the
// directory holding it, taken from the descriptor the lookup holds anyway (one
// statx more): a front end that reached that directory by a name it remembers
// (a 9P fid) can tell whether it is still the directory it meant. inline makes
// the system calls raw, as LstatInline.
func (f *FS) LstatIn(ctx context.Context, p string, inline bool) (dir, a Attr, err error) {
	if p == "" {
		return Attr{}, Attr{}, E("lstat", KindInvalid, p, constError("the root has no parent"))
	}
	if f.virtual(p) {
		// The virtual tree has no descriptors: its parent is the root (real)
		// or another virtual directory, each answered as lstat does.
		parent, _ := Split(p)
		if dir, err = f.lstat(ctx, parent, inline); err != nil {
			return Attr{}, Attr{}, err
		}
		a, err = f.virt.Lstat(ctx, p)
		return dir, a, err
	}
	if err := f.viewSee(ctx, "lstat", p); err != nil {
		return Attr{}, Attr{}, err
	}
	err = f.as(ctx, "lstat", p, func() error {
		d, name, err := f.parentAt("lstat", p, inline)
		if err != nil {
			return err
		}
		defer d.close()
		parent, _ := Split(p)
		if dir, err = statxAt(d.fd, "", "lstat", parent, inline); err != nil {
			return err
		}
		a, err = statxAt(d.fd, name, "lstat", p, inline)
		return err
	})
	return dir, a, err
}

// ReadDir lists directory p, sorted by name, with each entry's lstat attributes.
// An entry that vanishes while listing is left out.
func (f *FS) ReadDir(ctx context.Context, p string) ([]DirEntry, error) {
	if f.virtual(p) {
		return f.virt.ReadDir(ctx, p)
	}
	if err := f.viewRead(ctx, "readdir", p); err != nil {
		return nil, err
	}
	out, err := f.readDir(ctx, p)
	out = f.viewFilter(ctx, p, out)
	if err == nil && p == "" {
		out = f.withVirtualRoot(ctx, out)
	}
	return out, err
}

// readDir is ReadDir of a real directory.
func (f *FS) readDir(ctx context.Context, p string) ([]DirEntry, error) {
	if err := f.gone("readdir", p); err != nil {
		return nil, err
	}
	var ref dirRef
	err := f.as(ctx, "readdir", p, func() (err error) {
		ref, err = f.res.openDir("readdir", p, true)
		return err
	})
	if err != nil {
		return nil, err
	}
	if _, door := identityOf(ctx); !door {
		// The daemon's own listing (the watcher, the reconcile's walk)
		// leaves the directory's atime alone, as its file reads do
		// (OpenRead): with relatime a listing would set an atime a client
		// had set before the mtime to now. A door's listing is the
		// client's read, and counts as one.
		quietDir(ref.fd)
	}
	d := os.NewFile(uintptr(ref.fd), p)
	defer d.Close()
	var out []DirEntry
	fd := int(d.Fd())
	for {
		names, err := d.Readdirnames(1024)
		for _, name := range names {
			a, err := statx(fd, name, "readdir", p)
			if err != nil {
				continue
			}
			out = append(out, DirEntry{Name: name, Attr: a})
		}
		if err == io.EOF || len(names) == 0 {
			break
		}
		if err != nil {
			return nil, wrap("readdir", p, err)
		}
	}
	slices.SortFunc(out, func(a, b DirEntry) int {
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
	return out, nil
}

// Readlink returns the target of symlink p exactly as stored.
func (f *FS) Readlink(ctx context.Context, p string) (target string, err error) {
	if f.virtual(p) {
		return f.virt.Readlink(ctx, p)
	}
	if err := f.viewSee(ctx, "readlink", p); err != nil {
		return "", err
	}
	err = f.as(ctx, "readlink", p, func() error {
		d, name, err := f.parent("readlink", p)
		if err != nil {
			return err
		}
		defer d.close()
		for size := 256; ; size *= 2 {
			buf := make([]byte, size)
			n, err := unix.Readlinkat(d.fd, name, buf)
			if err != nil {
				return wrap("readlink", p, err)
			}
			if n < size {
				target = string(buf[:n])
				return nil
			}
		}
	})
	return target, err
}

// StatFS describes the filesystem holding the backing directory.
func (f *FS) StatFS(ctx context.Context) (StatFS, error) {
	if err := f.gone("statfs", ""); err != nil {
		return StatFS{}, err
	}
	var s unix.Statfs_t
	if err := unix.Fstatfs(f.res.rootFd, &s); err != nil {
		return StatFS{}, wrap("statfs", "", err)
	}
	return StatFS{
		BlockSize: uint32(s.Bsize), Blocks: s.Blocks, BlocksFree: s.Bfree, BlocksAvail: s.Bavail,
		Files: s.Files, FilesFree: s.Ffree, NameLen: uint32(s.Namelen),
	}, nil
}

// Walk calls fn for every entry below p (depth first, names sorted), never
// following symlinks. It is how the daemon reconciles the index at start.
func (f *FS) Walk(ctx context.Context, p string, fn func(path string, a Attr) error) error {
	// Only the real tree: the virtual one is never indexed, reconciled or
	// archived.
	if f.virtual(p) {
		return nil
	}
	ents, err := f.readDir(ctx, p)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if err := ctx.Err(); err != nil {
			return err
		}
		cp := Join(p, e.Name)
		if f.virtual(cp) {
			continue // a real file shadowed by the virtual tree is not the tree's
		}
		if err := fn(cp, e.Attr); err != nil {
			return err
		}
		if e.Attr.IsDir() {
			if err := f.Walk(ctx, cp, fn); err != nil {
				if KindOf(err) == KindNotFound {
					continue // removed while walking
				}
				return err
			}
		}
	}
	return nil
}

// Freeze runs fn while no change can reach the backing directory: in-flight changes
// finish first and new ones wait until fn returns. Reads go on. It is the snapshot's
// consistency barrier.
func (f *FS) Freeze(ctx context.Context, fn func() error) error {
	f.gate.Lock()
	defer f.gate.Unlock()
	f.touches.flush()
	if err := f.flushSink(ctx); err != nil {
		return err
	}
	return fn()
}

// OpenRead opens p for reading whatever identity asks; used by the daemon's own
// reads (snapshots, which run under Freeze, and the content index and grep).
// p must be a regular file. The read leaves the file's atime alone
// (O_NOATIME, which the file's owner and a root daemon may ask for): with
// relatime, a daemon reading a file whose atime a client had set before its
// mtime would set it to now, under the client (pjdfstest's utimensat found it).
func (f *FS) OpenRead(ctx context.Context, p string) (*os.File, error) {
	if f.virtual(p) {
		return nil, E("read", KindNotSupported, p, constError("the semfs namespace is not archived"))
	}
	d, name, err := f.parent("read", p)
	if err != nil {
		return nil, err
	}
	defer d.close()
	fd, err := openRead(d.fd, name, p)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), p), nil
}

// openRead opens name in directory dirfd (path p) for reading as OpenRead
// does: never through a symlink, never blocking (a FIFO put in a regular
// file's place), and leaving the atime alone where it may.
func openRead(dirfd int, name, p string) (int, error) {
	const flags = unix.O_RDONLY | unix.O_NOFOLLOW | unix.O_CLOEXEC | unix.O_NONBLOCK
	fd, err := unix.Openat(dirfd, name, flags|unix.O_NOATIME, 0)
	if err == unix.EPERM { // neither the owner nor privileged: an ordinary read
		fd, err = unix.Openat(dirfd, name, flags, 0)
	}
	if err != nil {
		return -1, wrap("read", p, err)
	}
	return fd, nil
}

// Reader is a file OpenEach opened for reading: a bare descriptor, valid
// only during the call it is handed to. It is not an os.File because
// making one costs two system calls on every open (fcntl, and an epoll
// registration a regular file refuses), and a query opens each file of its
// answer, the content indexers each file written.
type Reader struct {
	fd   int
	path string
	off  int64 // where Read reads next
}

// Read reads up to len(b) bytes from where the last Read ended (the start,
// at first): one read of the file, which may return fewer bytes than asked
// before its end (a reader to EOF can take a short read at the size it
// expects as the end, sparing the read that would only say so); 0 and io.EOF
// at the end.
func (r *Reader) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	for {
		n, err := unix.Pread(r.fd, b, r.off)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return 0, wrap("read", r.path, err)
		case n == 0:
			return 0, io.EOF
		}
		r.off += int64(n)
		return n, nil
	}
}

// ReadAt reads len(b) bytes at off: fewer, with io.EOF, at the file's end.
func (r *Reader) ReadAt(b []byte, off int64) (int, error) {
	n := 0
	for n < len(b) {
		m, err := unix.Pread(r.fd, b[n:], off+int64(n))
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return n, wrap("read", r.path, err)
		case m == 0:
			return n, io.EOF
		}
		n += m
	}
	return n, nil
}

// Stat is the open file's attributes.
func (r *Reader) Stat() (Attr, error) { return statx(r.fd, "", "read", r.path) }

// OpenEach opens each of paths (none of them the root) for reading as
// OpenRead does, and calls each with its index and the open file, or with
// why it could not be opened (r nil), in the order of paths grouped by
// directory: the files of one directory share its lookup, as in LstatMany.
// Each file is closed when its call returns. Once ctx is done, the files
// not yet opened get its error.
func (f *FS) OpenEach(ctx context.Context, paths []string, each func(i int, r *Reader, err error)) {
	groups := groupByDir(paths, func(i int, p string) bool {
		if p == "" || f.virtual(p) {
			each(i, nil, E("read", KindNotSupported, p, constError("not a file of the export")))
			return false
		}
		return true
	})
	for _, in := range groups {
		if err := ctx.Err(); err != nil {
			for _, i := range in {
				each(i, nil, err)
			}
			continue
		}
		f.openIn(paths, in, each)
	}
}

// openIn is OpenEach for the files paths[in] of one directory, its
// descriptors' closes deferred so that a panic in each leaks none.
func (f *FS) openIn(paths []string, in []int, each func(int, *Reader, error)) {
	d, _, err := f.parent("read", paths[in[0]])
	if err != nil {
		for _, i := range in {
			each(i, nil, errFor(err, paths[i]))
		}
		return
	}
	defer d.close()
	for _, i := range in {
		func() {
			_, name := Split(paths[i])
			fd, err := openRead(d.fd, name, paths[i])
			if err != nil {
				each(i, nil, err)
				return
			}
			defer unix.Close(fd)
			each(i, &Reader{fd: fd, path: paths[i]}, nil)
		}()
	}
}

// quietDir asks that reads through fd leave its atime alone (O_NOATIME,
// which fcntl may set where the daemon owns the directory or runs as root;
// elsewhere the listing is an ordinary read).
func quietDir(fd int) {
	if fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0); err == nil {
		unix.FcntlInt(uintptr(fd), unix.F_SETFL, fl|unix.O_NOATIME)
	}
}

// statx returns the attributes of name in directory dirfd without following a
// symlink; an empty name means dirfd itself.
func statx(dirfd int, name, op, p string) (Attr, error) {
	return statxAt(dirfd, name, op, p, false)
}

// statxAt is statx; raw makes the system call raw (see FS.LstatInline).
func statxAt(dirfd int, name, op, p string, raw bool) (Attr, error) {
	flags := unix.AT_SYMLINK_NOFOLLOW
	if name == "" {
		flags |= unix.AT_EMPTY_PATH
	}
	var st unix.Statx_t
	mask := unix.STATX_BASIC_STATS | unix.STATX_BTIME
	var err error
	if raw {
		err = rawStatx(dirfd, name, flags, mask, &st)
	} else {
		err = unix.Statx(dirfd, name, flags, mask, &st)
	}
	if err != nil {
		return Attr{}, wrap(op, p, err)
	}
	ts := func(t unix.StatxTimestamp) time.Time { return time.Unix(t.Sec, int64(t.Nsec)) }
	a := Attr{
		Mode:   modeOf(uint32(st.Mode)),
		Size:   int64(st.Size),
		Ino:    st.Ino,
		Dev:    unix.Mkdev(st.Dev_major, st.Dev_minor),
		Nlink:  st.Nlink,
		UID:    st.Uid,
		GID:    st.Gid,
		Rdev:   unix.Mkdev(st.Rdev_major, st.Rdev_minor),
		Blocks: int64(st.Blocks),
		Atime:  ts(st.Atime),
		Mtime:  ts(st.Mtime),
		Ctime:  ts(st.Ctime),
	}
	if st.Mask&unix.STATX_BTIME != 0 {
		a.Btime = ts(st.Btime)
	}
	return a, nil
}

// LstatInline is Lstat for a caller answering in a connection's only reader (the
// 9P shim; NFS's GETATTR, LOOKUP and ACCESS): the same containment and the same
// result, through system calls made without telling the Go scheduler
// (RawSyscall). Told, the scheduler wakes its monitor thread at the first call
// after an idle moment, which for a client that sends one request at a time is
// every request (see server/sockio for the figures). The calls can still wait
// for the disk when the metadata is not cached; the caller's goroutine then
// holds its P meanwhile, as it holds the connection.
func (f *FS) LstatInline(ctx context.Context, p string) (Attr, error) {
	return f.lstat(ctx, p, true)
}
