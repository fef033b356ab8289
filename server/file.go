package server

import (
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/semfs/semfs/server/sockio"
)

// File is an open regular file. ReadAt and WriteAt may be called concurrently.
// Written data is reported to the index as one ChangeWrite per quiet period, and at
// once when the File is closed (9P clunk), so updatedAt follows the data.
type File struct {
	fs      *FS
	f       *os.File
	path    string // guarded by fs.openMu: renames move it
	write   bool
	appends bool // opened O_APPEND: os.File refuses WriteAt, and so does TryWriteAt
	// lastWrite is the latest time (UnixNano) a write through this File gave
	// the index as its updatedAt (touchQueue.add), 0 while none did (written):
	// its close tells the Watcher's record that the core's writes explain an
	// mtime up to it.
	lastWrite atomic.Int64
	v         VirtualFile // a file of the virtual tree (virtual.go); f is nil then
	// made is the file's attributes as Create left it (nil for a file Open
	// opened): the front end's reply to the create (Created, once: told
	// says it was), and the close of a file the core made and nobody wrote
	// through is the core's own too, when nothing changed it since
	// (noteClose).
	made *Attr
	told atomic.Bool
	app  atomic.Pointer[string] // the app of writes through the file, for the change feed (Attribute)
	// killPrivs: the file was setuid (or setgid and group-executable) when a
	// caller the core acts as (cred.go) opened it for writing; its first
	// write clears those bits (killprivs.go); privs says the open's statx
	// saw them.
	killPrivs atomic.Bool
	privs     bool
}

// Attribute makes ctx's caller the app of the writes made through fl from now
// on (the change feed's write events name it). A door sharing one open file
// between callers (NFS's descriptor cache) calls it for each WRITE; the
// string is stored again only when the app changes. A virtual file that acts
// for its writer (VirtualAttributer: a tags file) is told the caller instead.
func (fl *File) Attribute(ctx context.Context) {
	if a, ok := fl.v.(VirtualAttributer); ok {
		a.Attribute(ctx)
		return
	}
	fl.setApp(fl.fs.App(ctx))
}

func (fl *File) setApp(app string) {
	if cur := fl.app.Load(); cur == nil || *cur != app {
		fl.app.Store(&app)
	}
}

// appName is the app of the file's writes ("" unattributed).
func (fl *File) appName() string {
	if p := fl.app.Load(); p != nil {
		return *p
	}
	return ""
}

// Created is the attributes of a file Create made, read by the core after its
// last change to the file, for the front end's reply to the create: once, and
// only when Create made the file (ok false for one it opened, and after the
// first call). A front end that changes the file before it answers (NFS
// EXCLUSIVE's times) stats it instead.
func (fl *File) Created() (a Attr, ok bool) {
	if fl.made != nil && fl.told.CompareAndSwap(false, true) {
		return *fl.made, true
	}
	return Attr{}, false
}

func (f *FS) newFile(osf *os.File, p string, write bool) *File {
	fl := &File{fs: f, f: osf, path: p, write: write}
	f.openMu.Lock()
	f.open[fl] = struct{}{}
	f.openMu.Unlock()
	return fl
}

// renameOpen moves the paths of open files at or below oldPath.
// Precondition: f.ns held, so no other rename interleaves.
func (f *FS) renameOpen(oldPath, newPath string) {
	f.openMu.Lock()
	defer f.openMu.Unlock()
	for fl := range f.open {
		if fl.path == oldPath {
			fl.path = newPath
		} else if strings.HasPrefix(fl.path, oldPath+"/") {
			fl.path = newPath + fl.path[len(oldPath):]
		}
	}
}

// Path is the file's current core path: where it was opened, moved by renames
// made through the FS since.
func (fl *File) Path() string {
	if fl.v != nil {
		return fl.path // never renamed
	}
	fl.fs.openMu.Lock()
	defer fl.fs.openMu.Unlock()
	return fl.path
}

// ReadAt reads len(b) bytes at off; io.EOF as os.File does.
func (fl *File) ReadAt(b []byte, off int64) (int, error) {
	if err := fl.gone("read"); err != nil {
		return 0, err
	}
	if fl.v != nil {
		return fl.v.ReadAt(b, off)
	}
	n, err := fl.f.ReadAt(b, off)
	if err != nil && n == 0 {
		if errors.Is(err, io.EOF) {
			return n, err
		}
		return n, wrap("read", fl.Path(), err)
	}
	return n, err
}

