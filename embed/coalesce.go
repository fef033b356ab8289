package embed

import (
	"context"
	"fmt"
	"sync"
)

// Coalescer is an Embedder that joins the texts of Embed calls made while
// another call is being embedded into one call of the Embedder it wraps.
//
// Why: a forward pass of USE-lite has a cost of its own whatever its rows:
// every weight matrix is read once per pass, each text's rows are padded to
// the kernel's block, and the pass is handed to the workers. With fp32
// weights on a 2-vCPU AVX2 machine a text of 2 words took 2.6 ms, 8 words
// 4.1 ms, 32 words 8.4 ms. Queries and tags embed one short text each; under
// concurrent load each paid its own pass. Joined, a pass serves them all
// (docs/benchmarks-history.md, "Joined forward passes"). With bf16 weights,
// which halved that fixed part, joining still paid: the mixed load did 1.180×
// the operations at 0.793× the CPU each (BENCHMARKS.md, "Mechanisms kept").
//
// How: the first caller finding no call in flight leads: it embeds what is
// queued (its own texts first) in one call, hands each caller its vectors, and
// passes the lead to the first caller still queued, if any, which leads the
// next joined call. A lone caller never waits for anyone. A call of at least
// max texts (a batch of tags) runs on its own, as does a context marked
// Serial (the passage index's throttled thread, which must not run callers'
// passes nor have its own run elsewhere). A caller whose context ends while
// queued leaves at once; one whose texts are being embedded leaves too, and
// the joined call goes on for the others (its context is the leader's
// without its cancellation). When a joined call fails (an empty text), each
// of its callers' texts is embedded alone, so that one caller's bad input is
// not the others' error.
type Coalescer struct {
	Embedder
	max int // texts in a joined call

	mu    sync.Mutex
	busy  bool        // a leader is embedding a joined call
	queue []*joinCall // callers waiting, in arrival order
}

// joinCall is one caller's Embed as it waits in a Coalescer.
type joinCall struct {
	ctx   context.Context
	texts []string
	out   [][]float32
	err   error
	done  chan struct{} // closed once out and err are set
	lead  chan struct{} // closed when this caller is to lead the next joined call
	// leading: the lead was handed to this caller (under mu), which must take
	// it even if its context has ended.
	leading bool
}

// NewCoalescer wraps e; a joined call holds at most n texts (n < 2 means
// 2), and a call of n texts or more runs on its own.
func NewCoalescer(e Embedder, n int) *Coalescer {
	return &Coalescer{Embedder: e, max: max(n, 2)}
}

// Embed returns one vector per text, embedded with other callers' texts when
// a call is in flight (see Coalescer).
func (c *Coalescer) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if len(texts) == 0 || len(texts) >= c.max || ctx.Value(serialKey{}) != nil {
		return c.Embedder.Embed(ctx, texts)
	}
	j := &joinCall{ctx: ctx, texts: texts, done: make(chan struct{}), lead: make(chan struct{})}
	c.mu.Lock()
	c.queue = append(c.queue, j)
	if !c.busy {
		c.busy = true
		c.mu.Unlock()
		c.lead()
		return j.out, j.err
	}
	c.mu.Unlock()
	select {
	case <-j.done:
		return j.out, j.err
	case <-j.lead:
		c.lead()
		return j.out, j.err
	case <-ctx.Done():
	}
	c.mu.Lock()
	switch {
	case j.leading:
		// Handed the lead as the context ended: the callers behind wait
		// for it.
		c.mu.Unlock()
		c.lead()
	case c.remove(j):
		c.mu.Unlock()
	default:
		c.mu.Unlock() // being embedded: the joined call goes on without it
	}
	return nil, &Error{Op: "embed", Kind: KindCanceled, Err: ctx.Err()}
}

// remove takes j out of the queue; false if it is not there. Precondition:
// mu held.
func (c *Coalescer) remove(j *joinCall) bool {
	for i, q := range c.queue {
		if q == j {
			c.queue = append(c.queue[:i], c.queue[i+1:]...)
			return true
		}
	}
	return false
}

// lead embeds the callers at the front of the queue (the leader's own call
// first) in one call, then hands the lead on or ends it.
func (c *Coalescer) lead() {
	c.mu.Lock()
	n := 0
	k := 0
	for k < len(c.queue) && (k == 0 || n+len(c.queue[k].texts) <= c.max) {
		n += len(c.queue[k].texts)
		k++
	}
	calls := append([]*joinCall(nil), c.queue[:k]...)
	c.queue = append(c.queue[:0], c.queue[k:]...)
	c.mu.Unlock()

	c.embed(calls, n)

	c.mu.Lock()
	if len(c.queue) > 0 {
		next := c.queue[0]
		next.leading = true
		close(next.lead)
	} else {
		c.busy = false
	}
	c.mu.Unlock()
}

// embed embeds calls' n texts in one call and hands each its vectors; when
// that fails and there is more than one call, each call's texts alone.
func (c *Coalescer) embed(calls []*joinCall, n int) {
	if len(calls) == 1 {
		j := calls[0]
		j.out, j.err = c.call(j.ctx, j.texts)
		close(j.done)
		return
	}
	texts := make([]string, 0, n)
	for _, j := range calls {
		texts = append(texts, j.texts...)
	}
	out, err := c.call(context.WithoutCancel(calls[0].ctx), texts)
	if err == nil && len(out) != len(texts) {
		err = fmt.Errorf("embed: %d vectors for %d texts", len(out), len(texts))
	}
	off := 0
	for _, j := range calls {
		if err != nil {
			j.out, j.err = c.call(context.WithoutCancel(j.ctx), j.texts)
		} else {
			j.out = out[off : off+len(j.texts) : off+len(j.texts)]
			off += len(j.texts)
		}
		close(j.done)
	}
}

// call is the wrapped Embed, with a panic made an error: every caller
// waiting on the joined call must be answered.
func (c *Coalescer) call(ctx context.Context, texts []string) (out [][]float32, err error) {
	defer func() {
		if p := recover(); p != nil {
			out, err = nil, &Error{Op: "embed", Kind: KindOther, Err: fmt.Errorf("panic: %v", p)}
		}
	}()
	return c.Embedder.Embed(ctx, texts)
}
