package server

import (
	"context"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Durable records: every file's creator, creation time and tags are kept with
// the file (MetaXattr) or, where it cannot carry one, in the journal beside the
// index (journal.go), before the index is told. The index is then a cache of
// what the data directory holds, rebuilt from these records at start.

// MetaSource says where a durable record was read from.
type MetaSource uint8

const (
	MetaNone        MetaSource = iota // the file has no durable record
	MetaFromXattr                     // its MetaXattr
	MetaFromJournal                   // the journal
)

func (s MetaSource) String() string {
	switch s {
	case MetaFromXattr:
		return "xattr"
	case MetaFromJournal:
		return "journal"
	}
	return "none"
}

// MetaInfo describes the durable record stores of an FS.
type MetaInfo struct {
	Enabled bool          // Options.Journal was set
	Xattr   bool          // the backing file system takes user extended attributes
	Journal JournalReport // what loading the journal found
}

// metaStore is the FS's durable record state; nil when Options.Journal is "".
type metaStore struct {
	j     *journal
	xattr bool
	info  MetaInfo
}

// openMeta opens the journal and probes the backing directory for user
// extended attributes, reading the root's own MetaXattr: ENODATA means the file
// system takes them, ENOTSUP that it does not.
func openMeta(rootFd int, path string) (*metaStore, error) {
	j, rep, err := openJournal(path)
	if err != nil {
		return nil, wrap("open journal", "", err)
	}
	m := &metaStore{j: j}
	_, err = unix.Fgetxattr(rootFd, MetaXattr, nil)
	m.xattr = err == nil || err == unix.ENODATA || err == unix.ERANGE
	m.info = MetaInfo{Enabled: true, Xattr: m.xattr, Journal: rep}
	return m, nil
}

// MetaInfo says how durable records are kept. Safe for concurrent use.
func (f *FS) MetaInfo() MetaInfo {
	if f.meta == nil {
		return MetaInfo{}
	}
	return f.meta.info
}

// cannotCarry reports an error from setting MetaXattr that means "keep this
// record elsewhere": the file (a symlink, a FIFO, a read-only file of an
// unprivileged daemon) or the file system does not take it, or it is too large.
func cannotCarry(err error) bool {
	switch err {
	case unix.ENOTSUP, unix.EPERM, unix.EACCES, unix.E2BIG, unix.ERANGE, unix.ENOSPC, unix.EDQUOT:
		return true
	}
	return false
}

// saveNew makes the record of a file created now durable before the create is
// acknowledged: on the new file's descriptor fd (regular files; -1 otherwise),
// else in the journal. Precondition: f.ns held.
func (f *FS) saveNew(fd int, p string, a Attr, app string, at time.Time) error {
	if f.meta == nil {
		return nil
	}
	m := Meta{CreatedBy: app, CreatedAt: at.UTC()}
	id := a.FileID()
	if fd >= 0 && f.meta.xattr {
		err := unix.Fsetxattr(fd, MetaXattr, m.encode(), 0)
		if err == nil {
			// A reused identity (no birth time) must not keep an old record.
			return wrap("create", p, f.meta.j.drop(id, false))
		}
		if !cannotCarry(err) {
			return wrap("create", p, err)
		}
	}
	return wrap("create", p, f.meta.j.put(id, m, false))
}

// saveNewFd is saveNew for a file just created as fd, whose attributes it reads
// after the record is on the file (setting it changes the ctime): they are the
// file's as the create leaves it, and the front ends answer with them
// (File.Created) instead of a second statx.
func (f *FS) saveNewFd(fd int, p string, app string, at time.Time) (Attr, error) {
	if f.meta != nil && f.meta.xattr {
		m := Meta{CreatedBy: app, CreatedAt: at.UTC()}
		err := unix.Fsetxattr(fd, MetaXattr, m.encode(), 0)
		if err == nil {
			a, _ := statx(fd, "", "create", p)
			// A reused identity (no birth time) must not keep an old record.
			return a, wrap("create", p, f.meta.j.drop(a.FileID(), false))
		}
		if !cannotCarry(err) {
			return Attr{}, wrap("create", p, err)
		}
	}
	a, _ := statx(fd, "", "create", p)
	return a, f.saveNew(-1, p, a, app, at)
}

// attrFile is a file opened without following it, for its durable record.
type attrFile struct {
	fd int // O_PATH
	a  Attr
}

func (f *FS) openAttr(op, p string) (attrFile, error) {
	d, name, err := f.parent(op, p)
	if err != nil {
		return attrFile{}, err
	}
	defer d.close()
	fd, err := unix.Openat(d.fd, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return attrFile{}, wrap(op, p, err)
	}
	a, err := statx(fd, "", op, p)
	if err != nil {
		unix.Close(fd)
		return attrFile{}, err
	}
	return attrFile{fd: fd, a: a}, nil
}

func (af attrFile) close() { unix.Close(af.fd) }

// procPath names the inode an O_PATH descriptor pins. Used only for regular
// files, where resolving it cannot follow anything further.
func (af attrFile) procPath() string { return "/proc/self/fd/" + itoa(af.fd) }

// reader reads the file's MetaXattr: through /proc, or where /proc is
// missing through a descriptor of its own.
func (af attrFile) reader(f *FS, p string) attrReader {
	return func(b []byte) (int, error) {
		n, err := unix.Getxattr(af.procPath(), MetaXattr, b)
		if err == unix.ENOENT {
			err = f.onFile(p, af.a, func(fd int) error {
				var ferr error
				n, ferr = unix.Fgetxattr(fd, MetaXattr, b)
				return ferr
			})
		}
		return n, err
	}
}

// attrReader reads one file's MetaXattr into b: the value's length, or the
// system call's error (ERANGE when b is too small).
type attrReader func(b []byte) (int, error)

// getxattrAt is the attrReader of name in directory dirfd, not following a
// symlink: getxattrat(2), Linux 6.13 (ENOSYS before it). x/sys has the
// number, not the call.
func getxattrAt(dirfd int, name string) attrReader {
	p, perr := unix.BytePtrFromString(name)
	attr, aerr := unix.BytePtrFromString(MetaXattr)
	return func(b []byte) (int, error) {
		if perr != nil || aerr != nil {
			return 0, unix.EINVAL
		}
		for {
			// struct xattr_args: the value's buffer, its size, flags (0).
			args := struct {
				value uint64
				size  uint32
				flags uint32
			}{uint64(uintptr(unsafe.Pointer(unsafe.SliceData(b)))), uint32(len(b)), 0}
			n, _, e := unix.Syscall6(unix.SYS_GETXATTRAT, uintptr(dirfd), uintptr(unsafe.Pointer(p)),
				unix.AT_SYMLINK_NOFOLLOW, uintptr(unsafe.Pointer(attr)), uintptr(unsafe.Pointer(&args)), unsafe.Sizeof(args))
			switch {
			case e == unix.EINTR:
				continue
			case e != 0:
				return 0, e
			}
			return int(n), nil
		}
	}
}

// xattrRecord is the durable record a regular file's MetaXattr holds, read
// with read into buf (grown to MaxMetaSize, and returned for reuse, when the
// value is larger): MetaNone when it has none or may not be read (ENODATA,
// ENOTSUP, EACCES); read's error as it is otherwise, or decodeMeta's for a
// value that does not decode.
func xattrRecord(buf []byte, read attrReader) (m Meta, src MetaSource, grown []byte, err error) {
	for {
		n, err := read(buf)
		switch {
		case err == unix.ERANGE && len(buf) < MaxMetaSize:
			buf = make([]byte, MaxMetaSize)
			continue
		case err == unix.ENODATA || err == unix.ENOTSUP || err == unix.EACCES:
			return Meta{}, MetaNone, buf, nil
		case err != nil:
			return Meta{}, MetaNone, buf, err
		}
		m, err := decodeMeta(buf[:n])
		if err != nil {
			return Meta{}, MetaNone, buf, err
		}
		return m, MetaFromXattr, buf, nil
	}
}

// recordBeside is the durable record of the file with attributes a where it
// is not in its attribute: from the journal, or none for what carries no
// attribute (not a regular file, or a file system without them); ok false
// when the attribute is to be read.
func (f *FS) recordBeside(a Attr) (m Meta, src MetaSource, ok bool) {
	if m, ok := f.meta.j.get(a.FileID()); ok {
		return m, MetaFromJournal, true
	}
	if !a.Mode.IsRegular() || !f.meta.xattr {
		return Meta{}, MetaNone, true
	}
	return Meta{}, MetaNone, false
}

// readMeta returns the durable record of the open file p.
func (f *FS) readMeta(af attrFile, p string) (Meta, MetaSource, error) {
	if m, src, ok := f.recordBeside(af.a); ok {
		return m, src, nil
	}
	m, src, _, err := xattrRecord(make([]byte, 512), af.reader(f, p))
	return m, src, err
}

// ReadMeta returns the durable record of p (a regular file or symlink; a
// directory has none) and where it came from; MetaNone when it has none or the
// FS keeps no durable records. A record that cannot be decoded is an error
// (KindInvalid), so that the caller can say so instead of taking it for none.
// Safe for concurrent use.
func (f *FS) ReadMeta(ctx context.Context, p string) (Meta, MetaSource, error) {
	if f.meta == nil {
		return Meta{}, MetaNone, nil
	}
	af, err := f.openAttr("read record", p)
	if err != nil {
		return Meta{}, MetaNone, err
	}
	defer af.close()
	m, src, err := f.readMeta(af, p)
	if err != nil {
		return Meta{}, MetaNone, E("read record", KindInvalid, p, err)
	}
	return m, src, nil
}

// ReadMetaEach is ReadMeta of each of paths (regular files and symlinks, as
// a walk finds them): it calls each with i and the durable record of
// paths[i], in the order of paths grouped by directory. The files of one
// directory share its lookup, and each record costs one getxattrat(2) of
// the name in it (and a statx where the journal holds records), where
// ReadMeta opens the file, reads its attributes, reads the record through
// /proc and closes the file and its directory: a full rescan's records cost
// a sixth of the system calls. (A file replaced between the statx and the
// getxattrat is read as the new one with the old one's journal entry; the
// change that replaced it is followed in its turn.)
// Where getxattrat is missing (before Linux 6.13) or refused (a seccomp
// filter) each file is ReadMeta'd. Errors as ReadMeta's.
func (f *FS) ReadMetaEach(ctx context.Context, paths []string, each func(i int, m Meta, src MetaSource, err error)) {
	if f.meta == nil {
		for i := range paths {
			each(i, Meta{}, MetaNone, nil)
		}
		return
	}
	groups := groupByDir(paths, func(i int, p string) bool {
		if p == "" || f.virtual(p) {
			each(i, Meta{}, MetaNone, E("read record", KindNotSupported, p, constError("not a file of the export")))
			return false
		}
		return true
	})
	for _, in := range groups {
		if err := ctx.Err(); err != nil {
			for _, i := range in {
				each(i, Meta{}, MetaNone, err)
			}
			continue
		}
		f.readMetaIn(ctx, paths, in, each)
	}
}

// readMetaIn is ReadMetaEach for the files paths[in] of one directory.
func (f *FS) readMetaIn(ctx context.Context, paths []string, in []int, each func(int, Meta, MetaSource, error)) {
	d, _, err := f.parent("read record", paths[in[0]])
	if err != nil {
		for _, i := range in {
			each(i, Meta{}, MetaNone, errFor(err, paths[i]))
		}
		return
	}
	defer d.close()
	buf := make([]byte, 512)
	for _, i := range in {
		p := paths[i]
		if f.noGetxattrat.Load() {
			m, src, err := f.ReadMeta(ctx, p)
			each(i, m, src, err)
			continue
		}
		_, name := Split(p)
		if !f.meta.xattr || !f.meta.j.empty() {
			// The journal is looked up by the file's identity, and only a
			// regular file carries an attribute. (With the journal empty,
			// the usual case where files take attributes, the statx is
			// spared: getxattrat answers ENODATA for a symlink's user
			// attribute, ENOENT for a file gone.)
			a, err := statx(d.fd, name, "read record", p)
			if err != nil {
				each(i, Meta{}, MetaNone, err)
				continue
			}
			if m, src, ok := f.recordBeside(a); ok {
				each(i, m, src, nil)
				continue
			}
		}
		m, src, grown, err := xattrRecord(buf, getxattrAt(d.fd, name))
		buf = grown
		switch {
		case err == unix.ENOSYS || err == unix.EPERM:
			// ENOSYS: a kernel before 6.13. EPERM: a seccomp filter
			// refusing a system call it does not know (older container
			// runtimes' profiles); reading a regular file's user attribute
			// is refused with EACCES, never EPERM.
			f.noGetxattrat.Store(true)
			m, src, err := f.ReadMeta(ctx, p)
			each(i, m, src, err)
		case err == unix.ENOENT:
			each(i, Meta{}, MetaNone, wrap("read record", p, err)) // removed since the walk
		case err != nil:
			each(i, Meta{}, MetaNone, E("read record", KindInvalid, p, err))
		default:
			each(i, m, src, nil)
		}
	}
}

// SaveMeta replaces the durable record of p with update(current) and returns
// what it stored, durable (synced, if it went to the journal) when it returns.
// current is the zero Meta with ok=false when p has none. The index calls it
// before committing a tag. With no durable records kept, it returns
// update(Meta{}, false) and stores nothing. A directory is KindIsDir.
// Safe for concurrent use; concurrent saves of one file must be ordered by the
// caller (the index's write lock).
func (f *FS) SaveMeta(ctx context.Context, p string, update func(cur Meta, ok bool) Meta) (Meta, error) {
	if f.meta == nil {
		return update(Meta{}, false), nil
	}
	af, err := f.openAttr("save record", p)
	if err != nil {
		return Meta{}, err
	}
	defer af.close()
	if af.a.IsDir() {
		return Meta{}, E("save record", KindIsDir, p, nil)
	}
	cur, src, err := f.readMeta(af, p)
	if err != nil {
		// An unreadable record is replaced, not merged: it said nothing usable.
		f.log.Warn("replacing an unreadable durable record", "path", p, "err", err)
	}
	m := update(cur, src != MetaNone)
	id := af.a.FileID()
	if af.a.Mode.IsRegular() && f.meta.xattr {
		b := m.encode()
		// Before the IN_ATTRIB it makes: the Watcher leaves it out.
		if oc := f.ownChanges.Load(); oc != nil {
			oc.addAttr(p)
		}
		err := unix.Setxattr(af.procPath(), MetaXattr, b, 0)
		if err == unix.ENOENT {
			// No /proc here: reopen the name for writing its attribute, and
			// check it is still the inode seen above.
			err = f.onFile(p, af.a, func(fd int) error { return unix.Fsetxattr(fd, MetaXattr, b, 0) })
		}
		if err == nil {
			return m, wrap("save record", p, f.meta.j.drop(id, true))
		}
		if !cannotCarry(err) {
			return Meta{}, wrap("save record", p, err)
		}
	}
	return m, wrap("save record", p, f.meta.j.put(id, m, true))
}

// onFile runs fn on a read-only descriptor of regular file p, checked to be
// the inode want (seen through an O_PATH descriptor), where /proc is missing.
func (f *FS) onFile(p string, want Attr, fn func(fd int) error) error {
	d, name, err := f.parent("save record", p)
	if err != nil {
		return err
	}
	defer d.close()
	fd, err := unix.Openat(d.fd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if a, err := statx(fd, "", "save record", p); err != nil || a.Ino != want.Ino || a.Dev != want.Dev {
		return unix.ESTALE
	}
	return fn(fd)
}

// CompactJournal drops the journal records of files for which live is false
// (the daemon passes the identities it found walking the backing directory at
// start, before any client is served) and returns how many it dropped.
func (f *FS) CompactJournal(live func(fileID uint64) bool) (int, error) {
	if f.meta == nil {
		return 0, nil
	}
	n, err := f.meta.j.compact(live)
	if err != nil {
		return 0, wrap("compact journal", "", err)
	}
	return n, nil
}

// linkCreator returns the creator the inode newPath names already has on
// record (a hard link shares its file's record), or records app as its creator
// when it has none. Precondition: f.ns held.
func (f *FS) linkCreator(newPath string, a Attr, app string, at time.Time) (string, error) {
	if f.meta == nil {
		return app, nil
	}
	var creator string
	_, err := f.SaveMeta(context.Background(), newPath, func(cur Meta, ok bool) Meta {
		if ok && cur.CreatedBy != "" {
			creator = cur.CreatedBy
			return cur
		}
		creator = app
		cur.CreatedBy = app
		if cur.CreatedAt.IsZero() {
			cur.CreatedAt = at.UTC()
		}
		return cur
	})
	if err != nil {
		return "", err
	}
	return creator, nil
}