// ReadAtCached is ReadAt for a caller that must not wait for the disk (a
// protocol front end answering in its connection's only reader): it reads only
// what the page cache holds (preadv2 RWF_NOWAIT) and reports ok=false, having
// read nothing the caller may use, when the data is not all there; the caller
// then reads with ReadAt where waiting is harmless. A filesystem that cannot
// tell gets a plain read. As ReadAt, it says io.EOF of a read the end of the
// file cut short.
func (fl *File) ReadAtCached(b []byte, off int64) (n int, ok bool, err error) {
	if err := fl.gone("read"); err != nil {
		return 0, true, err
	}
	if off < 0 {
		return 0, true, E("read", KindInvalid, fl.Path(), constError("negative offset"))
	}
	if fl.v != nil {
		return 0, false, nil // may run a query: not in a connection's only reader
	}
	rc, err := fl.f.SyscallConn()
	if err != nil {
		return 0, true, wrap("read", fl.Path(), err)
	}
	var rerr error
	plain, eof := false, false
	// Control holds the descriptor open for the call (a concurrent Close waits).
	cerr := rc.Control(func(fd uintptr) {
		for n < len(b) {
			// Raw (see FS.LstatInline): RWF_NOWAIT never waits.
			k, err := rawPreadv2(int(fd), b[n:], off+int64(n), unix.RWF_NOWAIT)
			switch {
			case err == unix.EINTR:
				continue
			case err == unix.EAGAIN:
				n, rerr = -1, nil
				return
			case err == unix.EOPNOTSUPP || err == unix.EINVAL:
				plain = true
				return
			case err != nil:
				rerr = err
				return
			case k == 0:
				eof = true
				return
			}
			n += k
		}
	})
	switch {
	case cerr != nil:
		return 0, true, wrap("read", fl.Path(), cerr)
	case n < 0:
		return 0, false, nil
	case plain:
		k, err := fl.ReadAt(b[n:], off+int64(n))
		return n + k, true, err
	case rerr != nil && n == 0:
		return 0, true, wrap("read", fl.Path(), rerr)
	case eof:
		return n, true, io.EOF
	}
	return n, true, nil
}

// SendCached sends hdr, then n bytes of the file from off, then trailer, on
// the socket s with sockio.SendFile (no copy through a user buffer), when the
// page cache holds all n bytes; ok=false, nothing sent, when it does not, when
// the kernel cannot tell (cachestat(2) is Linux 6.5+), for a virtual file, and
// on a socket without a descriptor: the caller then reads with ReadAt or
// ReadAtCached and writes what it read. Like ReadAtCached, it never waits for
// the disk, short of pages evicted between the check and the send.
//
// Once ok is true the bytes promised in hdr are all sent, or err is set and
// the connection must be closed (see sockio.SendFile); short says the file
// ended before off+n and zeros stood in for the rest (a truncation racing
// the read).
func (fl *File) SendCached(s *sockio.Conn, hdr []byte, off int64, n int, trailer []byte) (ok, short bool, err error) {
	if n <= 0 || off < 0 || fl.v != nil || !s.CanSendFile() {
		return false, false, nil
	}
	if fl.gone("read") != nil {
		return false, false, nil // ReadAt gives the caller the error
	}
	rc, cerr := fl.f.SyscallConn()
	if cerr != nil {
		return false, false, nil
	}
	// Control holds the descriptor open for the send (a concurrent Close waits).
	cerr = rc.Control(func(fd uintptr) {
		if !cached(int(fd), off, n) {
			return
		}
		ok = true
		short, err = s.SendFile(hdr, int(fd), off, n, trailer)
	})
	if cerr != nil && !ok {
		return false, false, nil
	}
	return ok, short, err
}

// cached says the page cache holds every page of the file fd from off for n
// bytes (cachestat(2), made raw: it never waits).
func cached(fd int, off int64, n int) bool {
	page := int64(os.Getpagesize())
	first, last := off/page, (off+int64(n)-1)/page
	r := unix.CachestatRange{Off: uint64(off), Len: uint64(n)}
	var st unix.Cachestat_t
	_, _, e := unix.RawSyscall6(unix.SYS_CACHESTAT, uintptr(fd), uintptr(unsafe.Pointer(&r)), uintptr(unsafe.Pointer(&st)), 0, 0, 0)
	return e == 0 && int64(st.Cache) >= last-first+1
}

