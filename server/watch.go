package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// How the daemon follows changes that host processes make directly in the
// backing directory (Options of Watch).
const (
	WatchInotify = "inotify" // inotify on every directory; periodic rescans when it cannot
	WatchScan    = "scan"    // a full rescan every WatchOptions.Rescan
	WatchOff     = "off"     // only the next start's reconcile sees them
)

// Defaults of WatchOptions. A burst of changes is handled once it has been
// quiet for DefaultWatchQuiet, and at the latest DefaultWatchMaxDelay after
// its first change, so that a host process writing without pause is still
// followed; DefaultWatchRescan is the scan mode's period.
const (
	// maxReadPause is the longest the watcher waits after reading events
	// before it reads again (Watcher.read), so that a burst is read at once.
	maxReadPause = 5 * time.Millisecond

	DefaultWatchQuiet    = 50 * time.Millisecond
	DefaultWatchMaxDelay = time.Second
	DefaultWatchRescan   = time.Minute
)

// watchMask is what a change to the index needs to know of. Not IN_MODIFY:
// every write(2) would wake the daemon (its own NFS and 9P writes included),
// while IN_CLOSE_WRITE says the same once per writer. IN_ATTRIB, for a
// host's chmod (the index keeps each file's mode, the change feed reports a
// setattr), though the core's own creates make one each (their durable
// record is an extended attribute): such a path is left out with its create
// (ownChanges.skipOwn), and a directory's is ignored (handle). Not
// IN_DONT_FOLLOW: the watch is added through the /proc/self/fd link of a
// descriptor opened beneath the root, which must be followed (the
// descriptor's own resolution refused every symlink).
const watchMask = unix.IN_CREATE | unix.IN_CLOSE_WRITE | unix.IN_MOVED_FROM | unix.IN_MOVED_TO |
	unix.IN_DELETE | unix.IN_ONLYDIR | unix.IN_EXCL_UNLINK | unix.IN_ATTRIB

// WatchOptions configure a Watcher.
type WatchOptions struct {
	Mode     string        // WatchInotify ("" too), WatchScan or WatchOff
	Quiet    time.Duration // default DefaultWatchQuiet
	MaxDelay time.Duration // default DefaultWatchMaxDelay
	Rescan   time.Duration // default DefaultWatchRescan
	// MaxWatches caps the inotify watches (one per directory); past it the
	// watcher falls back to rescans. 0: as many as the kernel gives
	// (fs.inotify.max_user_watches).
	MaxWatches int
	Logger     *slog.Logger // nil: the FS's
}

// FollowFunc brings the index in line with the backing directory inside
// scopes: each is a path standing for itself and everything below it, ""
// for the whole directory. The Watcher calls it with namespace changes through
// the core held off and after the sink applied every change sent so far, so
// that what it finds on disk and what the change stream told the index agree:
// a file created through NFS or 9P is already in the index with its creator.
//
// Scopes may be empty when the batch holds only directories whose attributes
// changed: those, and the files of the scopes whose attributes changed, are
// in ctx (AttribOf).
type FollowFunc func(ctx context.Context, scopes []string) error

// FollowAttrib is what a batch knows of attribute changes (IN_ATTRIB: a
// chmod, a touch's times, a chown, an extended attribute), beyond its
// scopes: the change feed tells a host's touch from a write, and reports a
// host's chmod of a directory, by it.
type FollowAttrib struct {
	// Files are the dirty paths (files, in the scopes) that got an
	// IN_ATTRIB in the batch.
	Files map[string]bool
	// Dirs are the directories that got one, scopes or not: a FollowFunc
	// looks at those outside its scopes alone (their mode), without
	// walking them.
	Dirs []string
}

type followAttribKey struct{}

func withFollowAttrib(ctx context.Context, a FollowAttrib) context.Context {
	return context.WithValue(ctx, followAttribKey{}, a)
}

// AttribOf is the FollowAttrib of the batch a FollowFunc was called with
// (empty in other contexts, and for what a full rescan follows: its events
// are not all known).
func AttribOf(ctx context.Context) FollowAttrib {
	a, _ := ctx.Value(followAttribKey{}).(FollowAttrib)
	return a
}

// attrib is b's FollowAttrib; none for a full rescan.
func (b *batch) attrib() FollowAttrib {
	if b.all {
		return FollowAttrib{}
	}
	var a FollowAttrib
	for p, e := range b.events {
		if e.attrib && b.dirty[p] {
			if a.Files == nil {
				a.Files = map[string]bool{}
			}
			a.Files[p] = true
		}
	}
	for p := range b.attrDirs {
		a.Dirs = append(a.Dirs, p)
	}
	slices.Sort(a.Dirs)
	return a
}

// WatchStats is what a Watcher did so far.
type WatchStats struct {
	Mode      string // what it does now: WatchInotify, WatchScan (also after a fallback) or WatchOff
	Watches   int    // inotify watches held, one per directory
	Batches   uint64 // FollowFunc calls
	Rescans   uint64 // of them, full rescans (overflow, fallback, scan mode)
	Overflows uint64 // inotify queue overflows
	Errors    uint64 // FollowFunc calls that failed (retried, see loop)
}

