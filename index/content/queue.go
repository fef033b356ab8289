package content

import (
	"context"
	"strings"
	"sync"
	"time"
)

// Queue is the work queue of an index built from files' contents (this
// package's trigram index, index/passage's passages): the core's change
// stream marks paths dirty and queues them, renames and removals wait as
// pending changes for the index to apply to its entries, and one worker takes
// paths off the queue. Apply takes only the queue's own lock, so the change
// stream never waits behind a search, a read or a Save. Lock order: an index's
// own lock, then the queue's.
//
// A path's generation is the count of marks when it was last marked: a worker
// that read a file at generation g installs what it read only if the path is
// still dirty at g (Done), and a walk begun at generation since (Begin) gives
// way to any change newer than it.
type Queue struct {
	mu      sync.Mutex
	dirty   Table[uint64] // path -> generation of its latest change; in order, as a rename or removal clears the marks below one directory
	queue   []string
	queued  map[string]bool // in queue: a path written while being read is queued again
	pending []Change
	gen     uint64
	wake    chan struct{}
	idle    *sync.Cond // on mu: the queue is empty and no path is being worked on
	busy    bool
}

// NewQueue returns an empty queue.
func NewQueue() *Queue {
	q := &Queue{queued: map[string]bool{}, wake: make(chan struct{}, 1)}
	q.idle = sync.NewCond(&q.mu)
	return q
}

// Apply takes changes of the core's change stream. It never reads a file:
// written paths become dirty and are queued; renames and removals move or
// forget the dirty marks at once and wait in Pending for the index's entries.
func (q *Queue) Apply(cs []Change) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, c := range cs {
		switch c.Op {
		case Written:
			q.markLocked(c.Path)
		case Renamed:
			q.pending = append(q.pending, c)
			// Marks the moved file or tree replaced go; its own follow it,
			// each marked anew (a new generation, queued to be read).
			q.dirty.Rename(c.Path, c.NewPath, q.dirty.Delete, func(_, np string, _ uint64) { q.markLocked(np) })
			if !c.IsDir {
				// Read again under its new name: a write to the old name
				// may still be on its way (the core's debounce sends it
				// under the name it had), and must not leave the moved
				// entry's older bytes standing.
				q.markLocked(c.NewPath)
			}
		case Removed:
			q.pending = append(q.pending, c)
			for _, p := range q.dirty.Within(c.Path) {
				q.dirty.Delete(p)
			}
		}
	}
	q.kick()
}

// Mark queues paths to be read again (hard links of a file just read).
func (q *Queue) Mark(paths ...string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, p := range paths {
		q.markLocked(p)
	}
	q.kick()
}

func (q *Queue) markLocked(p string) {
	q.gen++
	if !q.queued[p] {
		q.queued[p] = true
		q.queue = append(q.queue, p)
	}
	q.dirty.Put(p, q.gen)
}

func (q *Queue) kick() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// Within reports whether p is dir or below it ("" is the root).
func Within(p, dir string) bool {
	return p == dir || dir == "" || strings.HasPrefix(p, dir) && p[len(dir)] == '/'
}

// Entry is what a reconcile compares of an index's entry for a path: the
// size and mtime (UnixNano) it was read at, and its dirty generation.
type Entry struct {
	Size, MTime int64
	Gen         uint64
}

// Compare is a reconcile's comparison of a walk begun at since, of scopes
// (nil: the whole export), with an index's table (the content and the
// passage index each keep one; entry reads an element): stale are the walked
// files whose size or mtime differs from their entry, or that have none; gone
// the entries in a walked scope the walk did not see and no change after
// since touched. Both go to Queue.Reconcile. A scoped walk's comparison
// takes time in proportion to the walk and the entries in its scopes (a
// watcher's batch, which a request may be waiting for: Watcher.Sync), not to
// the table.
func Compare[E any](table *Table[E], entry func(E) Entry, since uint64, scopes []string, walked []FileStat) (gone, stale []string) {
	seen := make(map[string]bool, len(walked))
	for _, f := range walked {
		seen[f.Path] = true
		e, ok := table.Get(f.Path)
		if !ok {
			stale = append(stale, f.Path)
			continue
		}
		if en := entry(e); en.Size != f.Size || en.MTime != f.MTime.UnixNano() {
			stale = append(stale, f.Path)
		}
	}
	if scopes == nil {
		for p, e := range table.All() {
			if entry(e).Gen <= since && !seen[p] {
				gone = append(gone, p)
			}
		}
		return gone, stale
	}
	// Scopes may nest (a directory and a file in it): each path once.
	var done map[string]bool
	if len(scopes) > 1 {
		done = map[string]bool{}
	}
	for _, s := range scopes {
		for _, p := range table.Within(s) {
			if done != nil {
				if done[p] {
					continue
				}
				done[p] = true
			}
			if e, _ := table.Get(p); entry(e).Gen <= since && !seen[p] {
				gone = append(gone, p)
			}
		}
	}
	return gone, stale
}