// WriteAt writes b at off. The data is in the page cache when it returns; Sync
// makes it durable.
func (fl *File) WriteAt(b []byte, off int64) (int, error) {
	if err := fl.gone("write"); err != nil {
		return 0, err
	}
	if off < 0 {
		return 0, E("write", KindInvalid, fl.Path(), constError("negative offset"))
	}
	if fl.v != nil {
		return fl.v.WriteAt(b, off)
	}
	fl.fs.gate.RLock()
	n, err := fl.f.WriteAt(b, off)
	fl.fs.gate.RUnlock()
	return fl.wrote(n, err)
}

// TryWriteAt is WriteAt for a caller that must not wait for a snapshot (see
// ReadAtCached): ok=false, nothing written, while the FS is frozen.
//
// Its pwrite is made raw (see FS.LstatInline), for the 9P shim, which answers
// a Twrite in the connection's only reader. Told of the call, the Go scheduler
// wakes its monitor thread, which takes the P away from a call that lasts
// beyond 20 µs (a 64 KiB write into the page cache does), and the goroutine
// must then win a P back. Writing 256 MiB in 64 KiB Twrites, 15 rounds with
// the order rotating, load 4 on 2 cores: daemon CPU median 22 -> 15 ticks,
// wall 0.343 -> 0.254 s (diod 17 ticks, 0.335 s). The price: a buffered
// write can wait when the kernel throttles writers of dirty pages (up to its
// 200 ms pause), and meanwhile holds a P, so a garbage collection's
// stop-the-world waits for it; goroutines queued on that P are stolen by the
// others. A read is never made raw unless it cannot wait (RWF_NOWAIT); ext4
// refuses RWF_NOWAIT for buffered writes (EOPNOTSUPP on 6.18), so a write has
// no such guard.
func (fl *File) TryWriteAt(b []byte, off int64) (n int, ok bool, err error) {
	if err := fl.gone("write"); err != nil {
		return 0, true, err
	}
	if off < 0 {
		return 0, true, E("write", KindInvalid, fl.Path(), constError("negative offset"))
	}
	if fl.v != nil {
		return 0, false, nil // a tag write waits for the index
	}
	if !fl.fs.gate.TryRLock() {
		return 0, false, nil
	}
	// Raw, unlike WriteAt: see the doc comment. What the raw call cannot
	// answer as WriteAt does (an O_APPEND descriptor, which WriteAt refuses; a
	// file closed meanwhile) goes through WriteAt, for its very answer.
	var werr error
	plain := fl.appends
	if !plain {
		rc, err := fl.f.SyscallConn()
		plain = err != nil
		if err == nil {
			// Control holds the descriptor open for the call (a concurrent
			// Close waits).
			plain = rc.Control(func(fd uintptr) {
				for n < len(b) {
					k, err := rawPwrite(int(fd), b[n:], off+int64(n))
					switch {
					case err == unix.EINTR:
						continue
					case err != nil:
						werr = &os.PathError{Op: "write", Path: fl.f.Name(), Err: err}
						return
					case k == 0:
						werr = io.ErrShortWrite
						return
					}
					n += k
				}
			}) != nil
		}
	}
	if plain {
		n, werr = fl.f.WriteAt(b, off)
	}
	fl.fs.gate.RUnlock()
	n, err = fl.wrote(n, werr)
	return n, true, err
}

// wrote records a write of n bytes (for updatedAt) and wraps its error.
func (fl *File) wrote(n int, err error) (int, error) {
	if n > 0 {
		fl.touched()
		if fl.killPrivs.Load() {
			fl.dropPrivs()
		}
	}
	if err != nil {
		return n, wrap("write", fl.Path(), err)
	}
	return n, nil
}

// Truncate changes the file's size.
func (fl *File) Truncate(size int64) error {
	if err := fl.gone("truncate"); err != nil {
		return err
	}
	if fl.v != nil {
		return fl.v.Truncate(size)
	}
	fl.fs.gate.RLock()
	err := fl.f.Truncate(size)
	fl.fs.gate.RUnlock()
	if err != nil {
		return wrap("truncate", fl.Path(), err)
	}
	fl.touchedBy(true)
	return nil
}