// Watcher follows changes made directly in the backing directory by processes
// other than the daemon, and hands the changed paths to a FollowFunc. Changes
// the core makes itself arrive too (the kernel does not tell who made them);
// the FollowFunc finds the index already in line with them and changes nothing.
// The core's creates of regular files (and the IN_ATTRIB they make), its
// closes of files it wrote, and the files it made in a new directory it made
// before the watch on it was added are left out before that (ownChanges,
// addNewDir): they are most of what a busy daemon makes, and each would be
// read back. A directory a host process made is followed whole: it is a
// change itself (the change feed's mkdir).
//
// inotify needs one watch per directory, added as directories appear (the
// subtree of a directory moved in is walked and watched, then reported whole).
// A watch is added through an O_PATH descriptor the resolver opened beneath the
// root, so a directory swapped for a symlink is never watched outside the tree.
// On a queue overflow the next batch is a full rescan; when inotify is missing
// or the watch limit is reached, the Watcher logs why and rescans every
// Rescan instead.
type Watcher struct {
	fs    *FS
	apply FollowFunc
	opts  WatchOptions
	log   *slog.Logger

	ino *os.File // nil in scan and off modes
	// own is the core's record of the files it created, in inotify mode
	// (FS.ownChanges points to it while the Watcher follows with inotify).
	own *ownChanges

	// Owned by the loop goroutine (and by Watch before it starts).
	wds   map[int]string // watch -> directory path
	paths map[string]int // directory path -> watch

	mode                                     atomic.Value // string
	watches                                  atomic.Int64
	batches, rescans, overflows, failedCalls atomic.Uint64

	events  chan readEvents
	stop    chan struct{}
	done    sync.WaitGroup
	started atomic.Bool

	// Sync's hand-off to read: syncs waits for the next drain of the
	// inotify queue, wake cuts read's pause short, readDone is closed when
	// read returns (no drain will come).
	syncMu   sync.Mutex
	syncs    []chan struct{}
	wake     chan struct{}
	readDone chan struct{}
}

// readEvents is what read hands the loop: the events of one read, and the
// Syncs to answer once they (and every event before them) are handled.
type readEvents struct {
	evs   []inotifyEvent
	syncs []chan struct{}
}

type inotifyEvent struct {
	wd     int
	mask   uint32
	cookie uint32
	name   string
}

// Watch prepares a Watcher of the whole backing directory: in inotify mode the
// watches are in place when it returns, so a change made after it is seen,
// though handled only once Run is called (the daemon calls Run after its
// start-up reconcile, whose walk could otherwise race with the first batch).
func (f *FS) Watch(opts WatchOptions, apply FollowFunc) (*Watcher, error) {
	if opts.Mode == "" {
		opts.Mode = WatchInotify
	}
	switch opts.Mode {
	case WatchInotify, WatchScan, WatchOff:
	default:
		return nil, E("watch", KindInvalid, "", fmt.Errorf("unknown watch mode %q (inotify, scan or off)", opts.Mode))
	}
	if opts.Quiet <= 0 {
		opts.Quiet = DefaultWatchQuiet
	}
	if opts.MaxDelay <= 0 {
		opts.MaxDelay = DefaultWatchMaxDelay
	}
	if opts.MaxDelay < opts.Quiet {
		opts.MaxDelay = opts.Quiet
	}
	if opts.Rescan <= 0 {
		opts.Rescan = DefaultWatchRescan
	}
	w := &Watcher{fs: f, apply: apply, opts: opts, log: opts.Logger, wds: map[int]string{}, paths: map[string]int{},
		events: make(chan readEvents, 64), stop: make(chan struct{}), wake: make(chan struct{}, 1), readDone: make(chan struct{})}
	if w.log == nil {
		w.log = f.log
	}
	w.mode.Store(opts.Mode)
	if opts.Mode != WatchInotify {
		return w, nil
	}
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		w.fallback(fmt.Sprintf("inotify is not available: %v", err))
		return w, nil
	}
	// Non-blocking, so reads go through Go's poller and Close wakes them.
	w.ino = os.NewFile(uintptr(fd), "inotify")
	w.own = newOwnChanges()
	f.ownChanges.Store(w.own)
	if err := w.addTree("", nil); err != nil {
		w.fallback(err.Error())
		w.ino = nil
	}
	return w, nil
}

// Run starts handling changes; Close stops it.
func (w *Watcher) Run() {
	if w.started.Swap(true) || w.Mode() == WatchOff {
		return
	}
	if w.ino != nil {
		w.done.Add(1)
		go w.read()
	}
	w.done.Add(1)
	go w.loop()
}

// Close stops the Watcher and waits for a batch in progress to finish.
func (w *Watcher) Close() {
	select {
	case <-w.stop:
		return
	default:
		close(w.stop)
	}
	if w.ino != nil {
		w.ino.Close()
	}
	w.done.Wait()
	w.fs.ownChanges.CompareAndSwap(w.own, nil)
}

// Mode is what the Watcher does now (WatchScan after a fallback).
func (w *Watcher) Mode() string { return w.mode.Load().(string) }

// Stats says what the Watcher did so far. Safe for concurrent use.
func (w *Watcher) Stats() WatchStats {
	return WatchStats{Mode: w.Mode(), Watches: int(w.watches.Load()), Batches: w.batches.Load(),
		Rescans: w.rescans.Load(), Overflows: w.overflows.Load(), Errors: w.failedCalls.Load()}
}

// fallback gives inotify up for periodic rescans. Precondition: the loop is
// not running yet, or the caller is the loop.
func (w *Watcher) fallback(why string) {
	w.log.Warn("cannot follow the backing directory with inotify; rescanning it periodically instead",
		"reason", why, "every", w.opts.Rescan)
	w.mode.Store(WatchScan)
	w.fs.ownChanges.CompareAndSwap(w.own, nil) // rescans see everything anyway
	if w.ino != nil {
		w.ino.Close() // ends read, which closes events
	}
	for wd := range w.wds {
		delete(w.wds, wd)
	}
	clear(w.paths)
	w.watches.Store(0)
}

// errWatchLimit ends addTree when no more watches can be had.
type errWatchLimit struct{ why string }

func (e errWatchLimit) Error() string { return e.why }

// listing is what addTree found below a directory as it added the watches.
type listing struct {
	files      []DirEntry // every entry but directories, Name the full path
	incomplete bool       // a directory could not be watched or listed
}

