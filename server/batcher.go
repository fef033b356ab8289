package server

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// Flusher is a Sink that may hold changes back; Flush returns once every change
// handed to it before the call has been applied. FS.Freeze and File.Sync flush
// the FS's sink, so a snapshot and an fsync see the index caught up.
type Flusher interface {
	Flush(ctx context.Context) error
}

// Batcher is a Sink that queues changes and applies them in order, in batches,
// on its own goroutine. Applying one change at a time costs the index a sync to
// disk per file; a burst of creates (an untar, a build) then runs at the disk's
// fsync rate. Queued, a burst becomes a few transactions. Changes reach the index
// within one batch's time, before any Flush returns, and before a snapshot or an
// fsync completes; a crash can lose only changes whose files were not synced
// either, which the next start's reconcile records (unattributed).
//
// At most maxQueue changes wait; Apply blocks beyond that, so a slow index slows
// writers instead of growing memory without bound.
//
// A batch lingers up to batchLinger before it is applied, unless a Flush waits
// for it or the queue is a quarter full: a file created over NFS is written and
// COMMITted a few hundred microseconds later, and the COMMIT's Flush then
// applies the create and the write's updatedAt in one transaction, one sync of
// records.db instead of two in a row (measured with libnfs creating 4 KiB
// files: three fsyncs per file before, two after).
type Batcher struct {
	apply func(context.Context, []Change) error
	log   *slog.Logger
	max   int

	// applyMu is held by whoever applies a batch, from taking it off the
	// queue until it is counted applied: the applier goroutine, or a caller
	// of FlushHere. Batches are applied one at a time, in queue order.
	applyMu sync.Mutex

	mu       sync.Mutex
	cond     *sync.Cond
	queue    []Change
	enqueued uint64 // changes ever queued
	applied  uint64 // changes ever applied (or failed and logged)
	closed   bool
	flushing int           // Flush calls waiting
	kick     chan struct{} // wakes a lingering applier early (buffered, 1)
	linger   time.Duration // batchLinger; tests set it long
	lingerT  *time.Timer   // armed while a linger may be running (armed); see Apply
	armed    bool          // lingerT is set and has not fired yet
	since    time.Time     // when the first change of the queued batch came
	due      bool          // the queued batch's linger is over
	onLinger func()        // tests: called (b.mu held) as a batch starts to linger
	done     chan struct{}
}

// batchLinger bounds how long a queued change waits for company before the
// applier takes it; far below a human's next query, about three NFS round trips
// on loopback.
const batchLinger = 2 * time.Millisecond

// NewBatcher starts a Batcher that hands batches of at most maxQueue changes to
// apply. An error from apply is logged; the files stay as they are and the next
// start's reconcile repairs the index.
func NewBatcher(apply func(context.Context, []Change) error, maxQueue int, log *slog.Logger) *Batcher {
	if log == nil {
		log = slog.Default()
	}
	if maxQueue < 1 {
		maxQueue = 1
	}
	b := &Batcher{apply: apply, log: log, max: maxQueue, kick: make(chan struct{}, 1), linger: batchLinger, done: make(chan struct{})}
	b.cond = sync.NewCond(&b.mu)
	b.lingerT = time.NewTimer(time.Hour)
	b.lingerT.Stop()
	go b.run()
	return b
}

// Apply queues c. It fails only after Close.
func (b *Batcher) Apply(ctx context.Context, c Change) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	for len(b.queue) >= b.max && !b.closed {
		b.cond.Wait()
	}
	if b.closed {
		return E("change stream", KindIO, c.Path, constError("the change stream is closed"))
	}
	b.queue = append(b.queue, c)
	b.enqueued++
	if len(b.queue) == 1 {
		// The first change of a batch starts its linger; the applier sleeps
		// until the timer says it is over or a kick comes. Waking the
		// applier here only for it to arm the timer itself cost a goroutine
		// wake-up (a futex wake of another thread) in every NFS CREATE.
		// Arming a timer costs one as well (the runtime wakes a thread to
		// watch the new earliest timer), so a timer still armed from an
		// earlier batch (the COMMIT applied that one before it fired) is
		// left as it is: it fires no later than this batch's linger ends,
		// and the applier then arms it for the rest (run).
		b.due = false
		b.since = time.Now()
		if !b.armed {
			b.armed = true
			b.lingerT.Reset(b.linger)
		}
		if b.onLinger != nil {
			b.onLinger()
		}
	}
	if len(b.queue) >= (b.max+3)/4 {
		b.wake()
	}
	return nil
}