// written reports whether data was written through the file.
func (fl *File) written() bool { return fl.lastWrite.Load() != 0 }

// touched records a change to the file's data made through it.
func (fl *File) touched() { fl.touchedBy(false) }

// touchedBy is touched; trunc says the change truncated the file.
func (fl *File) touchedBy(trunc bool) {
	var at int64
	if trunc {
		at = fl.fs.touches.addTrunc(fl.Path(), fl.appName()).UnixNano()
	} else {
		at = fl.fs.touches.add(fl.Path(), fl.appName()).UnixNano()
	}
	// The latest, also when concurrent writes return out of order.
	for {
		old := fl.lastWrite.Load()
		if at <= old || fl.lastWrite.CompareAndSwap(old, at) {
			return
		}
	}
}

// Sync makes the file's data and metadata durable (fsync), and the index's
// record of it as durable: the file's pending updatedAt is sent and the sink
// flushed.
//
// The index's changes are applied first, then the file is fsynced. A sink
// that can apply on the caller's goroutine (HereFlusher, the daemon's
// Batcher) does it here: the applier goroutine is not woken. Either way the
// index's work (CPU, and writes into the page cache: no sync of its own per
// batch) is done before the fsync instead of beside it, where it competed on
// a two-core machine with the kernel worker and the wake-ups each of the
// fsync's disk writes needs (docs/benchmarks-history.md, "NFS create: COMMIT's fsync").
// With the file's data already on its way (File.StartWriteback),
// apply-then-fsync answered a libnfs COMMIT sooner than fsync-then-apply and
// than both at once.
func (fl *File) Sync() error {
	if err := fl.gone("sync"); err != nil {
		return err
	}
	if fl.v != nil {
		return nil // a tag write is durable when it returns
	}
	if fl.written() {
		// The pending updatedAt is the last write's time, known already; sent
		// first so the flush below covers it.
		fl.fs.touches.flushPath(fl.Path())
	}
	// Nothing queued: FlushHere and Flush return at once.
	var ferr error
	if h, ok := fl.fs.sink.(HereFlusher); ok {
		ferr = h.FlushHere(context.Background())
	} else {
		ferr = fl.fs.flushSink(context.Background())
	}
	if err := fl.f.Sync(); err != nil {
		return wrap("sync", fl.Path(), err)
	}
	return ferr
}

// StartWriteback asks the kernel to start writing the file's dirty pages in
// [off, off+n) to the disk, and returns without waiting for them
// (sync_file_range with SYNC_FILE_RANGE_WRITE): a hint, which makes nothing
// durable and changes nothing a reader sees. A front end calls it for the data
// of a small file whose writer will ask for it to be made durable next (an NFS
// UNSTABLE WRITE, followed by COMMIT): the later fsync then finds the data
// written, or on its way, and has only the file's metadata left to write.
func (fl *File) StartWriteback(off, n int64) error {
	if err := fl.gone("writeback"); err != nil {
		return err
	}
	if fl.v != nil || n <= 0 || off < 0 {
		return nil
	}
	rc, err := fl.f.SyscallConn()
	if err != nil {
		return wrap("writeback", fl.Path(), err)
	}
	var werr error
	if err := rc.Control(func(fd uintptr) {
		werr = unix.SyncFileRange(int(fd), off, n, unix.SYNC_FILE_RANGE_WRITE)
	}); err != nil {
		return wrap("writeback", fl.Path(), err)
	}
	if werr != nil {
		return wrap("writeback", fl.Path(), werr)
	}
	return nil
}

// Stat returns the open file's attributes.
func (fl *File) Stat() (Attr, error) {
	if fl.v != nil {
		return fl.v.Stat()
	}
	return statx(int(fl.f.Fd()), "", "stat", fl.Path())
}

// StatInline is Stat for a caller answering in a connection's only reader, with
// the system call made raw (see FS.LstatInline).
func (fl *File) StatInline() (Attr, error) {
	if fl.v != nil {
		return fl.v.Stat()
	}
	rc, err := fl.f.SyscallConn()
	if err != nil {
		return Attr{}, wrap("stat", fl.Path(), err)
	}
	var a Attr
	// Control holds the descriptor open for the call (a concurrent Close waits).
	cerr := rc.Control(func(fd uintptr) { a, err = statxAt(int(fd), "", "stat", "", true) })
	if cerr != nil {
		return Attr{}, wrap("stat", fl.Path(), cerr)
	}
	if err != nil {
		if se, ok := err.(*Error); ok {
			se.Path = fl.Path()
		}
		return Attr{}, err
	}
	return a, nil
}