// addTree watches directory p and every directory below it. A directory that
// vanished meanwhile is skipped: its removal is an event of its parent. The
// error is errWatchLimit, or one that makes inotify unusable. With l, it
// notes in l what it found below p, as each directory's watch was added.
func (w *Watcher) addTree(p string, l *listing) error {
	if err := w.addWatch(p); err != nil {
		var lim errWatchLimit
		if errors.As(err, &lim) {
			return err
		}
		if p == "" {
			return fmt.Errorf("watching the backing directory: %w", err)
		}
		w.log.Debug("not watching a directory that went away or is not one", "path", p, "err", err)
		if l != nil {
			l.incomplete = true
		}
		return nil
	}
	ents, err := w.fs.ReadDir(context.Background(), p)
	if err != nil {
		w.log.Debug("not watching below a directory that cannot be listed", "path", p, "err", err)
		if l != nil {
			l.incomplete = true
		}
		return nil
	}
	for _, e := range ents {
		q := Join(p, e.Name)
		if e.Attr.IsDir() {
			if err := w.addTree(q, l); err != nil {
				return err
			}
		} else if l != nil {
			l.files = append(l.files, DirEntry{Name: q, Attr: e.Attr})
		}
	}
	return nil
}

// addNewDir watches p, a directory created in a watched one, and what is below
// it, and puts in the batch, instead of p as a whole, each file that was there
// before the watch, when the core's own creates explain them (ownDir); false
// when they do not, and p is to be followed as a whole.
//
// The core's creates of the files of a new directory make no events until the
// directory's IN_CREATE is read and its watch added, which can be long after
// (the watcher may be in a batch meanwhile): following p as a whole read each
// of them back at the batch (every file an NFS client made in its first
// second in a new directory). The watch is added and the directory listed
// under ns, so that no create of the core is half done: each file the core
// made there before is in ownChanges and in the listing, and each it makes
// after has its events.
func (w *Watcher) addNewDir(b *batch, p string) (bool, error) {
	w.fs.ns.Lock()
	defer w.fs.ns.Unlock()
	var l listing
	if err := w.addTree(p, &l); err != nil {
		return false, err
	}
	return w.ownDir(b, p, &l), nil
}

// ownDir puts l's files in the batch as created, each for itself, and reports
// true, when the core made p and every file it created below p (ownChanges) is in l: none
// was renamed or removed before the watch, when that made no event. A file of
// l is left out by the batch only when the core created it (a host's file has
// no record) and holds that same file open for writing: its close is an event,
// with its own look at the file (ownChanges.closed). Any other file (one the
// core closed already, a host may have written before the watch) is followed.
// Precondition: ns held.
func (w *Watcher) ownDir(b *batch, p string, l *listing) bool {
	if l.incomplete || w.fs.ownChanges.Load() != w.own {
		return false
	}
	// A directory a host process made is followed as a whole: the
	// directory itself is a change (the change feed's mkdir), which
	// nothing else would report.
	if !w.own.takeDir(p) {
		return false
	}
	listed := make(map[string]uint64, len(l.files))
	for _, e := range l.files {
		listed[e.Name] = e.Attr.FileID()
	}
	if !w.own.allListed(p, listed) {
		return false
	}
	open := w.fs.heldForWrite(listed)
	for _, e := range l.files {
		b.dirty[e.Name] = true
		pe := b.events[e.Name]
		pe.creates++
		if !open[e.Name] {
			pe.other = true
		}
		b.events[e.Name] = pe
	}
	return true
}

func (w *Watcher) addWatch(p string) error {
	if w.opts.MaxWatches > 0 && len(w.wds) >= w.opts.MaxWatches {
		if _, ok := w.paths[p]; !ok {
			return errWatchLimit{fmt.Sprintf("more directories than the %d watches allowed (--watch-max)", w.opts.MaxWatches)}
		}
	}
	d, err := w.fs.res.openDir("watch", p, false)
	if err != nil {
		return err
	}
	defer d.close()
	var wd int
	err = w.inotify(func(fd int) error {
		var err error
		wd, err = unix.InotifyAddWatch(fd, "/proc/self/fd/"+strconv.Itoa(d.fd), watchMask)
		return err
	})
	switch err {
	case nil:
	case unix.ENOSPC:
		return errWatchLimit{fmt.Sprintf("the kernel's inotify watch limit (fs.inotify.max_user_watches) is reached at %d watches", len(w.wds))}
	default:
		return wrap("watch", p, err)
	}
	// One inode, one watch: a directory moved within the tree keeps its wd.
	if old, ok := w.wds[wd]; ok && old != p {
		delete(w.paths, old)
	}
	w.wds[wd] = p
	w.paths[p] = wd
	w.watches.Store(int64(len(w.wds)))
	return nil
}

// forget drops the path names of p's watch and of every watch below it: p was
// moved away. A watch the move kept inside the tree gets its new name when the
// destination is walked (addTree); the others are removed after the batch.
func (w *Watcher) forget(p string) {
	for q, wd := range w.paths {
		if Within(q, p) {
			delete(w.paths, q)
			w.wds[wd] = "\x00" // known, nameless: its events are not ours to name
		}
	}
}

// inotify runs call on the inotify descriptor, held open for the call.
// Not os.File.Fd: it switches the descriptor to blocking mode, which ties
// read's goroutine to a thread (Close can then end that read only once some
// event comes), and it reads the descriptor unguarded against Close (a data
// race a race-built daemon reported at shutdown).
func (w *Watcher) inotify(call func(fd int) error) error {
	rc, err := w.ino.SyscallConn()
	if err != nil {
		return err
	}
	var cerr error
	if err := rc.Control(func(fd uintptr) { cerr = call(int(fd)) }); err != nil {
		return err
	}
	return cerr
}

