package server

import (
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// ErrBackingGone is the cause of every error the core returns while the backing
// directory it serves is no longer the one at its configured path.
const ErrBackingGone = constError("backing directory was moved or removed")

// DefaultBackingCheck is how often the core checks, in the background, that the
// backing directory is still where it was configured.
const DefaultBackingCheck = 2 * time.Second

// backingWatch notices the backing directory being renamed away, removed or
// replaced under a running daemon. The core holds the directory open (os.Root),
// so without it the daemon would go on serving a directory that has moved
// somewhere else, or that nothing can see any more, and say all is well.
//
// The check compares the configured path's device and inode with the open
// directory's, and the open directory's link count with zero (a removed
// directory has none). It costs two stat calls, so it runs in the background
// every few seconds and at each health request, never per operation: an
// operation reads one atomic flag.
//
// Recovery: the state is the last check's result. If the very same directory
// comes back to its path (renamed back), serving resumes at the next check. A
// directory that was removed never comes back, and a different directory put
// at the path is not adopted: its contents are unknown to the index and the
// NFS handle map, so it takes a restart, whose reconcile brings the index in
// line with it.
type backingWatch struct {
	path  string // absolute, as configured
	fd    int    // the open root
	log   *slog.Logger
	bad   atomic.Bool
	mu    sync.Mutex // serialises checks, so transitions are logged once
	why   string     // guarded by mu: the last check's failure
	stop  chan struct{}
	done  chan struct{}
	every time.Duration
}

func newBackingWatch(dir string, fd int, every time.Duration, log *slog.Logger) *backingWatch {
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = dir
	}
	if every == 0 {
		every = DefaultBackingCheck
	}
	w := &backingWatch{path: abs, fd: fd, log: log, every: every, stop: make(chan struct{}), done: make(chan struct{})}
	if every > 0 {
		go w.run()
	} else {
		close(w.done)
	}
	return w
}

func (w *backingWatch) run() {
	defer close(w.done)
	t := time.NewTicker(w.every)
	defer t.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-t.C:
			w.check()
		}
	}
}

func (w *backingWatch) close() {
	select {
	case <-w.stop:
	default:
		close(w.stop)
	}
	<-w.done
}

// check looks at the directory now, updates the flag and logs a change of state.
func (w *backingWatch) check() error {
	why := w.look()
	w.mu.Lock()
	defer w.mu.Unlock()
	was := w.bad.Load()
	w.why = why
	w.bad.Store(why != "")
	switch {
	case why != "" && !was:
		w.log.Error("backing directory was moved or removed; every operation fails until it is back (or the daemon restarts)",
			"path", w.path, "reason", why)
	case why == "" && was:
		w.log.Info("backing directory is back at its path; serving it again", "path", w.path)
	}
	if why != "" {
		return E("check backing directory", KindStale, "", fmt.Errorf("%w: %s", ErrBackingGone, why))
	}
	return nil
}

// look returns why the open directory is not the one at the configured path,
// or "" if it is.
func (w *backingWatch) look() string {
	var open, now unix.Stat_t
	if err := unix.Fstat(w.fd, &open); err != nil {
		return fmt.Sprintf("the open directory cannot be examined: %v", err)
	}
	if open.Nlink == 0 {
		return "the directory was removed"
	}
	// stat follows a symlink: the configured path may be one, as it was when
	// the directory was opened.
	if err := unix.Stat(w.path, &now); err != nil {
		return fmt.Sprintf("%s: %v (renamed away or removed)", w.path, err)
	}
	if now.Dev != open.Dev || now.Ino != open.Ino {
		return fmt.Sprintf("%s is another file than the directory being served (renamed away, replaced)", w.path)
	}
	return ""
}

// CheckBacking checks now that the directory being served is still the one at
// the configured path and returns why not (KindStale, wrapping ErrBackingGone).
// The health endpoint calls it; the core also checks every few seconds on its
// own. While it fails, every operation fails the same way. Safe for concurrent
// use.
func (f *FS) CheckBacking() error {
	return f.bk.check()
}

// gone is the hot path's check: an error for op on p while the backing
// directory is known to be moved or removed, else nil.
func (f *FS) gone(op, p string) error {
	if f.bk.bad.Load() {
		return E(op, KindStale, p, ErrBackingGone)
	}
	return nil
}

// gone is FS.gone for an open file: data written or read through a descriptor
// of the old directory would land where no client can see it.
func (fl *File) gone(op string) error {
	if fl.fs.bk.bad.Load() {
		return E(op, KindStale, fl.Path(), ErrBackingGone)
	}
	return nil
}
