package index

import (
	"context"
	"sort"
	"sync"

	"github.com/semfs/semfs/embed"
)

// reembedder keeps in-process vectors current in the background: a tagged record
// needs one of the in-process model whose hash matches its current tag text. After
// a rename (the path is part of the tag text), a model change, or tags written
// while no embedder was loaded, the record is queued here. Until it is re-embedded
// a record keeps its old vector if that is of the current model (a slightly stale
// path), and otherwise has none (keyword-only for that file).
type reembedder struct {
	mu       sync.Mutex
	pending  map[string]struct{}
	wake     chan struct{}
	scanning bool
	stopped  bool
	inflight int // taken, not yet finished
	queued   int // since Open
	done     int
	failed   int
	lastErr  string
	idle     *sync.Cond
}

func newReembedder() *reembedder {
	r := &reembedder{pending: map[string]struct{}{}, wake: make(chan struct{}, 1), scanning: true}
	r.idle = sync.NewCond(&r.mu)
	return r
}

func (r *reembedder) add(paths ...string) {
	r.mu.Lock()
	for _, p := range paths {
		if _, ok := r.pending[p]; !ok {
			r.pending[p] = struct{}{}
			r.queued++
		}
	}
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// take removes up to n pending paths, in path order.
func (r *reembedder) take(n int) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, 0, len(r.pending))
	for p := range r.pending {
		out = append(out, p)
	}
	sort.Strings(out)
	if len(out) > n {
		out = out[:n]
	}
	for _, p := range out {
		delete(r.pending, p)
	}
	r.inflight += len(out)
	return out
}

func (r *reembedder) finish(taken, done, failed int, err error) {
	r.mu.Lock()
	r.inflight -= taken
	r.done += done
	r.failed += failed
	if err != nil {
		r.lastErr = err.Error()
	}
	if r.idleLocked() {
		r.idle.Broadcast()
	}
	r.mu.Unlock()
}

// idleLocked: nothing queued, running or still to be found. Precondition: r.mu held.
func (r *reembedder) idleLocked() bool {
	return len(r.pending) == 0 && r.inflight == 0 && !r.scanning
}

// start launches the background re-embedder (only with an in-process embedder).
func (x *Index) start() {
	if x.emb == nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	x.re = newReembedder()
	x.stopBg = cancel
	x.bgDone.Add(1)
	go func() {
		defer x.bgDone.Done()
		x.runReembed(ctx)
	}()
}

func (x *Index) stopBackground() {
	if x.stopBg != nil {
		x.stopBg()
		x.bgDone.Wait()
		x.re.mu.Lock()
		x.re.scanning = false
		x.re.stopped = true
		x.re.idle.Broadcast()
		x.re.mu.Unlock()
	}
}

// WaitEmbedded blocks until the background re-embedder has nothing left to do (or
// ctx ends, or the index is closed). Tests and an orderly shutdown use it; queries
// never need to. Safe for concurrent use.
func (x *Index) WaitEmbedded(ctx context.Context) error {
	if x.re == nil {
		return nil
	}
	stop := context.AfterFunc(ctx, func() {
		x.re.mu.Lock()
		x.re.idle.Broadcast()
		x.re.mu.Unlock()
	})
	defer stop()
	r := x.re
	r.mu.Lock()
	defer r.mu.Unlock()
	for !r.idleLocked() && ctx.Err() == nil && !r.stopped {
		r.idle.Wait()
	}
	return ctx.Err()
}

func (x *Index) runReembed(ctx context.Context) {
	x.scanForReembed(ctx)
	const batch = 32
	for {
		paths := x.re.take(batch)
		if len(paths) == 0 {
			x.re.finish(0, 0, 0, nil)
			select {
			case <-ctx.Done():
				return
			case <-x.re.wake:
				continue
			}
		}
		done, err := x.reembed(ctx, paths)
		failed := 0
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			failed = len(paths) - done
			x.log.Error("index: re-embedding failed; those records stay keyword-only until the next open", "records", failed, "err", err)
		}
		x.re.finish(len(paths), done, failed, err)
	}
}