// read turns the inotify descriptor's bytes into events for the loop.
func (w *Watcher) read() {
	defer w.done.Done()
	defer close(w.readDone)
	defer close(w.events)
	buf := make([]byte, 64<<10)
	readPause := min(maxReadPause, w.opts.Quiet/4)
	pause := time.NewTimer(readPause)
	defer pause.Stop()
	for {
		n, err := w.ino.Read(buf)
		if errors.Is(err, os.ErrDeadlineExceeded) { // Sync cut the wait short
			if !w.drain(buf) {
				return
			}
			continue
		}
		if err != nil {
			if !errors.Is(err, os.ErrClosed) {
				w.log.Warn("reading inotify events failed", "err", err)
			}
			return
		}
		select {
		case w.events <- readEvents{evs: parseEvents(buf[:n])}:
		case <-w.stop:
			return
		}
		// Events come in bursts: a file created over NFS raises one per
		// system call (create, attribute, write, close). Read as each
		// landed, they woke this goroutine and the loop's several times a
		// file, on the CPUs the request in flight and its client were
		// waiting for. A pause lets a burst gather in the kernel's queue
		// (16,384 events by default; an overflow is a rescan) and be read at
		// once; the loop waits for Quiet anyway before it acts.
		pause.Reset(readPause)
		select {
		case <-pause.C:
		case <-w.wake:
			pause.Stop() // Go 1.23 timers: nothing stale is left in pause.C
			if !w.drain(buf) {
				return
			}
		case <-w.stop:
			return
		}
	}
}

// parseEvents decodes the inotify events in b.
func parseEvents(b []byte) []inotifyEvent {
	var evs []inotifyEvent
	for off := 0; off+unix.SizeofInotifyEvent <= len(b); {
		raw := (*unix.InotifyEvent)(unsafe.Pointer(&b[off]))
		end := off + unix.SizeofInotifyEvent + int(raw.Len)
		if end > len(b) {
			break
		}
		name := string(b[off+unix.SizeofInotifyEvent : end])
		if i := strings.IndexByte(name, 0); i >= 0 {
			name = name[:i]
		}
		evs = append(evs, inotifyEvent{wd: int(raw.Wd), mask: raw.Mask, cookie: raw.Cookie, name: name})
		off = end
	}
	return evs
}

