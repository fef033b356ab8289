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
	var scanAll bool
	if len(words) > 0 {
		if x.degraded != nil {
			scanAll = true
		} else {
			kc, err := x.keywordCandidates(ctx, words)
			if err != nil {
				return nil, ioErr("query", "", err)
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
	}

	var out []Result
	var pts []int
	add := func(p string, s *stored, c cand) {
		n := points(words, haystack(p, s))
		if n >= 1 || (c.hasVec && c.sim >= threshold) {
			out = append(out, Result{Record: s.record(p), Score: float64(n) + c.sim})
			pts = append(pts, n)
		}
	}
	err := x.view("query", "", func(tx *buntdb.Tx) error {
		if scanAll {
			var bad error
			err := tx.AscendRange("", recPrefix, "r;", func(k, v string) bool {
				p := k[len(recPrefix):]
				s, err := decodeStored(v)
				if err != nil {
					bad = fmt.Errorf("record %q: %w", p, err)
					return false
				}
				c := cands[p]
				if set != nil && !c.hasVec {
					c.sim, c.hasVec = set.sim(p, qv, nq)
				}
				add(p, s, c)
				return true
			})
			if err != nil {
				return err
			}
			return bad
		}
		for p, c := range cands {
			if err := ctx.Err(); err != nil {
				return err
			}
			s, ok, err := getRecord(tx, p)
			if err != nil {
				return fmt.Errorf("record %q: %w", p, err)
			}
			if ok {
				add(p, s, c)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	idx := make([]int, len(out))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool {
		ra, rb := &out[idx[a]], &out[idx[b]]
		if ra.Score != rb.Score {
			return ra.Score > rb.Score
		}
		if pts[idx[a]] != pts[idx[b]] {
			return pts[idx[a]] > pts[idx[b]]
		}
		return ra.Path < rb.Path
	})
	if q.Limit > 0 && len(idx) > q.Limit {
		idx = idx[:q.Limit]
	}
	res := make([]Result, len(idx))
	for i, j := range idx {
		res[i] = out[j]
	}
	return res, nil
}