// wake ends the applier's linger (b.mu held, or not: kick only buffers).
func (b *Batcher) wake() {
	select {
	case b.kick <- struct{}{}:
	default:
	}
}

// Ready reports whether an Apply made now would return without waiting for room
// (ReadySink). The answer holds while the caller keeps every other producer out;
// the FS's producers all hold its namespace lock.
func (b *Batcher) Ready() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.queue) < b.max && !b.closed
}

// Flush waits until every change queued before the call has been applied.
func (b *Batcher) Flush(ctx context.Context) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	target := b.enqueued
	if b.applied < target {
		b.flushing++
		defer func() { b.flushing-- }()
		b.wake()
	}
	for b.applied < target {
		if err := ctx.Err(); err != nil {
			return err
		}
		b.cond.Wait()
	}
	return nil
}

// Close applies what is queued and stops.
func (b *Batcher) Close() {
	b.mu.Lock()
	b.closed = true
	b.cond.Broadcast()
	b.mu.Unlock()
	b.wake()
	<-b.done
}

func (b *Batcher) run() {
	defer close(b.done)
	for {
		b.mu.Lock()
		if len(b.queue) == 0 && b.closed {
			b.mu.Unlock()
			return
		}
		if len(b.queue) == 0 || !(b.due || b.flushing > 0 || b.closed || len(b.queue) >= (b.max+3)/4) {
			// Nothing queued, or a batch lingering for company: sleep until
			// a kick (Flush, a quarter-full queue, Close) or the
			// end of the linger Apply armed.
			b.mu.Unlock()
			select {
			case <-b.kick:
			case <-b.lingerT.C:
				b.mu.Lock()
				b.armed = false
				if len(b.queue) > 0 {
					// Armed for an earlier batch maybe: this one
					// lingers its full time.
					if rest := b.linger - time.Since(b.since); rest > 0 {
						b.armed = true
						b.lingerT.Reset(rest)
					} else {
						b.due = true
					}
				}
				b.mu.Unlock()
			}
			continue
		}
		b.mu.Unlock()
		b.applyQueued()
	}
}

// applyQueued applies what is queued now, if anything, as one batch.
func (b *Batcher) applyQueued() {
	b.applyMu.Lock()
	defer b.applyMu.Unlock()
	b.mu.Lock()
	b.due = false // the timer stays armed, if it is: see Apply
	select {      // a kick sent while the batch is taken belongs to this batch
	case <-b.kick:
	default:
	}
	batch := b.queue
	b.queue = nil
	b.cond.Broadcast() // room for writers blocked on a full queue
	b.mu.Unlock()
	if len(batch) == 0 {
		return
	}
	// Counted applied even if apply panics: FlushHere runs it on a caller's
	// goroutine, whose front end recovers, and Flush must not wait forever.
	defer func() {
		b.mu.Lock()
		b.applied += uint64(len(batch))
		b.cond.Broadcast()
		b.mu.Unlock()
	}()
	if err := b.apply(context.Background(), batch); err != nil {
		b.log.Error("index update failed; the next start's reconcile repairs it",
			"changes", len(batch), "first", batch[0].Path, "err", err)
	}
}

// FlushHere is Flush with the batch applied on the caller's goroutine: the
// applier goroutine is neither woken nor waited for, unless it is applying
// an earlier batch already. File.Sync uses it (HereFlusher).
func (b *Batcher) FlushHere(ctx context.Context) error {
	b.mu.Lock()
	target := b.enqueued
	done := b.applied >= target
	b.mu.Unlock()
	if done {
		return nil
	}
	b.applyQueued()     // what was queued before the call, and perhaps more
	return b.Flush(ctx) // nothing left to wait for, unless Apply blocked on a full queue
}

// HereFlusher is a Flusher that can apply what is pending on the caller's
// goroutine (Batcher.FlushHere).
type HereFlusher interface {
	FlushHere(ctx context.Context) error
}
