package feed

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Defaults of the history's bound (--changes-keep, --changes-keep-for).
const (
	DefaultKeep    = 100_000
	DefaultKeepFor = 7 * 24 * time.Hour
)

// FileName is the log's name in the index directory.
const FileName = "changes.log"

// Options configure a Log.
type Options struct {
	// Path is the log file (the index directory's FileName); "" keeps the
	// history in memory only (every start is a new epoch).
	Path string
	// Keep and KeepFor bound the history: at most Keep events, none older
	// than KeepFor. Zero or less: the defaults.
	Keep    int
	KeepFor time.Duration
	// Fresh starts a new epoch whatever the file holds: the index was
	// rebuilt, so what a client built from the old history is to be listed
	// again.
	Fresh  bool
	Logger *slog.Logger
	// Fill, when set, completes an event handed to Enqueue on the log's own
	// goroutine, before it is numbered: what the recorder could not know
	// cheaply where it stood (a write's size needs a stat, unless its close
	// told it: Event.Sized).
	Fill func(e *Event)
}

// maxQueued bounds the events Enqueue holds before the writer has taken
// them; beyond it Enqueue waits, so a stalled disk slows recorders instead of
// growing memory without bound.
const maxQueued = 1 << 16

// Log is the change history. Append and Read may be called concurrently from
// any goroutine.
type Log struct {
	opt Options
	log *slog.Logger

	// wmu is held by an appender from numbering its events until they are
	// published: appends are numbered, written and published one at a time,
	// in order. It also guards the file.
	wmu       sync.Mutex
	f         *os.File // nil: memory only, or the file failed (see fail)
	inFile    int      // events in the file, for compaction
	buf       []byte
	fileStart uint64 // the rev before the file's first event (its header's base)

	// The queue between Enqueue and the writer goroutine (run).
	qmu      sync.Mutex
	qcond    *sync.Cond
	queue    []Event // the batches enqueued, one after the other
	spare    []Event // the writer's last queue, reused as the next
	qbatches int     // batches in queue
	enqueued uint64  // batches ever enqueued
	written  uint64  // batches ever appended
	qclosed  bool
	idle     bool          // the writer waits for a first batch: Enqueue wakes it
	kick     chan struct{} // ends the writer's gather at once (Settle, Close)
	done     chan struct{}

	mu     sync.Mutex
	epoch  uint64
	ring   events // the kept events, oldest first; the i-th oldest's Rev is head-ring.Len()+1+i
	head   uint64 // the newest event's rev (0: none yet)
	wake   chan struct{}
	fresh  string // why this open started a new epoch ("" if it continued one)
	closed bool
}

// header is the log file's first line, fixed in size so that it can be
// rewritten in place.
type header struct {
	Format int    `json:"semfsChanges"`
	Epoch  string `json:"epoch"`
	Base   uint64 `json:"base"`   // the rev before the file's first event
	Synced bool   `json:"synced"` // closed cleanly: every event is on disk
}

const headerSize = 256

// Open opens (or starts) the history at opt.Path.
func Open(opt Options) (_ *Log, err error) {
	if opt.Keep <= 0 {
		opt.Keep = DefaultKeep
	}
	if opt.KeepFor <= 0 {
		opt.KeepFor = DefaultKeepFor
	}
	l := &Log{opt: opt, log: opt.Logger, wake: make(chan struct{}), done: make(chan struct{}), kick: make(chan struct{}, 1)}
	l.qcond = sync.NewCond(&l.qmu)
	defer func() {
		if err == nil {
			go l.run()
		}
	}()
	if l.log == nil {
		l.log = slog.Default()
	}
	if opt.Path == "" {
		l.epoch = newEpoch()
		l.fresh = "kept in memory only"
		return l, nil
	}
	why := "asked to start afresh (the index was rebuilt or is new)"
	if _, err := os.Stat(opt.Path); errors.Is(err, os.ErrNotExist) {
		why = "no log yet"
	} else if !opt.Fresh {
		why = l.load()
	}
	if why != "" {
		l.epoch, l.ring, l.head = newEpoch(), events{}, 0
		l.fresh = why
		if err := l.rewrite(); err != nil {
			return nil, err
		}
		if !strings.HasPrefix(why, "no log yet") {
			l.log.Warn("change history starts afresh: clients holding a cursor are answered reset and list again", "why", why, "log", opt.Path)
		}
		return l, nil
	}
	// Continuing: from now on the file is not known to be synced until Close.
	if err := l.writeHeader(false); err != nil {
		return nil, err
	}
	return l, nil
}

