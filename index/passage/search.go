package passage

import (
	"context"
	"io"
	"math"
	"os"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/semfs/semfs/index"
)

// BM25's parameters, and the best rank's share of a word's weight any match
// earns (index/best.go's presence).
const (
	k1       = 1.2
	b        = 0.75
	presence = 0.9
	// wordFiles and meaningFiles bound the files a query takes evidence
	// from: the best by words, then the closest by meaning.
	wordFiles    = 200
	meaningFiles = 50
	perFile      = 3
	zStandOut    = 2.5
	// maxText bounds a passage's text in an answer (cut at a line, or a rune).
	maxText = 2000
)

// Source is the content evidence for one caller: Open opens a file as that
// caller (an error when it may not read it).
type Source struct {
	X    *Index
	Open func(ctx context.Context, p string) (*os.File, error)
}

// Evidence implements index.ContentSource.
func (s Source) Evidence(ctx context.Context, text string, vec []float32, model string) ([]index.ContentHit, error) {
	return s.X.Search(ctx, text, vec, model, s.Open)
}

type scored struct {
	id    uint32
	cov   float64
	bm    float64
	sim   float64
	hasVS bool
}

type fileHits struct {
	path     string
	size, mt int64
	kw, sim  float64
	hasSim   bool
	standOut bool
	best     []scored
	bySim    []scored
	spans    map[uint32]span
}

