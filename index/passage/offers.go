package passage

import (
	"bytes"
	"sync"
	"sync/atomic"

	"github.com/semfs/semfs/index/content"
)

// offersMax and offersFiles bound what offers keeps: the files a burst of
// writes queued, which the worker, paced by its CPU budget, takes after the
// content indexer read them. Past the bound the worker reads a file itself.
const (
	offersMax   = 16 << 20
	offersFiles = 16 << 10
)

// offers keeps the files the content indexer read (Index.Offer) until the
// worker takes them off its queue, so that each written file is opened and
// read once for both indexes. An offer is of one generation of its path in
// this index's queue, and the worker uses it only if the path is still dirty
// at that generation: a change marked after the read began makes it stale.
// Only queued paths are kept, and the worker takes its path's offer at each
// Pop, so none outlives its queue entry. Lock order: offers, then the queue's.
type offers struct {
	mu    sync.Mutex
	m     map[string]offer
	bytes int
	taken atomic.Int64 // offers the worker used (Stats.Shared)
}

// offer is one file as another index read it: what read returns.
type offer struct {
	gen         uint64 // the path's dirty generation in this index's queue
	size, mtime int64
	text        []byte // nil unless ok
	ok          bool   // a text file within the cap (content.Indexed)
}

// Offer takes f, read by the content indexer in a read begun at generation
// since of this index's queue (Begin), for the worker (content.Sharer): kept
// when f.Path waits in the queue, dirty at a generation the read reflects,
// and was read under this index's cap.
func (x *Index) Offer(since uint64, f content.SharedFile) {
	if f.Max != x.opt.Max {
		return
	}
	o := &x.offers
	o.mu.Lock()
	defer o.mu.Unlock()
	g, ok := x.q.Queued(f.Path)
	if !ok || g > since {
		return
	}
	if old, had := o.m[f.Path]; had {
		o.bytes -= len(old.text)
		delete(o.m, f.Path)
	}
	if o.bytes+len(f.Data) > offersMax || len(o.m) >= offersFiles {
		return
	}
	of := offer{gen: g, size: f.Info.Size, mtime: f.Info.MTime, ok: f.State == content.Indexed}
	if of.ok {
		of.text = bytes.Clone(f.Data)
	}
	if o.m == nil {
		o.m = map[string]offer{}
	}
	o.m[f.Path] = of
	o.bytes += len(of.text)
}

// take removes p's offer, and returns it if it is of generation gen.
func (o *offers) take(p string, gen uint64) (offer, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	of, ok := o.m[p]
	if !ok {
		return offer{}, false
	}
	delete(o.m, p)
	o.bytes -= len(of.text)
	if of.gen != gen {
		return offer{}, false
	}
	o.taken.Add(1)
	return of, true
}