// Sync returns once every change the kernel reported before the call has
// been handed to the FollowFunc, without waiting for the quiet period: the
// daemon calls it before every answer, so that what a host process did before
// a request (a file made, renamed, written) is in the index, and in the
// content index's dirty set, when the request looks. inotify queues an event during
// the system call that makes it, so draining the queue after the call began
// takes in every change finished before. In scan and off modes, and before
// Run, it returns at once (rescans keep their own pace). Its cost is one
// batch handed over early; with nothing pending, one read of an empty queue.
func (w *Watcher) Sync(ctx context.Context) error {
	if w.ino == nil || !w.started.Load() || w.Mode() != WatchInotify {
		return nil
	}
	done := make(chan struct{})
	w.syncMu.Lock()
	// Under syncMu, as drain's reset: a Sync after drain took the list
	// leaves the deadline set, and read's next Read comes back for it.
	if err := w.ino.SetReadDeadline(time.Now()); err != nil { // ends a Read waiting for events
		w.syncMu.Unlock()
		return nil // not in the poller (cannot be: Watch made it non-blocking); the quiet period's pace
	}
	w.syncs = append(w.syncs, done)
	w.syncMu.Unlock()
	select {
	case w.wake <- struct{}{}: // ends read's pause
	default:
	}
	select {
	case <-done:
		return nil
	case <-w.readDone: // inotify gave up (fallback) or Close: nothing more to wait for
		return nil
	case <-w.stop:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// drain answers the Syncs waiting: it reads every event queued now without
// waiting for more, and hands them to the loop with the Syncs, until no Sync
// waits; then Reads wait again. false when read must end.
func (w *Watcher) drain(buf []byte) bool {
	for {
		w.syncMu.Lock()
		syncs := w.syncs
		w.syncs = nil
		if len(syncs) == 0 {
			w.ino.SetReadDeadline(time.Time{})
			w.syncMu.Unlock()
			return true
		}
		w.syncMu.Unlock()
		var evs []inotifyEvent
		for {
			// A raw read of the non-blocking descriptor: EAGAIN when the
			// queue is empty (the poller's Read would refuse at once, its
			// deadline being past).
			n := 0
			err := w.inotify(func(fd int) (err error) {
				n, err = unix.Read(fd, buf)
				return err
			})
			if err == unix.EINTR {
				continue
			}
			if err == unix.EAGAIN {
				break
			}
			if err != nil {
				if !errors.Is(err, os.ErrClosed) {
					w.log.Warn("reading inotify events failed", "err", err)
				}
				return false
			}
			evs = append(evs, parseEvents(buf[:n])...)
		}
		select {
		case w.events <- readEvents{evs: evs, syncs: syncs}:
		case <-w.stop:
			return false
		}
	}
}

// batch is the changes gathered since the last FollowFunc call.
type batch struct {
	dirty map[string]bool
	// events says, per dirty path, which kinds of event it got (skipOwn).
	events map[string]pathEvents
	all    bool
	first  time.Time
	from   map[uint32]time.Time // moves out of a directory whose other half is not seen yet
	// attrDirs are the directories whose attributes changed (IN_ATTRIB),
	// followed without a scope of their own (FollowAttrib).
	attrDirs map[string]bool
}

// pathEvents is what happened at one path in a batch.
type pathEvents struct {
	creates int  // IN_CREATEs of a non-directory
	closes  bool // an IN_CLOSE_WRITE (inotify merges identical ones: no count)
	attrib  bool // an IN_ATTRIB of a non-directory
	other   bool // anything else: a move, a removal, a directory made
}

func newBatch() *batch {
	return &batch{dirty: map[string]bool{}, events: map[string]pathEvents{}, from: map[uint32]time.Time{}, attrDirs: map[string]bool{}}
}

func (b *batch) empty() bool { return !b.all && len(b.dirty) == 0 && len(b.attrDirs) == 0 }

func (w *Watcher) loop() {
	defer w.done.Done()
	b := newBatch()
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	var tick <-chan time.Time
	var ticker *time.Ticker
	setScan := func() {
		if ticker == nil {
			ticker = time.NewTicker(w.opts.Rescan)
			tick = ticker.C
		}
	}
	defer func() {
		timer.Stop()
		if ticker != nil {
			ticker.Stop()
		}
	}()
	if w.Mode() == WatchScan {
		setScan()
	}
	// A failed batch stays dirty and is retried on its own, after MaxDelay,
	// then twice as long each time up to Rescan, and no sooner on new events:
	// a lasting failure (a full disk) must not spin.
	var retry time.Duration
	var notBefore time.Time
	retryAfter := func(ok bool) {
		if ok {
			retry, notBefore = 0, time.Time{}
			return
		}
		retry = min(max(2*retry, w.opts.MaxDelay), w.opts.Rescan)
		notBefore = time.Now().Add(retry)
		timer.Reset(retry)
	}
	events := w.events
	if w.ino == nil || w.Mode() != WatchInotify {
		events = nil
	}
	for {
		select {
		case <-w.stop:
			return
		case in, ok := <-events:
			if !ok {
				select {
				case <-w.stop:
					return
				default:
				}
				events = nil
				if w.Mode() == WatchInotify {
					w.fallback("the inotify descriptor failed")
				}
				setScan()
				b.all = true
				timer.Reset(0)
				continue
			}
			for _, ev := range in.evs {
				w.handle(b, ev)
			}
			if w.Mode() != WatchInotify { // handle fell back
				events = nil
				setScan()
				b.all = true
			}
			if len(in.syncs) > 0 {
				// Every event queued before the Syncs began is in b: no
				// move's other half can still be in the kernel's queue, so
				// the batch goes now (unless a failed one waits for its
				// retry: a lasting failure must not spin at the rate of
				// greps either).
				if !b.empty() && !time.Now().Before(notBefore) {
					retryAfter(w.fire(b))
				}
				for _, done := range in.syncs {
					close(done)
				}
				continue
			}
			if b.empty() {
				continue
			}
			now := time.Now()
			if b.first.IsZero() {
				b.first = now
			}
			wait := min(w.opts.Quiet, time.Until(b.first.Add(w.opts.MaxDelay)))
			timer.Reset(max(wait, time.Until(notBefore), 0))
		case <-timer.C:
			// A move's two halves are queued together by the kernel but may be
			// read apart; a batch taken between them would drop the record
			// the other half would have moved, so it waits for the rest.
			if pending := b.recentFrom(w.opts.Quiet); pending && time.Since(b.first) < 2*w.opts.MaxDelay {
				timer.Reset(w.opts.Quiet)
				continue
			}
			retryAfter(w.fire(b))
		case <-tick:
			b.all = true
			retryAfter(w.fire(b))
		}
	}
}

func (b *batch) recentFrom(quiet time.Duration) bool {
	for c, at := range b.from {
		if time.Since(at) < quiet {
			return true
		}
		delete(b.from, c)
	}
	return false
}

// handle adds one event to the batch and keeps the watches in step with the
// directories. Runs on the loop.
func (w *Watcher) handle(b *batch, ev inotifyEvent) {
	if ev.mask&unix.IN_Q_OVERFLOW != 0 {
		w.overflows.Add(1)
		w.log.Warn("inotify queue overflowed; the next batch rescans the whole backing directory")
		b.all = true
		return
	}
	dir, known := w.wds[ev.wd]
	if ev.mask&unix.IN_IGNORED != 0 { // the watched directory is gone (or fell back)
		if known {
			delete(w.wds, ev.wd)
			if w.paths[dir] == ev.wd {
				delete(w.paths, dir)
			}
			w.watches.Store(int64(len(w.wds)))
		}
		return
	}
	if !known || dir == "\x00" || ev.name == "" {
		return
	}
	p := Join(dir, ev.name)
	isDir := ev.mask&unix.IN_ISDIR != 0
	if isDir && ev.mask&unix.IN_ATTRIB != 0 {
		// A directory's attributes (a chmod): not a scope, which would walk
		// the whole directory, but a directory the FollowFunc looks at
		// alone (FollowAttrib).
		b.attrDirs[p] = true
		return
	}
	if isDir && ev.mask&(unix.IN_DELETE|unix.IN_MOVED_FROM) != 0 {
		// Let the directory go now (dirFDs.drop): its own IN_IGNORED then
		// comes while this batch is gathered.
		w.fs.res.dirs.drop(p)
	}
	switch {
	case ev.mask&unix.IN_MOVED_FROM != 0:
		b.from[ev.cookie] = time.Now()
		if isDir {
			w.forget(p)
		}
	case ev.mask&unix.IN_MOVED_TO != 0:
		delete(b.from, ev.cookie)
	}
	if isDir && ev.mask&unix.IN_CREATE != 0 {
		own, err := w.addNewDir(b, p)
		if err != nil {
			w.fallback(err.Error())
			return
		}
		if own {
			return // p's files are in the batch, each for itself
		}
	}
	if isDir && ev.mask&unix.IN_MOVED_TO != 0 {
		if err := w.addTree(p, nil); err != nil {
			w.fallback(err.Error())
			return
		}
	}
	b.dirty[p] = true
	e := b.events[p]
	switch {
	case ev.mask&unix.IN_CREATE != 0 && !isDir:
		e.creates++
	case ev.mask&unix.IN_CLOSE_WRITE != 0:
		e.closes = true
	case ev.mask&unix.IN_ATTRIB != 0:
		e.attrib = true
	default:
		e.other = true
	}
	b.events[p] = e
}

// fire hands the batch to the FollowFunc and starts a new one; false when the
// FollowFunc failed and the batch is kept. Runs on the loop.
func (w *Watcher) fire(b *batch) bool {
	// Watches whose directory moved out of the tree: nothing of theirs is ours.
	for wd, p := range w.wds {
		if p == "\x00" {
			if w.ino != nil {
				w.inotify(func(fd int) error { _, err := unix.InotifyRmWatch(fd, uint32(wd)); return err })
			}
			delete(w.wds, wd)
		}
	}
	w.watches.Store(int64(len(w.wds)))
	if b.empty() {
		return true
	}
	ctx := context.Background()
	var scopes []string
	// Not under ns: a close's record is made before its event, and a file
	// looked at now that is as the core's close left it needs nothing
	// (ownChanges.closed); a change after this look makes an event of its
	// own, which a later batch takes.
	var same, chmodded map[string]bool
	if !b.all {
		same, chmodded = w.own.look(w.fs, b)
	}
	var attrib FollowAttrib
	err := w.fs.mutate(func() (err error) {
		// Under ns, as every create is: each file the core made before now is
		// in w.own, so an IN_CREATE of the batch that it explains is the
		// core's own and needs nothing (the change stream told the index).
		scopes = []string{""}
		if b.all {
			w.own.reset()
		} else {
			w.own.skipOwn(b, same, chmodded, time.Now().Add(-ownTTL))
			if len(b.dirty) == 0 && len(b.attrDirs) == 0 {
				return nil
			}
			scopes = scopeList(b.dirty)
			w.own.dropUnder(scopes)
		}
		attrib = b.attrib()
		w.batches.Add(1)
		if b.all {
			w.rescans.Add(1)
		}
		// A bug in the FollowFunc must not take the daemon down with it.
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("panic following changes: %v", r)
			}
		}()
		if err := w.fs.flushSink(ctx); err != nil {
			return err
		}
		return w.apply(withFollowAttrib(ctx, attrib), scopes)
	})
	if err != nil {
		// The paths stay dirty: the loop tries again (retryAfter).
		w.failedCalls.Add(1)
		w.log.Error("following changes in the backing directory failed; retrying", "scopes", len(scopes), "err", err)
		return false
	}
	clear(b.dirty)
	clear(b.events)
	clear(b.attrDirs)
	b.all = false
	b.first = time.Time{}
	return true
}