func newEpoch() uint64 {
	var b [8]byte
	for {
		rand.Read(b[:])
		if e := binary.LittleEndian.Uint64(b[:]) >> 1; e != 0 {
			return e
		}
	}
}

// load reads the file into the ring and leaves it open for appending; it
// returns why the history cannot be continued ("" when it can).
func (l *Log) load() string {
	f, err := os.OpenFile(l.opt.Path, os.O_RDWR, 0o600)
	if errors.Is(err, os.ErrNotExist) {
		return "no log yet"
	}
	if err != nil {
		return "cannot open the log: " + err.Error()
	}
	r := bufio.NewReaderSize(f, 1<<16)
	hb := make([]byte, headerSize)
	var h header
	if _, err := io.ReadFull(r, hb); err != nil || json.Unmarshal(bytes.TrimSpace(hb), &h) != nil || h.Format != 1 {
		f.Close()
		return "the log's header is unreadable"
	}
	ep, err := parseHex(h.Epoch)
	if err != nil {
		f.Close()
		return "the log's header is unreadable"
	}
	if !h.Synced {
		// Recording runs after the commit (off the reply path), so a crash
		// can fall between a change and its event: the log cannot prove it
		// holds every change, and a silent gap is what must never happen.
		f.Close()
		return "the daemon stopped without closing the log (a crash or SIGKILL), so changes it committed just before may be missing from it"
	}
	cut := time.Now().Add(-l.opt.KeepFor)
	var ring events
	head := h.Base
	good := int64(headerSize)
	n := 0
	for {
		line, err := r.ReadBytes('\n')
		if err == io.EOF {
			break // a line without its newline: a write torn by the crash, never published
		}
		if err != nil {
			f.Close()
			return "reading the log: " + err.Error()
		}
		var e Event
		if json.Unmarshal(line, &e) != nil || e.Rev != head+1 {
			f.Close()
			return fmt.Sprintf("the log is damaged after rev %d", head)
		}
		head = e.Rev
		good += int64(len(line))
		n++
		if e.At.After(cut) {
			ring.push(e)
			if ring.Len() > l.opt.Keep {
				ring.drop(1)
			}
		}
	}
	if err := f.Truncate(good); err != nil {
		f.Close()
		return "cannot trim the log's torn tail: " + err.Error()
	}
	if _, err := f.Seek(good, io.SeekStart); err != nil {
		f.Close()
		return "cannot seek the log: " + err.Error()
	}
	l.f, l.inFile, l.fileStart = f, n, h.Base
	l.epoch, l.ring, l.head = ep, ring, head
	return ""
}

func parseHex(s string) (uint64, error) {
	c, err := ParseCursor(cursorPrefix + s + ".0")
	return c.Epoch, err
}

// writeHeader rewrites the file's header in place and syncs it.
// Precondition: wmu held, or no other user yet.
func (l *Log) writeHeader(synced bool) error {
	b := l.headerBytes(synced)
	if _, err := l.f.WriteAt(b, 0); err != nil {
		return fmt.Errorf("change log %s: %w", l.opt.Path, err)
	}
	if err := l.f.Sync(); err != nil {
		return fmt.Errorf("change log %s: %w", l.opt.Path, err)
	}
	return nil
}

