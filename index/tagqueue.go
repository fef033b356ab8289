package index

import (
	"context"
	"sync"
)

// tagQueue lets concurrent Tag calls share one write (a group commit). A tag
// is durable when Tag returns, so each write syncs vectors.db and then
// records.db, and holds the index's write lock meanwhile: with ten clients
// tagging at once the lock was held by tags nearly all the time, and every
// other writer (an NFS COMMIT's batch of creates, a query's Bleve batch)
// waited behind up to ten pairs of syncs (issue 30 item 7). Queued, the tags
// that arrive while one write is on its way go together in the next: one pair
// of syncs for all of them.
//
// Each call checks its request and embeds its text on its own goroutine
// first (prepareTags), so a bad request fails alone, as before. The first
// call to find no write in progress leads: it takes every queued tag (up to
// the first path already taken: a path's tags go in the order they came, one
// per write) and writes them with its own; then it hands the lead to the
// oldest tag still queued, if any, and returns. If a shared write fails, its
// tags are written one by one, so each gets the result its own write would
// have had. A call returns once its write is durable.
type tagQueue struct {
	mu      sync.Mutex
	queued  []*queuedTag
	leading bool
	// onWrite, when set (tests), is called with the size of each write
	// before it is made.
	onWrite func(n int)
}

// queuedTag is one Tag call's write, and its result once done.
type queuedTag struct {
	ctx  context.Context
	p    preparedTag
	rec  Record
	err  error
	done bool
	wake chan struct{} // closed when done, or sent to when it is to lead
}

// commit writes p (prepared for the call ctx) with whatever other tags are
// queued, and returns its record once durable.
func (q *tagQueue) commit(x *Index, ctx context.Context, p preparedTag) (Record, error) {
	t := &queuedTag{ctx: ctx, p: p, wake: make(chan struct{}, 1)}
	q.mu.Lock()
	q.queued = append(q.queued, t)
	lead := !q.leading
	q.leading = true
	q.mu.Unlock()
	for {
		if lead {
			q.write(x)
		} else {
			<-t.wake
		}
		q.mu.Lock()
		done := t.done
		q.mu.Unlock()
		if done {
			return t.rec, t.err
		}
		lead = true // handed the lead
	}
}

// write takes the queued tags, writes them, marks them done, and passes the
// lead on. Precondition: the caller leads.
func (q *tagQueue) write(x *Index) {
	q.mu.Lock()
	n := 0
	seen := map[string]bool{}
	for n < len(q.queued) && !seen[q.queued[n].p.path] {
		seen[q.queued[n].p.path] = true
		n++
	}
	batch := q.queued[:n:n]
	q.queued = q.queued[n:]
	hook := q.onWrite
	q.mu.Unlock()

	if hook != nil {
		hook(len(batch))
	}
	ctxs := make([]context.Context, len(batch))
	preps := make([]preparedTag, len(batch))
	for i, t := range batch {
		ctxs[i], preps[i] = t.ctx, t.p
	}
	recs, err := q.commitTags(x, ctxs, preps)
	if err == nil {
		for i, t := range batch {
			t.rec = recs[i]
		}
	} else if len(batch) == 1 {
		batch[0].err = err
	} else {
		for _, t := range batch {
			recs, err := q.commitTags(x, []context.Context{t.ctx}, []preparedTag{t.p})
			if err != nil {
				t.err = err
			} else {
				t.rec = recs[0]
			}
		}
	}

	q.mu.Lock()
	for _, t := range batch {
		t.done = true
		close(t.wake)
	}
	if len(q.queued) > 0 {
		q.queued[0].wake <- struct{}{} // the oldest leads next (buffered: never blocks)
	} else {
		q.leading = false
	}
	q.mu.Unlock()
}

// commitTags is Index.commitTags with a panic turned into the error of the
// tags it was writing: the queue must go on (the lead passed, every waiting
// call answered) where a panic would leave the other calls waiting for good.
func (q *tagQueue) commitTags(x *Index, ctxs []context.Context, preps []preparedTag) (recs []Record, err error) {
	defer recoverTo(&err)
	return x.commitTags("tag", ctxs, preps)
}