// scopeList is the dirty paths in order without those below another.
func scopeList(dirty map[string]bool) []string {
	out := make([]string, 0, len(dirty))
	for p := range dirty {
		out = append(out, p)
	}
	slices.Sort(out)
	kept := out[:0]
	for _, p := range out {
		if !belowAny(dirty, p) {
			kept = append(kept, p)
		}
	}
	return kept
}

// ownTTL bounds how long a file the core created waits in ownChanges for
// its IN_CREATE, and a close for its IN_CLOSE_WRITE: the event is read within
// milliseconds, unless it never comes (its directory was not watched yet). A
// record dropped early only costs a needless look at the file; one kept too
// long could hide a later host change.
const ownTTL = 10 * time.Second

// ownChanges is the core's own changes since the Watcher's last batch, which
// the change stream told the index and the watcher need not read back: the
// files the core created, and the states its closes left written files in.
//
// Creates: per path, the regular files the core made there (FS.create, under
// ns) whose IN_CREATE no batch has taken yet.
//
// Closes: per path, the state (identity, size, mtime, ctime) in which the
// core's last close of a file it wrote through left it (File.noteClose), when
// the core's writes explain that state: the ctime is the mtime (no change to
// the inode since the last write to its data: no host setxattr of the durable
// record, no chmod) and the mtime is no later than the updatedAt the core's
// writes gave the index. Events cannot be counted here as creates are: inotify
// merges identical unread events, so a host's IN_CLOSE_WRITE right after (or
// right before) the core's arrives as one. A batch looks at the file instead
// (look), and a path whose only events are IN_CLOSE_WRITEs is left out
// when the file is still in that state: nothing changed it since the core's
// close, and what the FollowFunc would read (identity, size, mtime, the
// durable record: a setxattr changes the ctime; in the journal, by identity,
// only the core writes it) gives the index nothing it lacks. The daemon's
// follow (index.ReconcileIn) would only note the size and mtime it saw, which
// the core's last write cleared (index.Touch) and the next start's reconcile
// notes, comparing the mtime with updatedAt as the follow would. A host's
// write to the file makes a new mtime, which the follow would compare with
// updatedAt in the same way: one within the same clock tick as the core's
// last write, of the same size, gives the same mtime and ctime and is not
// seen, but then following gives the index no other state either. What is
// not seen any more: a host's change of the durable record alone (setfattr,
// an IN_ATTRIB, which the watcher does not follow anywhere) made while the
// core had the file open, before its last write to it (or within the same
// clock tick as a write); the next start's reconcile reads it, as it does
// one made at any time to a file the core does not hold. (On file systems
// with multigrain timestamps, Linux 6.13 on, the fstat of the close makes
// any later change of the inode get a later ctime.)
//
// A batch in which a path's events are explained so (no more IN_CREATEs than
// the core made, IN_CLOSE_WRITEs only with a close whose state the file still
// has, nothing else) leaves that path out. Anything else at that path (a
// host's rename or removal, one create more than the core's, a file not as
// the core left it) keeps it, and its records are dropped, so that nothing a
// host did is hidden. A rename through the core between a close and the
// batch is a move of both names, so both are followed. Safe for concurrent
// use; a nil *ownChanges does nothing.
type ownChanges struct {
	mu     sync.Mutex
	m      map[string]ownCreate
	closes map[string]ownClose
	dirs   map[string]time.Time // directories the core made, IN_CREATE not yet taken
	// attrs are the files whose durable record the core rewrote (a tag),
	// IN_ATTRIB not yet taken. A host's chmod of such a file in the same
	// batch is not seen.
	attrs map[string]time.Time
}