func (l *Log) headerBytes(synced bool) []byte {
	h := header{Format: 1, Epoch: fmt.Sprintf("%x", l.epoch), Base: l.fileStart, Synced: synced}
	b, _ := json.Marshal(h)
	out := bytes.Repeat([]byte{' '}, headerSize)
	copy(out, b)
	out[headerSize-1] = '\n'
	return out
}

// rewrite replaces the file with one holding the ring (compaction, a new
// epoch), by a rename, so that a crash leaves the old file or the new one.
// Not synced: a stop without Close is a new epoch anyway (header.Synced).
// Precondition: wmu held, or no other user yet.
func (l *Log) rewrite() error {
	l.mu.Lock()
	ring := l.ring.view()
	l.fileStart = l.head - uint64(ring.n)
	l.mu.Unlock()
	tmp := l.opt.Path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("change log %s: %w", l.opt.Path, err)
	}
	w := bufio.NewWriterSize(f, 1<<16)
	w.Write(l.headerBytes(false))
	var line []byte
	for i := range ring.n {
		line = appendJSON(line[:0], ring.at(i))
		w.Write(line)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("change log %s: %w", l.opt.Path, err)
	}
	if err := os.Rename(tmp, l.opt.Path); err != nil {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("change log %s: %w", l.opt.Path, err)
	}
	if l.f != nil {
		l.f.Close()
	}
	l.f, l.inFile = f, ring.n
	return nil
}

// fail gives up on the file after a write failed: it is removed, so that the
// next start cannot continue a history with a hole in it (a new epoch, every
// cursor reset). This run goes on in memory.
// Precondition: wmu held.
func (l *Log) fail(err error) {
	l.log.Error("the change log cannot be written; the history goes on in memory and the next start begins a new one", "log", l.opt.Path, "err", err)
	l.f.Close()
	l.f = nil
	os.Remove(l.opt.Path)
}

// Enqueue hands evs to the log's writer goroutine, which fills (Options.Fill),
// numbers and appends them after everything enqueued before, and returns at
// once (unless maxQueued events wait already). evs is copied: the caller
// may reuse it (an array on its stack, say). This is how recorders on a reply path record: the numbering, encoding and
// write happen elsewhere. Safe for concurrent use; batches keep the order of
// the Enqueue calls.
func (l *Log) Enqueue(evs []Event) {
	if len(evs) == 0 {
		return
	}
	l.qmu.Lock()
	defer l.qmu.Unlock()
	for len(l.queue) >= maxQueued && !l.qclosed {
		l.qcond.Wait()
	}
	if l.qclosed {
		return
	}
	l.queue = append(l.queue, evs...)
	l.qbatches++
	l.enqueued++
	if l.idle {
		// Only the first batch of a gather wakes the writer: a wake-up per
		// batch (one per COMMIT of a create burst) cost the reply path a
		// futex call each.
		l.idle = false
		l.qcond.Broadcast()
	}
}

// gather is how long the writer lets batches gather after the first before
// it writes them, with one write(2) and one wake-up of the readers: a create
// burst enqueues a batch per COMMIT. A reader's Settle, and Close, end it at
// once, so no reader waits for it; a long poll sees an event at most this
// much later.
const gather = 5 * time.Millisecond

// kickWriter ends the writer's gather, if it is in one.
func (l *Log) kickWriter() {
	select {
	case l.kick <- struct{}{}:
	default:
	}
}

// Settle waits until every batch enqueued before the call is in the
// history (readers call it first, so that they see the changes made before
// they asked).
func (l *Log) Settle(ctx context.Context) error {
	l.qmu.Lock()
	defer l.qmu.Unlock()
	target := l.enqueued
	if l.written >= target {
		return nil
	}
	l.kickWriter()
	stop := context.AfterFunc(ctx, func() {
		l.qmu.Lock()
		l.qcond.Broadcast()
		l.qmu.Unlock()
	})
	defer stop()
	for l.written < target && !l.qclosed {
		if err := ctx.Err(); err != nil {
			return err
		}
		l.qcond.Wait()
	}
	return nil
}

