package passage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strings"
	"sync"
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
	pids     []uint32
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
	files := map[uint32]*fileHits{} // by fid
	get := func(fid uint32) *fileHits {
		f := files[fid]
		if f == nil {
			e := x.byFid[fid]
			f = &fileHits{path: e.path, size: e.size, mt: e.mtime, pids: e.pids, spans: map[uint32]span{}}
			files[fid] = f
		}
		return f
	}
	sc := x.scratch()
	meaning := vec != nil && model != "" && model == x.model && x.embedded > 0
	// The meaning scan needs nothing from the word stage: on a second core
	// the query waits for the longer of the two, not both.
	var r scanned
	var scanErr error
	done := make(chan struct{})
	if meaning {
		go func() {
			defer close(done)
			defer recoverTo(&scanErr) // a panic here would end the daemon
			r = x.scan(vec, sc)
		}()
	} else {
		close(done)
	}
	x.byWords(qt, sc, get)
	<-done // x.mu is held until the scan is done
	if meaning && scanErr == nil {
		x.byMeaning(vec, r, sc, files, get)
	}
	x.scratchPool.Put(sc)
	x.mu.RUnlock()
	if scanErr != nil {
		return nil, fmt.Errorf("passage index: meaning scan: %w", scanErr)
	}

	// Each hit's passages are read as the caller, a few files at a time
	// (open, stat and a read or three each: most of a query's wall time).
	fs := make([]*fileHits, 0, len(files))
	for _, f := range files {
		fs = append(fs, f)
	}
	hits := make([]index.ContentHit, len(fs))
	oks := make([]bool, len(fs))
	errs := make([]error, readers)
	var wg sync.WaitGroup
	for w := range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer recoverTo(&errs[w])
			for i := w; i < len(fs); i += readers {
				if ctx.Err() != nil {
					return
				}
				hits[i], oks[i] = fs[i].answer(ctx, open)
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("passage index: reading passages: %w", err)
	}
	out := make([]index.ContentHit, 0, len(fs))
	for i, h := range hits {
		if oks[i] {
			out = append(out, h)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// readers is how many goroutines read a query's hits' passages.
const readers = 4

// recoverTo turns a panic of the goroutine it is deferred in into *err.
func recoverTo(err *error) {
	if v := recover(); v != nil {
		*err = fmt.Errorf("panic: %v", v)
	}
}

// scratch is one query's per-pid and per-fid working memory, kept between
// queries (Index.scratchPool): zeroed where a query wrote, after it.
type scratch struct {
	cov, bm []float64 // by pid: a passage's coverage and BM25 sum
	touched []uint32  // the pids with cov > 0
	fbest   []uint32  // by fid: its best passage by words, 0 none
	dist    []uint16  // by pid: Hamming distance to the query's sign bits
}

// scratch returns working memory sized for the index. Precondition: mu held.
func (x *Index) scratch() *scratch {
	sc, _ := x.scratchPool.Get().(*scratch)
	if sc == nil {
		sc = &scratch{}
	}
	if len(sc.cov) < len(x.passes) {
		n := len(x.passes) + len(x.passes)/8
		sc.cov, sc.bm, sc.dist = make([]float64, n), make([]float64, n), make([]uint16, n)
	}
	if len(sc.fbest) < len(x.byFid) {
		sc.fbest = make([]uint32, len(x.byFid)+len(x.byFid)/8)
	}
	return sc
}

// byWords is the word stage: each passage's coverage of the query's words
// and its BM25 sum; the wordFiles files whose best passage comes first (by
// coverage, then BM25, then pid) become hits, each with its best perFile
// passages. Precondition: mu held for reading.
func (x *Index) byWords(qt []string, sc *scratch, get func(uint32) *fileHits) {
	if len(qt) == 0 || x.live == 0 {
		return
	}
	n := float64(x.live)
	avg := float64(x.words) / n
	rarest := math.Log(1 + (n+0.5)/0.5)
	// A passage's BM25 for a word is idf·g, g of its count and length.
	g := func(tf uint16, words int32) float64 {
		f := float64(tf)
		return f * (k1 + 1) / (f + k1*(1-b+b*float64(words)/avg))
	}
	type th struct {
		idf, gbest float64
		pl         *postings
	}
	per := make([]th, len(qt))
	var sumIDF float64
	for i, t := range qt {
		pl := x.post[t]
		df := 0
		var gbest float64
		if pl != nil {
			for j, id := range pl.ids {
				if m := x.meta[id]; m.fid != 0 {
					df++
					gbest = max(gbest, g(pl.tf[j], m.words))
				}
			}
		}
		if df == 0 {
			per[i].idf = rarest
			sumIDF += rarest
			continue
		}
		per[i] = th{idf: math.Log(1 + (n-float64(df)+0.5)/(float64(df)+0.5)), gbest: gbest, pl: pl}
		sumIDF += per[i].idf
	}
	cov, bm := sc.cov, sc.bm
	touched := sc.touched[:0]
	for _, h := range per {
		if h.pl == nil {
			continue
		}
		for j, id := range h.pl.ids {
			m := x.meta[id]
			if m.fid == 0 {
				continue
			}
			gi := g(h.pl.tf[j], m.words)
			if cov[id] == 0 {
				touched = append(touched, id)
			}
			cov[id] += h.idf * (presence + (1-presence)*gi/h.gbest) / sumIDF
			bm[id] += h.idf * gi
		}
	}
	before := func(a, b uint32) bool {
		if cov[a] != cov[b] {
			return cov[a] > cov[b]
		}
		if bm[a] != bm[b] {
			return bm[a] > bm[b]
		}
		return a < b
	}
	// Each file's best passage, then the wordFiles files whose best comes
	// first: a heap whose top is the last of those kept.
	fbest := sc.fbest
	var heads []uint32
	for _, id := range touched {
		fid := x.meta[id].fid
		switch cur := fbest[fid]; {
		case cur == 0:
			fbest[fid] = id
			heads = append(heads, fid)
		case before(id, cur):
			fbest[fid] = id
		}
	}
	kept := make([]uint32, 0, min(len(heads), wordFiles)) // best pids, a heap, last first
	later := func(i, j int) bool { return before(kept[j], kept[i]) }
	for _, fid := range heads {
		id := fbest[fid]
		switch {
		case len(kept) < wordFiles:
			kept = append(kept, id)
			siftUp(kept, len(kept)-1, later)
		case before(id, kept[0]):
			kept[0] = id
			siftDown(kept, 0, later)
		}
	}
	for _, top := range kept {
		f := get(x.meta[top].fid)
		mine := make([]uint32, 0, perFile)
		for _, id := range f.pids {
			if cov[id] > 0 {
				mine = keepBest(mine, perFile, id, before)
			}
		}
		for _, id := range mine {
			f.best = append(f.best, scored{id: id, cov: cov[id], bm: bm[id]})
			f.spans[id] = x.passes[id].span
		}
		f.kw = cov[top]
	}
	for _, id := range touched {
		cov[id], bm[id] = 0, 0
	}
	for _, fid := range heads {
		fbest[fid] = 0
	}
	sc.touched = touched[:0]
}

// keepBest inserts c into best (at most k, best first) if it belongs there.
func keepBest[T any](best []T, k int, c T, before func(a, b T) bool) []T {
	i := len(best)
	for i > 0 && before(c, best[i-1]) {
		i--
	}
	if i >= k {
		return best
	}
	if len(best) < k {
		best = append(best, c)
	}
	copy(best[i+1:], best[i:len(best)-1])
	best[i] = c
	return best
}

func siftUp(h []uint32, i int, less func(i, j int) bool) {
	for i > 0 {
		p := (i - 1) / 2
		if !less(i, p) {
			return
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

func siftDown(h []uint32, i int, less func(i, j int) bool) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		m := l
		if r := l + 1; r < len(h) && less(r, l) {
			m = r
		}
		if !less(m, i) {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
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
