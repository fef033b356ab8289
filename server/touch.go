package server

import (
	"context"
	"strings"
	"sync"
	"time"
)

// touchQueue coalesces data writes into one ChangeWrite per path per quiet period.
// NFSv3 has no close, so without it every 1 MiB WRITE would rewrite the index.
type touchQueue struct {
	quiet time.Duration
	apply func(p string, t touch)

	mu      sync.Mutex
	pending map[string]touch // path -> its burst
	writes  uint64           // the writes noted so far: each burst's mark
	// inflight counts, per path, touches taken from pending whose ChangeWrite
	// is being sent: Unsettled reports them too, so that a path is never
	// in neither place between take and the sink (see FS.Unsettled).
	inflight map[string]int
	stop     chan struct{}
	done     chan struct{}
}

// touch is one path's pending burst of writes.
type touch struct {
	at    time.Time // the last write
	trunc bool      // the burst truncated the file (the change feed says so)
	app   string    // the app of the last write ("" unattributed), for the feed
	mark  uint64    // the last write's number (touchQueue.writes)
	// size is the file's size as a close after the last write found it
	// (sized), so that the change feed need not stat the file (Change.Sized).
	size  int64
	sized bool
}

func newTouchQueue(quiet time.Duration, apply func(string, touch)) *touchQueue {
	q := &touchQueue{quiet: quiet, apply: apply, pending: map[string]touch{},
		inflight: map[string]int{}, stop: make(chan struct{}), done: make(chan struct{})}
	go q.run()
	return q
}

func (q *touchQueue) run() {
	defer close(q.done)
	t := time.NewTicker(q.quiet / 2)
	defer t.Stop()
	for {
		select {
		case <-q.stop:
			return
		case now := <-t.C:
			q.flushOlder(now.Add(-q.quiet))
		}
	}
}

// add notes a write to p made now, and returns the time it will send (at the
// latest with the next flush; the clock is read under mu, so that a path's
// pending time is the latest of its writes').
func (q *touchQueue) add(p, app string) time.Time {
	q.mu.Lock()
	now := time.Now()
	t, ok := q.pending[p]
	q.writes++
	q.pending[p] = touch{at: now, trunc: ok && t.trunc, app: app, mark: q.writes}
	q.mu.Unlock()
	return now
}

// addTrunc is add for a truncation (O_TRUNC, a size set): the burst it
// belongs to is reported with Change.Trunc.
func (q *touchQueue) addTrunc(p, app string) time.Time {
	q.mu.Lock()
	now := time.Now()
	q.writes++
	q.pending[p] = touch{at: now, trunc: true, app: app, mark: q.writes}
	q.mu.Unlock()
	return now
}

// mark is the mark of p's pending burst's last write (0: none pending), to
// hand to sized after a stat of the file.
func (q *touchQueue) mark(p string) uint64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.pending[p].mark
}

// sized notes size as p's size after its burst's last write, if that is
// still the write mark names: a write after the stat leaves the size unknown.
func (q *touchQueue) sized(p string, mark uint64, size int64) {
	q.mu.Lock()
	if t, ok := q.pending[p]; ok && mark != 0 && t.mark == mark {
		t.size, t.sized = size, true
		q.pending[p] = t
	}
	q.mu.Unlock()
}

func (q *touchQueue) drop(p string) {
	q.mu.Lock()
	for k := range q.pending {
		if Within(k, p) {
			delete(q.pending, k)
		}
	}
	q.mu.Unlock()
}

func (q *touchQueue) rename(oldPath, newPath string) {
	q.mu.Lock()
	for k, v := range q.pending {
		if k == oldPath {
			delete(q.pending, k)
			q.pending[newPath] = v
		} else if strings.HasPrefix(k, oldPath+"/") {
			delete(q.pending, k)
			q.pending[newPath+k[len(oldPath):]] = v
		}
	}
	q.mu.Unlock()
}

func (q *touchQueue) take(keep func(p string, at time.Time) bool) map[string]touch {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := map[string]touch{}
	for k, v := range q.pending {
		if keep(k, v.at) {
			out[k] = v
			delete(q.pending, k)
			q.inflight[k]++
		}
	}
	return out
}

// sent ends the inflight state of touches taken (take) once their
// ChangeWrite is in the sink.
func (q *touchQueue) sent(taken map[string]touch) {
	q.mu.Lock()
	for k := range taken {
		if q.inflight[k]--; q.inflight[k] <= 0 {
			delete(q.inflight, k)
		}
	}
	q.mu.Unlock()
}

// unsettled lists the paths written whose ChangeWrite is not in the sink yet.
func (q *touchQueue) unsettled() []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := make([]string, 0, len(q.pending)+len(q.inflight))
	for k := range q.pending {
		out = append(out, k)
	}
	for k := range q.inflight {
		if _, ok := q.pending[k]; !ok {
			out = append(out, k)
		}
	}
	return out
}

func (q *touchQueue) flushOlder(before time.Time) {
	q.applyAll(q.take(func(_ string, at time.Time) bool { return at.Before(before) }))
}

func (q *touchQueue) flushPath(p string) {
	q.applyAll(q.take(func(k string, _ time.Time) bool { return k == p }))
}

func (q *touchQueue) flush() {
	q.applyAll(q.take(func(string, time.Time) bool { return true }))
}

func (q *touchQueue) applyAll(taken map[string]touch) {
	defer q.sent(taken)
	for p, t := range taken {
		q.apply(p, t)
	}
}

func (q *touchQueue) close() {
	close(q.stop)
	<-q.done
	q.flush()
}

// applyTouch sends a coalesced ChangeWrite. It takes the namespace lock so that it
// is ordered with renames and removes of the same path.
func (f *FS) applyTouch(p string, t touch) {
	f.ns.Lock()
	defer f.ns.Unlock()
	f.emit(context.Background(), t.change(p))
}

// change is the ChangeWrite of p's burst t.
func (t touch) change(p string) Change {
	return Change{Op: ChangeWrite, Path: p, App: t.app, Time: t.at, Trunc: t.trunc, Type: TypeFile, Size: t.size, Sized: t.sized}
}

// Unsettled lists the paths written through the core whose ChangeWrite has not
// reached the sink yet (the write-quiet debounce holds it): with the sink
// flushed after this call, every write that returned before it is either
// here or in what the sink has applied. The content index reads these paths
// directly, so grep never answers from bytes older than a write it followed.
func (f *FS) Unsettled() []string { return f.touches.unsettled() }