// Search finds the files whose passages match text (by words) or vec (by
// meaning, when model is the passages' model), reads their best passages
// through open, and drops a file open refuses or that changed since it was
// indexed.
func (x *Index) Search(ctx context.Context, text string, vec []float32, model string, open func(context.Context, string) (*os.File, error)) ([]index.ContentHit, error) {
	qt := queryTerms(text)
	if x.q.HasPending() {
		x.mu.Lock()
		x.drainLocked()
		x.mu.Unlock()
	}
	x.mu.RLock()
	files := map[string]*fileHits{}
	get := func(id uint32) *fileHits {
		p := x.passes[id].path
		f := files[p]
		if f == nil {
			e := x.files[p]
			f = &fileHits{path: p, size: e.size, mt: e.mtime, spans: map[uint32]span{}}
			files[p] = f
		}
		return f
	}
	// Words: per passage, coverage and BM25 sum.
	byID := map[uint32]*scored{}
	if len(qt) > 0 && x.live > 0 {
		n := float64(x.live)
		avg := float64(x.words) / n
		rarest := math.Log(1 + (n+0.5)/0.5)
		var sumIDF float64
		type th struct {
			idf  float64
			best float64
			ids  []uint32
			bm   []float64
		}
		per := make([]th, len(qt))
		for i, t := range qt {
			ids := x.post[t]
			df := 0
			for _, id := range ids {
				if x.passes[id].path != "" {
					df++
				}
			}
			if df == 0 {
				per[i].idf = rarest
				sumIDF += rarest
				continue
			}
			h := th{idf: math.Log(1 + (n-float64(df)+0.5)/(float64(df)+0.5))}
			for _, id := range ids {
				ps := &x.passes[id]
				if ps.path == "" {
					continue
				}
				tf := 0.0
				for _, tt := range ps.terms {
					if tt.term == t {
						tf = float64(tt.tf)
						break
					}
				}
				s := h.idf * tf * (k1 + 1) / (tf + k1*(1-b+b*float64(ps.words)/avg))
				h.ids = append(h.ids, id)
				h.bm = append(h.bm, s)
				h.best = max(h.best, s)
			}
			sumIDF += h.idf
			per[i] = h
		}
		for _, h := range per {
			for j, id := range h.ids {
				sc := byID[id]
				if sc == nil {
					sc = &scored{id: id}
					byID[id] = sc
				}
				sc.cov += h.idf * (presence + (1-presence)*h.bm[j]/h.best) / sumIDF
				sc.bm += h.bm[j]
			}
		}
	}
	all := make([]*scored, 0, len(byID))
	for _, sc := range byID {
		all = append(all, sc)
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].cov != all[j].cov {
			return all[i].cov > all[j].cov
		}
		if all[i].bm != all[j].bm {
			return all[i].bm > all[j].bm
		}
		return all[i].id < all[j].id
	})
	for _, sc := range all {
		f := files[x.passes[sc.id].path]
		if f == nil {
			if len(files) >= wordFiles {
				continue
			}
			f = get(sc.id)
		}
		if len(f.best) < perFile {
			f.best = append(f.best, *sc)
			f.spans[sc.id] = x.passes[sc.id].span
		}
		f.kw = max(f.kw, sc.cov)
	}
	// Meaning: every passage's cosine, the closest files kept.
	if vec != nil && model != "" && model == x.model && x.embedded > 0 {
		nq := norm(vec)
		var sum, sum2 float64
		cnt := 0
		type simID struct {
			id  uint32
			sim float64
		}
		bestOf := map[string]simID{}
		var sims []simID
		for id := 1; id < len(x.passes); id++ {
			ps := &x.passes[id]
			if ps.path == "" || ps.vec == nil || len(ps.vec) != len(vec) {
				continue
			}
			s := cosine(vec, ps.vec, nq)
			sum += s
			sum2 += s * s
			cnt++
			sims = append(sims, simID{uint32(id), s})
			if o, ok := bestOf[ps.path]; !ok || s > o.sim {
				bestOf[ps.path] = simID{uint32(id), s}
			}
		}
		mean := sum / float64(cnt)
		std := math.Sqrt(math.Max(0, sum2/float64(cnt)-mean*mean))
		tops := make([]simID, 0, len(bestOf))
		for _, v := range bestOf {
			tops = append(tops, v)
		}
		sort.Slice(tops, func(i, j int) bool {
			if tops[i].sim != tops[j].sim {
				return tops[i].sim > tops[j].sim
			}
			return tops[i].id < tops[j].id
		})
		if len(tops) > meaningFiles {
			tops = tops[:meaningFiles]
		}
		for _, t := range tops {
			get(t.id)
		}
		sort.Slice(sims, func(i, j int) bool { return sims[i].sim > sims[j].sim })
		for _, s := range sims {
			f := files[x.passes[s.id].path]
			if f == nil {
				continue
			}
			if !f.hasSim {
				f.sim, f.hasSim = s.sim, true
				f.standOut = std > 0 && (s.sim-mean)/std >= zStandOut
			}
			if len(f.bySim) < perFile {
				f.bySim = append(f.bySim, scored{id: s.id, sim: s.sim, hasVS: true})
				f.spans[s.id] = x.passes[s.id].span
			}
		}
	}
	x.mu.RUnlock()

	out := make([]index.ContentHit, 0, len(files))
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		h, ok := f.answer(ctx, open)
		if ok {
			out = append(out, h)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// answer reads f's best passages as the caller; false when the caller may not
// read the file, or it changed since it was indexed.
func (f *fileHits) answer(ctx context.Context, open func(context.Context, string) (*os.File, error)) (index.ContentHit, bool) {
	h := index.ContentHit{Path: f.path, Keyword: f.kw, Sim: f.sim, HasSim: f.hasSim, StandOut: f.standOut}
	fd, err := open(ctx, f.path)
	if err != nil {
		return h, false
	}
	defer fd.Close()
	fi, err := fd.Stat()
	if err != nil || fi.Size() != f.size || fi.ModTime().UnixNano() != f.mt {
		return h, false
	}
	// The file's best passages: by words first, then by meaning, each once;
	// a passage's score is its coverage plus a twentieth of its cosine (the
	// best rank's weight of meaning).
	simOf := map[uint32]float64{}
	for _, s := range f.bySim {
		simOf[s.id] = s.sim
	}
	type pick struct {
		id    uint32
		score float64
	}
	var picks []pick
	seen := map[uint32]bool{}
	for _, s := range f.best {
		seen[s.id] = true
		picks = append(picks, pick{s.id, s.cov + 0.05*simOf[s.id]})
	}
	for _, s := range f.bySim {
		if !seen[s.id] && len(picks) < perFile {
			seen[s.id] = true
			picks = append(picks, pick{s.id, 0.05 * s.sim})
		}
	}
	sort.SliceStable(picks, func(i, j int) bool { return picks[i].score > picks[j].score })
	for _, p := range picks {
		sp := f.spans[p.id]
		buf := make([]byte, min(int(sp.end-sp.start), maxText+utf8.UTFMax))
		n, err := fd.ReadAt(buf, int64(sp.start))
		if err != nil && err != io.EOF {
			return h, false
		}
		h.Passages = append(h.Passages, index.Passage{Line: int(sp.line), Text: clip(string(buf[:n])), Score: p.score})
	}
	return h, len(h.Passages) > 0
}

// clip trims a passage's text to maxText bytes, at a line end when there is
// one in its second half, else at a rune.
func clip(s string) string {
	s = strings.TrimRight(s, "\n")
	if len(s) <= maxText {
		return s
	}
	s = s[:maxText]
	if i := strings.LastIndexByte(s, '\n'); i > maxText/2 {
		return s[:i]
	}
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}

func norm(v []float32) float64 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	return math.Sqrt(s)
}

func cosine(q, v []float32, nq float64) float64 {
	var d float64
	for i := range q {
		d += float64(q[i]) * float64(v[i])
	}
	nv := norm(v)
	if nq == 0 || nv == 0 {
		return 0
	}
	return max(0, min(1, d/(nq*nv)))
}
