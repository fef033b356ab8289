package embed

import (
	"container/list"
	"context"
	"sync"
)

// Cached is an Embedder that remembers the vectors of the n most recently
// embedded texts. Queries repeat (a user refines a search, an agent polls),
// and a hit costs a map lookup instead of a forward pass. It is safe for
// concurrent use; the vectors it returns are copies the caller may change.
type Cached struct {
	Embedder
	n int

	mu    sync.Mutex
	order *list.List // of *cacheEntry, most recent at the front
	byKey map[string]*list.Element
	hits  uint64
	miss  uint64
}

type cacheEntry struct {
	text string
	vec  []float32
}

// NewCached wraps e with an LRU cache of n entries (n < 1 means 1).
func NewCached(e Embedder, n int) *Cached {
	return &Cached{Embedder: e, n: max(n, 1), order: list.New(), byKey: make(map[string]*list.Element)}
}

// Embed returns cached vectors for known texts and embeds the others in one
// batch through the wrapped Embedder. Errors are those of the wrapped
// Embedder; nothing is cached from a failed batch.
func (c *Cached) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	var missing []string
	missAt := make(map[string][]int)
	c.mu.Lock()
	for i, t := range texts {
		if el, ok := c.byKey[t]; ok {
			c.order.MoveToFront(el)
			out[i] = clone(el.Value.(*cacheEntry).vec)
			c.hits++
			continue
		}
		c.miss++
		if _, seen := missAt[t]; !seen {
			missing = append(missing, t)
		}
		missAt[t] = append(missAt[t], i)
	}
	c.mu.Unlock()
	if len(missing) == 0 {
		return out, nil
	}
	vecs, err := c.Embedder.Embed(ctx, missing)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for j, t := range missing {
		for k, i := range missAt[t] {
			if k == 0 {
				out[i] = vecs[j]
			} else {
				out[i] = clone(vecs[j])
			}
		}
		c.put(t, clone(vecs[j]))
	}
	return out, nil
}

// put stores a vector. Precondition: c.mu held.
func (c *Cached) put(text string, vec []float32) {
	if el, ok := c.byKey[text]; ok {
		el.Value.(*cacheEntry).vec = vec
		c.order.MoveToFront(el)
		return
	}
	c.byKey[text] = c.order.PushFront(&cacheEntry{text: text, vec: vec})
	for c.order.Len() > c.n {
		old := c.order.Back()
		c.order.Remove(old)
		delete(c.byKey, old.Value.(*cacheEntry).text)
	}
}

// Stats reports cache hits and misses since NewCached, counted per text.
func (c *Cached) Stats() (hits, misses uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hits, c.miss
}

func clone(v []float32) []float32 { return append([]float32(nil), v...) }
