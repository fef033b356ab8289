package index

import (
	"context"
	"fmt"
	"sort"

	"github.com/tidwall/buntdb"
)

// Query answers a hybrid query with the seed's rule:
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
func (x *Index) Query(ctx context.Context, q Query) ([]Result, error) {
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

	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.closed {
		return nil, errorf("query", KindClosed, "", ErrClosed)
	}

	type cand struct {
		sim    float64
		hasVec bool
	}
	cands := map[string]cand{}
	var set *vecSet
	var nq float64
	if qv != nil {
		set = x.vecs[model]
		nq = norm(qv)
	}
	if set != nil {
		for i, p := range set.paths {
			if s := similarity(dot(qv, set.vector(i)), nq, set.norms[i]); s >= threshold {
				cands[p] = cand{s, true}
			}
		}
	}
	if len(words) > 0 {
		var kc []string
		if x.degraded != nil {
			kc = make([]string, 0, len(x.hay))
			for p := range x.hay {
				kc = append(kc, p)
			}
		} else {
			var err error
			if kc, err = x.keywordCandidates(ctx, words); err != nil {
				return nil, ioErr("query", "", err)
			}
		}
		for _, p := range kc {
			if _, ok := cands[p]; !ok {
				c := cand{}
				if set != nil {
					c.sim, c.hasVec = set.sim(p, qv, nq)
				}
				cands[p] = c
			}
		}
	}

	type hit struct {
		path  string
		score float64
		pts   int
	}
	hits := make([]hit, 0, len(cands))
	for p, c := range cands {
		h := x.hay[p]
		if h == nil {
			continue // a vector without a record cannot happen; Bleve is checked at Open
		}
		n := points(words, h.fields)
		if n >= 1 || (c.hasVec && c.sim >= threshold) {
			hits = append(hits, hit{p, float64(n) + c.sim, n})
		}
	}
	sort.Slice(hits, func(a, b int) bool {
		ha, hb := &hits[a], &hits[b]
		if ha.score != hb.score {
			return ha.score > hb.score
		}
		if ha.pts != hb.pts {
			return ha.pts > hb.pts
		}
		return ha.path < hb.path
	})
	if q.Limit > 0 && len(hits) > q.Limit {
		hits = hits[:q.Limit]
	}
	res := make([]Result, len(hits))
	err := x.view("query", "", func(tx *buntdb.Tx) error {
		for i, h := range hits {
			s, ok, err := getRecord(tx, h.path)
			if err != nil {
				return fmt.Errorf("record %q: %w", h.path, err)
			}
			if !ok {
				return fmt.Errorf("record %q indexed but not stored", h.path)
			}
			res[i] = Result{Record: s.record(h.path), Score: h.score}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}