// run is the writer goroutine: it appends enqueued batches in order until
// Close, then what is left.
func (l *Log) run() {
	defer close(l.done)
	timer := time.NewTimer(gather)
	timer.Stop()
	for {
		l.qmu.Lock()
		for len(l.queue) == 0 && !l.qclosed {
			l.idle = true
			l.qcond.Wait()
		}
		l.idle = false
		if !l.qclosed {
			l.qmu.Unlock()
			timer.Reset(gather)
			select {
			case <-timer.C:
			case <-l.kick:
				timer.Stop()
			}
			l.qmu.Lock()
		}
		// The queue is taken whole and swapped with the last one, which
		// Append copied into the ring: no allocation per gather.
		all, batches := l.queue, l.qbatches
		l.queue, l.spare, l.qbatches = l.spare[:0], nil, 0
		closed := l.qclosed
		l.qmu.Unlock()
		if l.opt.Fill != nil {
			for i := range all {
				l.opt.Fill(&all[i])
			}
		}
		l.Append(all...)
		l.qmu.Lock()
		if cap(all) <= 4096 { // a burst's large queue goes back to the heap
			l.spare = all[:0]
		}
		l.written += uint64(batches)
		l.qcond.Broadcast()
		l.qmu.Unlock()
		if closed && batches == 0 {
			return
		}
	}
}

// Append numbers evs (in place) and records them, in order, at once. The
// events are in the file (unsynced) before any reader sees them.
func (l *Log) Append(evs ...Event) {
	if len(evs) == 0 {
		return
	}
	l.wmu.Lock()
	defer l.wmu.Unlock()
	l.mu.Lock()
	next, closed := l.head+1, l.closed
	l.mu.Unlock()
	if closed {
		return
	}
	now := time.Now()
	for i := range evs {
		evs[i].Rev = next + uint64(i)
		if evs[i].At.IsZero() {
			evs[i].At = now
		}
	}
	if l.f != nil {
		l.buf = l.buf[:0]
		for i := range evs {
			l.buf = appendJSON(l.buf, &evs[i])
		}
		if _, err := l.f.Write(l.buf); err != nil {
			l.fail(err)
		} else {
			l.inFile += len(evs)
		}
	}
	l.mu.Lock()
	l.ring.push(evs...)
	l.head += uint64(len(evs))
	l.trimLocked(now)
	close(l.wake)
	l.wake = make(chan struct{})
	l.mu.Unlock()
	if l.f != nil && l.inFile > 2*l.opt.Keep+1024 {
		if err := l.rewrite(); err != nil {
			l.fail(err)
		}
	}
}

// trimLocked drops what the bound no longer keeps. Precondition: l.mu held.
func (l *Log) trimLocked(now time.Time) {
	n := l.ring.Len()
	drop := max(0, n-l.opt.Keep)
	cut := now.Add(-l.opt.KeepFor)
	for drop < n && l.ring.at(drop).At.Before(cut) {
		drop++
	}
	l.ring.drop(drop)
}

// Stats describe the history for `semfs status`.
type Stats struct {
	Cursor  string    `json:"cursor"`           // the newest position
	Events  int       `json:"events"`           // events kept
	Oldest  uint64    `json:"oldest,omitempty"` // the oldest kept event's rev
	Since   time.Time `json:"since,omitzero"`   // and its time
	Keep    int       `json:"keep"`
	KeepFor string    `json:"keepFor"`
	Fresh   string    `json:"fresh,omitempty"` // why this start began a new history
	Log     string    `json:"log,omitempty"`
}

// Stats reports the history's size.
func (l *Log) Stats() Stats {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := Stats{Cursor: Cursor{l.epoch, l.head}.String(), Events: l.ring.Len(), Keep: l.opt.Keep,
		KeepFor: l.opt.KeepFor.String(), Fresh: l.fresh, Log: l.opt.Path}
	if s.Events > 0 {
		s.Oldest, s.Since = l.ring.at(0).Rev, l.ring.at(0).At
	}
	return s
}