// scanForReembed queues every tagged record whose in-process vector is not
// current, and logs a model change once.
func (x *Index) scanForReembed(ctx context.Context) {
	defer func() {
		x.re.mu.Lock()
		x.re.scanning = false
		if x.re.idleLocked() {
			x.re.idle.Broadcast()
		}
		x.re.mu.Unlock()
	}()
	model := x.emb.Name()
	var need []string
	otherModels := map[string]int{}
	// In chunks, so that writers (and the readers queued behind them) are not held
	// up for the whole scan of a large index.
	const chunk = 1000
	from, first := recPrefix, true
	for {
		n := 0
		x.mu.RLock()
		err := x.view("reembed", "", func(tx txn) error {
			return tx.AscendRange("", from, "r;", func(k, v string) bool {
				if ctx.Err() != nil {
					return false
				}
				if k == from && !first {
					return true // the last key of the previous chunk
				}
				n++
				from = k
				p := k[len(recPrefix):]
				s, ok := keywordFields(v)
				if !ok || !s.tagged() {
					return n < chunk
				}
				vs, err := vectorsOf(tx.vec, p)
				if err != nil {
					return n < chunk
				}
				current := false
				h := textHash(embed.TagText(s.Task, s.RelatedApps, p))
				for _, kv := range vs {
					_, m, _ := splitVecKey(kv.key)
					kind, vh, ok := vectorHeader(kv.val)
					switch {
					case !ok:
					case m == model && (kind == vecClient || vh == h):
						current = true
					case kind == vecInProcess && m != model:
						otherModels[m]++
					}
				}
				if !current {
					need = append(need, p)
				}
				return n < chunk
			})
		})
		x.mu.RUnlock()
		first = false
		if err != nil {
			x.log.Error("index: cannot scan records for re-embedding", "err", err)
			return
		}
		if n < chunk || ctx.Err() != nil {
			break
		}
	}
	for m, n := range otherModels {
		x.log.Warn("index: in-process model changed; re-embedding tagged records in the background", "from", m, "to", model, "vectors", n)
	}
	if len(need) > 0 {
		x.log.Info("index: re-embedding tagged records in the background", "model", model, "records", len(need))
		x.re.add(need...)
	}
}

// reembed embeds the current tag text of paths and stores the vectors, unless the
// record changed meanwhile (then a later Tag or rename has queued or stored its
// own). It returns how many records it handled.
func (x *Index) reembed(ctx context.Context, paths []string) (int, error) {
	model := x.emb.Name()
	type job struct {
		path, text string
		hash       uint64
	}
	var jobs []job
	x.mu.RLock()
	err := x.view("reembed", "", func(tx txn) error {
		for _, p := range paths {
			s, ok, err := getRecord(tx.Tx, p)
			if err != nil {
				return err
			}
			if !ok || !s.tagged() {
				continue
			}
			text := embed.TagText(s.Task, s.RelatedApps, p)
			h := textHash(text)
			if v, err := tx.vec.Get(vecKey(p, model)); err == nil {
				if kind, vh, ok := vectorHeader(v); ok && (kind == vecClient || vh == h) {
					continue
				}
			}
			jobs = append(jobs, job{p, text, h})
		}
		return nil
	})
	x.mu.RUnlock()
	if err != nil {
		return 0, err
	}
	if len(jobs) == 0 {
		return len(paths), nil
	}
	texts := make([]string, len(jobs))
	for i, j := range jobs {
		texts[i] = j.text
	}
	vecs, err := x.embedMany(ctx, texts)
	if err != nil {
		return len(paths) - len(jobs), err
	}
	err = x.update("reembed", "", func(tx txn, e *effects) error {
		for i, j := range jobs {
			s, ok, err := getRecord(tx.Tx, j.path)
			if err != nil {
				return err
			}
			if !ok || textHash(embed.TagText(s.Task, s.RelatedApps, j.path)) != j.hash {
				continue
			}
			vs, err := vectorsOf(tx.vec, j.path)
			if err != nil {
				return err
			}
			skip := false
			for _, kv := range vs {
				_, m, _ := splitVecKey(kv.key)
				vv, err := decodeVector(kv.val)
				if err != nil {
					return err
				}
				if m == model && vv.kind == vecClient {
					skip = true // a client vector of this model wins
				} else if vv.kind == vecInProcess && m != model {
					if err := e.deleteVectorKey(tx, kv.key); err != nil {
						return err
					}
				}
			}
			if !skip {
				if err := e.putVector(tx, j.path, model, vecInProcess, j.hash, vecs[i]); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return len(paths) - len(jobs), err
	}
	return len(paths), nil
}

// progress for Stats.
func (r *reembedder) progress() Reembed {
	r.mu.Lock()
	defer r.mu.Unlock()
	return Reembed{Running: !r.idleLocked(), Pending: len(r.pending), Done: r.done, Failed: r.failed, Queued: r.queued, LastError: r.lastErr}
}