// ownCreate is a path's entry in ownChanges.m. With n 0, a batch took the
// IN_CREATE of the latest before its IN_ATTRIB (its durable record, its
// chown) came: a batch reads its events, then waits for the namespace lock a
// create holds, so the create's later events fall into the next batch. The
// entry then stays, for that IN_ATTRIB alone, while the file's mode and ctime
// are as the create left them.
type ownCreate struct {
	n  int       // files created at the path, IN_CREATE not yet taken
	at time.Time // the latest
	// mode is the permission bits the latest left the file with (0 until
	// the create is done): an IN_ATTRIB the create explains (its durable
	// record, its chown) leaves them so, a host's chmod in the same batch
	// does not (look).
	mode uint32
	// ctime is the file's when the create was done (zero until then): a
	// late IN_ATTRIB (n 0) is the create's own only while it holds.
	ctime time.Time
}

// ownClose is the state a close of the core's left a file in.
type ownClose struct {
	ino, size    uint64
	btime, mtime time.Time
	ctime        time.Time
	at           time.Time // of the close
}

func newOwnChanges() *ownChanges {
	return &ownChanges{m: map[string]ownCreate{}, closes: map[string]ownClose{}, dirs: map[string]time.Time{}, attrs: map[string]time.Time{}}
}

// addAttr records that the core is rewriting p's durable record.
func (o *ownChanges) addAttr(p string) {
	if o == nil {
		return
	}
	o.mu.Lock()
	o.attrs[p] = time.Now()
	o.mu.Unlock()
}

// addDir records that the core made directory p. Precondition: ns held.
func (o *ownChanges) addDir(p string) {
	if o == nil {
		return
	}
	o.mu.Lock()
	o.dirs[p] = time.Now()
	o.mu.Unlock()
}

// takeDir reports whether the core made directory p, and forgets it.
// Precondition: ns held (no mkdir half done).
func (o *ownChanges) takeDir(p string) bool {
	if o == nil {
		return false
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	_, ok := o.dirs[p]
	delete(o.dirs, p)
	return ok
}

func (o *ownChanges) add(p string) {
	if o == nil {
		return
	}
	o.mu.Lock()
	c := o.m[p]
	o.m[p] = ownCreate{n: c.n + 1, at: time.Now()}
	o.mu.Unlock()
}

// created records the permission bits and ctime the core's create of p left
// it with. Precondition: ns held (the create's add came before, under the
// same hold).
func (o *ownChanges) created(p string, mode uint32, ctime time.Time) {
	if o == nil {
		return
	}
	o.mu.Lock()
	if c, ok := o.m[p]; ok {
		c.mode, c.ctime = mode, ctime
		o.m[p] = c
	}
	o.mu.Unlock()
}

// closed records that the core is closing p, whose descriptor's attributes
// are a: a file it wrote through, whose writes gave the index an updatedAt
// of at least written, or (written zero) one it made and did not write
// through, which Create left as made. A state the core's own changes do not
// explain replaces the path's record by nothing: the batch follows it.
func (o *ownChanges) closed(p string, a Attr, written time.Time, made *Attr) {
	if o == nil {
		return
	}
	var own bool
	if written.IsZero() {
		own = made != nil && closeOf(*made).is(a)
	} else {
		own = a.Mode.IsRegular() && a.Ctime.Equal(a.Mtime) && !a.Mtime.After(written)
	}
	o.mu.Lock()
	if own {
		o.closes[p] = closeOf(a)
	} else {
		delete(o.closes, p)
	}
	o.mu.Unlock()
}

func closeOf(a Attr) ownClose {
	return ownClose{ino: a.Ino, size: uint64(a.Size), btime: a.Btime, mtime: a.Mtime, ctime: a.Ctime, at: time.Now()}
}

func (c ownClose) is(a Attr) bool {
	return a.Mode.IsRegular() && a.Ino == c.ino && uint64(a.Size) == c.size && a.Btime.Equal(c.btime) &&
		a.Mtime.Equal(c.mtime) && a.Ctime.Equal(c.ctime)
}

// look reads what a batch needs to tell the core's own changes from a
// host's, one statx per path (outside ns; sorted, see statSorted):
//
//   - same: the paths whose events are IN_CLOSE_WRITEs (and maybe the core's
//     own IN_CREATEs) and whose files are still as the core's last close
//     left them. The close records looked at are taken: the next
//     IN_CLOSE_WRITE there needs a close of its own.
//   - chmodded: the paths whose events are the core's creates and an
//     IN_ATTRIB (and maybe closes) whose permission bits are no longer those
//     the create left: a host's chmod in the batch of the create, whose
//     IN_ATTRIB the kernel merged with the create's own (its durable record).
//     For a late IN_ATTRIB (the IN_CREATE taken by an earlier batch), also
//     one whose ctime moved since the create was done.
//
// A 9P create makes all three events in one batch; one look serves both
// questions (each had its own statx of the file).
func (o *ownChanges) look(f *FS, b *batch) (same, chmodded map[string]bool) {
	if o == nil {
		return nil, nil
	}
	type look struct {
		p      string
		closed bool // rec is the state the core's last close of p left
		rec    ownClose
		made   bool // mode (and ctime, unless zero) are what the core's create left
		mode   uint32
		ctime  time.Time
	}
	var looks []look
	o.mu.Lock()
	for p := range b.dirty {
		e := b.events[p]
		if e.other {
			continue
		}
		l := look{p: p}
		if e.closes {
			if c, ok := o.closes[p]; ok {
				delete(o.closes, p)
				l.closed, l.rec = true, c
			}
		}
		if c, ok := o.m[p]; ok && e.attrib && c.mode != 0 {
			switch {
			case e.creates > 0:
				l.made, l.mode = true, c.mode
			case c.n == 0:
				// The create's IN_ATTRIB, late: nothing may have changed
				// the file's attributes since the create was done.
				l.made, l.mode, l.ctime = true, c.mode, c.ctime
			}
		}
		if l.closed || l.made {
			looks = append(looks, l)
		}
	}
	o.mu.Unlock()
	// A path that cannot be looked at is followed when a close was to be
	// checked (the FollowFunc says what it finds there), and stays as the
	// create left it, for all the batch can tell, when a mode was.
	statSorted(f, looks, func(l look) string { return l.p }, func(l look, a Attr) {
		if l.closed && l.rec.is(a) {
			if same == nil {
				same = map[string]bool{}
			}
			same[l.p] = true
		}
		if l.made && a.Mode.IsRegular() && (UnixPerm(a.Mode) != l.mode || !l.ctime.IsZero() && !a.Ctime.Equal(l.ctime)) {
			if chmodded == nil {
				chmodded = map[string]bool{}
			}
			chmodded[l.p] = true
		}
	})
	return same, chmodded
}

// statSorted statxes each item's path, sorted by path so that each directory
// is opened once (the files of a busy client share few), and hands fn the
// attributes of those it could read. Items whose directory or file cannot be
// read are skipped.
func statSorted[T any](f *FS, items []T, path func(T) string, fn func(T, Attr)) {
	slices.SortFunc(items, func(x, y T) int { return strings.Compare(path(x), path(y)) })
	d, dir, ok := dirRef{}, "\x00", false
	for _, it := range items {
		p := path(it)
		pd, name := Split(p)
		if pd != dir {
			if ok {
				d.close()
			}
			dir = pd
			var err error
			d, err = f.res.openDir("watch", pd, false)
			ok = err == nil
		}
		if !ok {
			continue
		}
		if a, err := statx(d.fd, name, "watch", p); err == nil {
			fn(it, a)
		}
	}
	if ok {
		d.close()
	}
}

// allListed reports whether every file the core created at or below p is in
// listed. Precondition: ns held (no create half done).
func (o *ownChanges) allListed(p string, listed map[string]uint64) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	for q, c := range o.m {
		if c.n > 0 && strings.HasPrefix(q, p+"/") {
			if _, ok := listed[q]; !ok {
				return false
			}
		}
	}
	return true
}