// Fresh says why this open began a new history ("" when it continued one).
func (l *Log) Fresh() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.fresh
}

// Head is the cursor after the newest event.
func (l *Log) Head() Cursor {
	l.mu.Lock()
	defer l.mu.Unlock()
	return Cursor{l.epoch, l.head}
}

// Page is one answer of Read.
type Page struct {
	Cursor Cursor  // where the next Read starts
	Events []Event // in rev order
	Reset  bool    // since is not in this history: list again from Cursor
	More   bool    // the limit cut the answer short
}

// Read returns up to limit events after since that keep says to keep (keep
// may rewrite them, as See does; nil keeps all), without waiting. Events
// skipped by keep still move the cursor, so a filtered reader's cursor keeps
// up. since outside the kept history (another epoch, older than the oldest
// kept event, newer than the newest) is a Reset with the newest cursor.
func (l *Log) Read(since Cursor, limit int, keep func(Event) (Event, bool)) Page {
	l.mu.Lock()
	epoch, head, ring := l.epoch, l.head, l.ring.view()
	l.mu.Unlock()
	first := head - uint64(ring.n) + 1
	if since.Epoch != epoch || since.Rev > head || since.Rev+1 < first {
		return Page{Cursor: Cursor{epoch, head}, Reset: true}
	}
	// The kept events are never written again: read without the lock.
	p := Page{Cursor: Cursor{epoch, head}}
	for i := int(since.Rev + 1 - first); i < ring.n; i++ {
		e := *ring.at(i)
		if limit > 0 && len(p.Events) >= limit {
			p.Cursor.Rev, p.More = e.Rev-1, true
			break
		}
		if keep != nil {
			var ok bool
			if e, ok = keep(e); !ok {
				continue
			}
		}
		p.Events = append(p.Events, e)
	}
	return p
}

// Last returns up to n of the newest events that keep keeps, oldest first.
func (l *Log) Last(n int, keep func(Event) (Event, bool)) []Event {
	l.mu.Lock()
	ring := l.ring.view()
	l.mu.Unlock()
	var out []Event
	for i := ring.n - 1; i >= 0 && len(out) < n; i-- {
		e := *ring.at(i)
		if keep != nil {
			var ok bool
			if e, ok = keep(e); !ok {
				continue
			}
		}
		out = append(out, e)
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// Wait returns when the history holds an event after since, ctx ends, or
// the log closes; it holds no thread meanwhile (a channel closed by the next
// Append). It reports whether there may be something new to read: false
// when ctx ended or the log is closed.
func (l *Log) Wait(ctx context.Context, since Cursor) bool {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return false
	}
	if since.Epoch != l.epoch || since.Rev != l.head {
		l.mu.Unlock()
		return true
	}
	ch := l.wake
	l.mu.Unlock()
	select {
	case <-ch:
		l.mu.Lock()
		defer l.mu.Unlock()
		return !l.closed
	case <-ctx.Done():
		return false
	}
}

// Close appends what is enqueued, syncs the log and marks it closed cleanly,
// so that the next start continues it (also after a reboot). Events recorded after Close
// are dropped; waiting readers wake.
func (l *Log) Close() error {
	l.qmu.Lock()
	l.qclosed = true
	l.qcond.Broadcast()
	l.qmu.Unlock()
	l.kickWriter()
	<-l.done
	l.wmu.Lock()
	defer l.wmu.Unlock()
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	close(l.wake)
	l.wake = make(chan struct{})
	l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Sync()
	if err == nil {
		err = l.writeHeader(true)
	}
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	l.f = nil
	if err != nil {
		return fmt.Errorf("change log %s: %w", l.opt.Path, err)
	}
	return nil
}

// PathIn is the log's path in index directory dir.
func PathIn(dir string) string { return filepath.Join(dir, FileName) }