// Begin returns the generation a walk for a reconcile starts at.
func (q *Queue) Begin() uint64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.gen
}

// Reconcile applies a walk begun at since to the queue, under the index's own
// lock: each of gone (entries the walk did not see) is dropped through drop
// unless a change newer than the walk touched it, and each of stale (files
// whose size or mtime differ from their entries) is queued unless a newer
// change queued it already.
func (q *Queue) Reconcile(since uint64, gone, stale []string, drop func(p string)) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, p := range gone {
		if g, ok := q.dirty.Get(p); ok && g > since {
			continue
		}
		q.dirty.Delete(p)
		drop(p)
	}
	for _, p := range stale {
		if g, ok := q.dirty.Get(p); ok && g > since {
			continue
		}
		q.markLocked(p)
	}
	q.kick()
}

// TakePending returns the renames and removals not yet applied to the index's
// entries, and forgets them.
func (q *Queue) TakePending() []Change {
	q.mu.Lock()
	defer q.mu.Unlock()
	cs := q.pending
	q.pending = nil
	return cs
}

// HasPending reports whether renames or removals wait for the entries.
func (q *Queue) HasPending() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.pending) > 0
}

// Dirty returns how many paths are dirty, and calls each (if not nil) with
// every one of them: the files whose latest bytes are not indexed yet.
func (q *Queue) Dirty(each func(p string)) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	if each != nil {
		for p := range q.dirty.All() {
			each(p)
		}
	}
	return q.dirty.Len()
}

// Working reports whether there is work, and says so to Wait: false (idle)
// when the queue is empty, true (busy) otherwise.
func (q *Queue) Working() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.queue) == 0 {
		q.busy = false
		q.idle.Broadcast()
		return false
	}
	q.busy = true
	return true
}

// Woken is signalled when a path is queued.
func (q *Queue) Woken() <-chan struct{} { return q.wake }

// Pop takes the next path off the queue with the generation it is dirty at;
// ok is false when it is no longer dirty (renamed or removed since), more is
// false when the queue is empty.
func (q *Queue) Pop() (p string, gen uint64, ok, more bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.queue) == 0 {
		return "", 0, false, false
	}
	p = q.queue[0]
	q.queue = q.queue[1:]
	delete(q.queued, p)
	gen, ok = q.dirty.Get(p)
	return p, gen, ok, true
}

// Done reports whether p is still dirty at gen, the generation it was read
// at, and if so clears it: what was read is current and may be installed.
func (q *Queue) Done(p string, gen uint64) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	cur, ok := q.dirty.Get(p)
	if ok && cur == gen {
		q.dirty.Delete(p)
		return true
	}
	return false
}

// Quiet waits, before a worker reads a batch, until no path has been marked
// and, with requests (a count of the NFS and 9P requests the daemon has
// answered; nil: none counted), no request answered for quiet, at most max.
// A file is usually marked at its create and again when its writes settle
// moments later, and a burst of creates marks many: reading once the marks
// stop reads each such file once, whole, in fewer and larger batches. And a
// worker's reading takes CPU time from the requests whatever its priority
// (two vCPUs are often one core's two threads): waiting for a pause in them
// too, the listing that follows a burst of creates is not slowed by their
// indexing. false when stop is closed.
func (q *Queue) Quiet(stop <-chan struct{}, quiet, max time.Duration, requests func() uint64) bool {
	start := time.Now()
	if requests == nil {
		requests = func() uint64 { return 0 }
	}
	for {
		gen, n := q.Begin(), requests()
		select {
		case <-stop:
			return false
		case <-time.After(quiet):
		}
		if (q.Begin() == gen && requests() == n) || time.Since(start) >= max {
			return true
		}
	}
}

// Wait waits until the queue is empty and the worker idle (tests, Close).
func (q *Queue) Wait(ctx context.Context) error {
	stop := context.AfterFunc(ctx, func() {
		q.mu.Lock()
		q.idle.Broadcast()
		q.mu.Unlock()
	})
	defer stop()
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.queue) > 0 || q.busy {
		if err := ctx.Err(); err != nil {
			return err
		}
		q.idle.Wait()
	}
	return nil
}