// skipOwn removes from b's dirty paths those whose events the core's own
// creates and closes explain (same: the paths look found as the core
// left them; chmodded: those look found chmodded since the create), forgets the
// creates it matched, and the creates and closes older than stale. The
// records of the paths it keeps go with dropUnder.
// Precondition: ns held.
func (o *ownChanges) skipOwn(b *batch, same, chmodded map[string]bool, stale time.Time) {
	if o == nil {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	for p := range b.dirty {
		e := b.events[p]
		// An IN_ATTRIB is the core's when it made the file in this batch
		// or, the IN_CREATE taken, the last (its durable record, its chown),
		// or rewrote its durable record; one on its own is followed.
		_, ownAttr := o.attrs[p]
		c, late := o.m[p]
		late = late && c.n == 0
		ownAttr = (ownAttr || late) && e.attrib && !e.closes && e.creates == 0
		if e.other || e.creates > c.n || e.closes && !same[p] || e.creates == 0 && !e.closes && !ownAttr || chmodded[p] {
			continue
		}
		delete(b.dirty, p)
		if ownAttr {
			delete(o.attrs, p)
		}
		switch {
		case e.creates == 0:
			if late {
				delete(o.m, p)
			}
		case c.n > e.creates: // the others' events are still to come
			o.m[p] = ownCreate{n: c.n - e.creates, at: c.at}
		case !e.attrib && !c.ctime.IsZero():
			// Its create's IN_ATTRIB may come in a later batch.
			o.m[p] = ownCreate{at: time.Now(), mode: c.mode, ctime: c.ctime}
		default:
			delete(o.m, p)
		}
	}
	for p, c := range o.m {
		if c.at.Before(stale) {
			delete(o.m, p)
		}
	}
	for p, c := range o.closes {
		if c.at.Before(stale) {
			delete(o.closes, p)
		}
	}
	for p, at := range o.dirs {
		if at.Before(stale) {
			delete(o.dirs, p)
		}
	}
	for p, at := range o.attrs {
		if at.Before(stale) {
			delete(o.attrs, p)
		}
	}
}

// dropUnder forgets the creates and closes at or below the scopes a batch
// follows: the FollowFunc reads what is there now, and a later event there
// must be looked at again rather than matched to a record the batch covered.
func (o *ownChanges) dropUnder(scopes []string) {
	if o == nil {
		return
	}
	// A set of the scopes and a walk up each record's path: a burst's batch
	// can hold thousands of scopes while thousands of records wait, and a
	// test of every record against every scope, under the namespace lock,
	// had held up every create for seconds.
	set := make(map[string]bool, len(scopes))
	for _, s := range scopes {
		set[s] = true
	}
	under := func(p string) bool { return underAny(set, p) }
	o.mu.Lock()
	defer o.mu.Unlock()
	for p := range o.m {
		if under(p) {
			delete(o.m, p)
		}
	}
	for p := range o.closes {
		if under(p) {
			delete(o.closes, p)
		}
	}
	for p := range o.dirs {
		if under(p) {
			delete(o.dirs, p)
		}
	}
	for p := range o.attrs {
		if under(p) {
			delete(o.attrs, p)
		}
	}
}

// underAny says whether p is at or below a path of set (Within of any).
func underAny(set map[string]bool, p string) bool { return set[p] || belowAny(set, p) }

// belowAny says whether a proper ancestor of p is in set: one of its
// directories, or the root ("") for any other path.
func belowAny(set map[string]bool, p string) bool {
	if p != "" && set[""] {
		return true
	}
	for i := strings.LastIndexByte(p, '/'); i > 0; i = strings.LastIndexByte(p[:i], '/') {
		if set[p[:i]] {
			return true
		}
	}
	return false
}

// reset forgets every create and close: a full rescan follows them all.
func (o *ownChanges) reset() {
	if o == nil {
		return
	}
	o.mu.Lock()
	clear(o.m)
	clear(o.closes)
	clear(o.dirs)
	clear(o.attrs)
	o.mu.Unlock()
}
