package index

import (
	"container/heap"
	"context"
	"fmt"
	"sort"
	"strings"
)

// Query answers a hybrid query with the rank mode q.Rank asks for: RankBest (the
// default, best.go) or RankSeed (below); another value is KindInvalid
// (ErrInvalidRank) and reads nothing.
// Read guarantee: sees every write that returned before it was called, and no
// write halfway.
func (x *Index) Query(ctx context.Context, q Query) ([]Result, error) {
	switch q.Rank {
	case "", RankBest:
		return x.queryBest(ctx, q)
	case RankSeed:
		return x.querySeed(ctx, q)
	}
	return nil, errorf("query", KindInvalid, "", fmt.Errorf("%w %q: want %q or %q", ErrInvalidRank, q.Rank, RankBest, RankSeed))
}

// querySeed answers a hybrid query with the seed's rule:
//
//   - points: one per query word that is a case-insensitive substring of the
//     file's path, created_by, task or one of its related apps (words and case as
//     defined in keyword.go);
//   - similarity: the cosine of the query embedding and the file's stored vector
//     of the same model, clamped to [0, 1] (see Similarity); 0 when the file has no
//     vector of that model. The query embedding is q.Vector when given (ranked
//     against that model's stored vectors), else the in-process embedding of
//     q.Text; with neither the query is keyword-only (Stats().KeywordOnly says why).
//
// A file is returned when points >= 1 or it has a vector with similarity >= the
// model's threshold (inclusive). Results are ordered by score = points +
// similarity, highest first; equal scores by more points first, so a keyword hit
// always ranks at or above any pure-semantic match, even one of similarity exactly
// 1.0 (that tie is the only one the score alone cannot break); then by path,
// byte-wise ascending. Limit <= 0 returns every match.
//
// Bleve only proposes keyword candidates; each is checked against the exact rule,
// so the answer equals an exhaustive scan of every record. A query with no words
// and no vector is KindInvalid; a failing read or embedding is an error, never an
// empty result.
// Read guarantee: sees every write that returned before it was called, and no
// write halfway.
func (x *Index) querySeed(ctx context.Context, q Query) ([]Result, error) {
	words := queryWords(q.Text)
	var qv []float32
	var model string
	switch {
	case q.Vector != nil:
		if err := x.checkClientVector("query", "", q.Vector); err != nil {
			return nil, err
		}
		qv, model = q.Vector.Values, q.Vector.Model
	case x.emb != nil && len(words) > 0:
		v, err := x.embedOne(ctx, q.Text)
		if err != nil {
			return nil, ioErr("query", "", err)
		}
		qv, model = v, x.emb.Name()
	}
	if len(words) == 0 && qv == nil {
		return nil, errorf("query", KindInvalid, "", fmt.Errorf("%w: no words and no vector", ErrInvalidQuery))
	}
	threshold := x.models[model].Threshold

	x.flushBleve()
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.closed {
		return nil, errorf("query", KindClosed, "", ErrClosed)
	}

	var set *vecSet
	var sims []float64   // by position in set
	var bySlot []float64 // the same, by record slot (0 without a vector)
	if qv != nil {
		set = x.vecs[model]
	}
	if set != nil {
		nq := norm(qv)
		sims = make([]float64, set.len())
		bySlot = make([]float64, x.hay.len())
		for i := range sims {
			sims[i] = similarity(dot(qv, set.vector(i)), nq, set.norms[i])
			bySlot[set.slots[i]] = sims[i]
		}
	}
	simOf := func(slot int) float64 {
		if bySlot != nil {
			return bySlot[slot]
		}
		return 0
	}

	c := collector{limit: q.Limit}
	if len(words) > 0 {
		err := x.eachKeywordCandidate(ctx, words, func(i int) {
			h := &x.hay.entries[i]
			if n := points(words, h.joined); n > 0 {
				c.add(hit{h.path, float64(n) + simOf(i), n})
			}
		})
		if err != nil {
			return nil, ioErr("query", "", err)
		}
	}
	// Pure-semantic matches: those with a keyword point are in already (Bleve's
	// candidates are a superset of the keyword hits).
	for i, s := range sims {
		if s >= threshold {
			if points(words, x.hay.entries[set.slots[i]].joined) == 0 {
				c.add(hit{set.paths[i], s, 0})
			}
		}
	}
	hits := c.result()

	res := make([]Result, len(hits))
	err := x.view("query", "", func(tx txn) error {
		for i, h := range hits {
			s, ok, err := getRecord(tx.Tx, h.path)
			if err != nil {
				return fmt.Errorf("record %q: %w", h.path, err)
			}
			if !ok {
				return fmt.Errorf("record %q indexed but not stored", h.path)
			}
			res[i] = Result{Record: s.record(h.path), Score: h.score}
			if q.Explain {
				res[i].Explain = x.explainSeed(words, h, set != nil)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

type hit struct {
	path  string
	score float64
	pts   int
}

// before is the result order: score, then points, then path.
func before(a, b *hit) bool {
	if a.score != b.score {
		return a.score > b.score
	}
	if a.pts != b.pts {
		return a.pts > b.pts
	}
	return a.path < b.path
}

// collector keeps every hit (limit <= 0) or, in a bounded heap, the best limit
// of them, so a small limit over many hits costs neither memory nor a full sort.
type collector struct {
	limit int
	all   []hit
	top   worstFirst
}

func (c *collector) add(h hit) {
	switch {
	case c.limit <= 0:
		c.all = append(c.all, h)
	case len(c.top) < c.limit:
		heap.Push(&c.top, h)
	case before(&h, &c.top[0]):
		c.top[0] = h
		heap.Fix(&c.top, 0)
	}
}

// result returns the kept hits in result order.
func (c *collector) result() []hit {
	out := c.all
	if c.limit > 0 {
		out = c.top
	}
	sort.Slice(out, func(i, j int) bool { return before(&out[i], &out[j]) })
	return out
}

// worstFirst is a heap whose top is the hit that would be returned last.
type worstFirst []hit

func (h worstFirst) Len() int           { return len(h) }
func (h worstFirst) Less(i, j int) bool { return before(&h[j], &h[i]) }
func (h worstFirst) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *worstFirst) Push(x any)        { *h = append(*h, x.(hit)) }
func (h *worstFirst) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// explainSeed: the words that are substrings of some field (the points) and
// the similarity. Precondition: x.mu held for reading.
func (x *Index) explainSeed(words []string, h hit, vectors bool) *Explanation {
	e := &Explanation{Rank: RankSeed, Keyword: float64(h.pts)}
	if i, ok := x.hay.pos[h.path]; ok {
		for _, w := range words {
			if strings.Contains(x.hay.entries[i].joined, w) {
				if e.Words == nil {
					e.Words = map[string][]string{}
				}
				e.Words["any"] = append(e.Words["any"], w)
			}
		}
	}
	if vectors {
		sim := h.score - float64(h.pts)
		e.Similarity = &sim
	}
	return e
}