// heldForWrite returns the paths among files (path -> FileID) that a File of
// the core holds open for writing, the same file as there now.
func (f *FS) heldForWrite(files map[string]uint64) map[string]bool {
	type held struct {
		fl *File
		p  string
	}
	var hs []held
	f.openMu.Lock()
	for fl := range f.open {
		if _, ok := files[fl.path]; ok && fl.write && fl.f != nil {
			hs = append(hs, held{fl, fl.path})
		}
	}
	f.openMu.Unlock()
	out := make(map[string]bool, len(hs))
	for _, h := range hs {
		rc, err := h.fl.f.SyscallConn()
		if err != nil {
			continue
		}
		var a Attr
		// Control holds the descriptor open for the call (or fails on a
		// File closed meanwhile).
		if rc.Control(func(fd uintptr) { a, err = statx(int(fd), "", "stat", h.p) }) == nil && err == nil && a.FileID() == files[h.p] {
			out[h.p] = true
		}
	}
	return out
}

// Close releases the file; if it was written, its ChangeWrite is sent now,
// under the namespace lock: never from a Sink's Apply, which holds it.
func (fl *File) Close() error {
	p, err := fl.release(false)
	if fl.written() {
		fl.fs.touches.flushPath(p)
	}
	return err
}

// release closes the descriptor and stops renames from moving the file's path,
// which it returns. raw as for statxAt (TryClose answers in a connection's
// only reader).
func (fl *File) release(raw bool) (string, error) {
	if fl.v != nil {
		return fl.path, fl.v.Close()
	}
	fl.fs.openMu.Lock()
	delete(fl.fs.open, fl)
	p := fl.path
	fl.fs.openMu.Unlock()
	if fl.written() || fl.made != nil {
		fl.noteClose(p, raw)
	}
	return p, wrap("close", p, fl.f.Close())
}

// noteClose gives the Watcher's record of the core's own changes (ownChanges)
// the state this close leaves the file in, read from its descriptor just
// before the close(2) that makes the IN_CLOSE_WRITE: recorded first, so that
// a batch holding the event finds it. Nothing when no Watcher follows with
// inotify. Only a File written through, or one Create made: another gives
// no updatedAt that would explain the file's mtime, and its close is
// followed. A made file nobody wrote through is the core's own only while
// it is as Create left it (an NFS client's burst of empty creates had each
// close followed as a host change, under the namespace lock).
func (fl *File) noteClose(p string, raw bool) {
	oc := fl.fs.ownChanges.Load()
	if oc == nil {
		return
	}
	stat := fl.Stat
	if raw {
		stat = fl.StatInline
	}
	var mark uint64
	if fl.written() {
		mark = fl.fs.touches.mark(p)
	}
	if a, err := stat(); err == nil {
		var written time.Time
		if w := fl.lastWrite.Load(); w != 0 {
			written = time.Unix(0, w)
		}
		oc.closed(p, a, written, fl.made)
		// The burst's ChangeWrite tells the change feed this size, which
		// it would stat the file again for.
		fl.fs.touches.sized(p, mark, a.Size)
	}
}

// TryClose is Close for a caller that must not wait (see FS.TryCreate): ok=false,
// the file still open, when it was written and its ChangeWrite cannot be sent at
// once (another namespace change is under way, or the sink has no room).
func (fl *File) TryClose() (ok bool, err error) {
	if !fl.written() {
		return true, fl.Close()
	}
	f := fl.fs
	if !f.ns.TryLock() {
		return false, nil
	}
	defer f.ns.Unlock()
	if !f.sinkReady() {
		return false, nil
	}
	p, err := fl.release(true)
	// applyTouch's work, under the namespace lock this call already holds.
	taken := f.touches.take(func(k string, _ time.Time) bool { return k == p })
	for p, t := range taken {
		f.emit(context.Background(), t.change(p))
	}
	f.touches.sent(taken)
	return true, err
}
