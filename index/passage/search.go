package passage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
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
)

// Source is the content evidence for one caller. A query asks the index for
// every file that matches (Evidence: hundreds, each checked by Stat) and reads
// the text of only those that reach its answer (Read, through ReadEach), so
// a query's cost in system calls does not grow with its candidates' text.
type Source struct {
	X *Index
	// Stat returns, for each of paths, the regular file's size and
	// modification time as the caller sees it, or an error where the caller
	// may not read it: one call a query, so that files sharing a directory
	// share its lookup.
	Stat func(ctx context.Context, paths []string) []FileState
	// ReadEach opens each of paths for reading as the caller and calls each
	// with its index, the open file and that file's own state (Err where it
	// could not be opened or is not a regular file: r is nil then); the
	// file is closed when each returns. One call reads several files, so
	// that files sharing a directory share its lookup.
	ReadEach func(ctx context.Context, paths []string, each func(i int, r io.ReaderAt, st FileState))
}

// FileState is a file's size, modification and change times (Unix ns) and
// inode as Source.Stat sees it; Err where the caller may not read it.
type FileState struct {
	Size, MTime, CTime int64
	Ino                uint64
	Err                error
}

// Evidence implements index.ContentSource.
func (s Source) Evidence(ctx context.Context, text string, vec []float32, model string, threshold float64) ([]index.ContentHit, error) {
	return s.X.Search(ctx, text, vec, model, threshold, s.Stat)
}

// Read implements index.ContentSource: each hit's passages' snippets for
// the query text (snippet.go), read from its file as the caller, by up to
// readers goroutines, each reading at least perReader files (one ReadEach
// each, so one lookup of a directory they share), or from the bytes an
// earlier answer read of the version Evidence checked (texts). A hit whose
// file the caller can no longer open, or that changed since Evidence checked
// it, loses its passages.
func (s Source) Read(ctx context.Context, text string, hits []*index.ContentHit) error {
	qt := queryTerms(text)
	// A file whose passages an answer read before, from the version
	// Evidence checked, is not opened again (texts).
	byPath := make([]*index.ContentHit, 0, len(hits))
	for _, h := range hits {
		if b, ok := s.X.texts.get(h); ok {
			setText(h, b, qt)
		} else {
			byPath = append(byPath, h)
		}
	}
	slices.SortFunc(byPath, func(a, b *index.ContentHit) int { return strings.Compare(a.Path, b.Path) })
	gen := s.X.texts.generation()
	shares := min(readers, (len(byPath)+perReader-1)/perReader)
	errs := make([]error, shares)
	var wg sync.WaitGroup
	for w := range shares {
		share := byPath[w*len(byPath)/shares : (w+1)*len(byPath)/shares]
		paths := make([]string, len(share))
		for i, h := range share {
			paths[i] = h.Path
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer recoverTo(&errs[w])
			s.ReadEach(ctx, paths, func(i int, r io.ReaderAt, st FileState) {
				h := share[i]
				bs, ok := readText(r, st, h)
				if !ok {
					h.Passages, h.Spans = nil, nil
					return
				}
				setText(h, bs, qt)
				s.X.texts.put(h, st, bs, gen)
			})
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("passage index: reading passages: %w", err)
	}
	return nil
}

// readText reads, from r, the file as it is now (st), the bytes of h's
// passages that a snippet may show: each from its start up to scanMax bytes
// and one rune (wholeRunes); false when the file could not be opened or is no
// longer the version indexed. Spans close together (all of them within
// coalesceMax bytes, as a file's few best passages usually are) are read by
// one read.
func readText(r io.ReaderAt, st FileState, h *index.ContentHit) ([]string, bool) {
	if st.Err != nil || st.Size != h.Size || st.MTime != h.MTime {
		return nil, false
	}
	out := make([]string, len(h.Spans))
	if len(h.Spans) == 0 {
		return out, true
	}
	// Each passage is read up to scanMax bytes and one rune from its start.
	end := func(sp [2]int64) int64 { return min(sp[1], sp[0]+scanMax+utf8.UTFMax) }
	lo, hi := h.Spans[0][0], end(h.Spans[0])
	for _, sp := range h.Spans[1:] {
		lo, hi = min(lo, sp[0]), max(hi, end(sp))
	}
	if hi-lo <= coalesceMax {
		buf := make([]byte, hi-lo)
		n, err := r.ReadAt(buf, lo)
		if err != nil && err != io.EOF {
			return nil, false
		}
		buf = buf[:n]
		for i, sp := range h.Spans {
			a, b := min(sp[0]-lo, int64(n)), min(end(sp)-lo, int64(n))
			out[i] = string(wholeRunes(buf[a:b]))
		}
		return out, true
	}
	for i, sp := range h.Spans {
		buf := make([]byte, end(sp)-sp[0])
		n, err := r.ReadAt(buf, sp[0])
		if err != nil && err != io.EOF {
			return nil, false
		}
		out[i] = string(wholeRunes(buf[:n]))
	}
	return out, true
}

// setText sets h's passages' text to their snippets for the query's analysed
// words qt, from their bytes bs (readText's).
func setText(h *index.ContentHit, bs []string, qt []string) {
	for i, b := range bs {
		var skip int
		h.Passages[i].Text, skip = snippet(b, qt)
		h.Passages[i].Line += skip
	}
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
	terms    []string // the query's words its passages hold (byWords)
	hasSim   bool
	standOut bool
	best     []scored
	bySim    []scored
	spans    map[uint32]span
}

// Search finds the files whose passages match text (by words) or vec (by
// meaning, when model is the passages' model), each with its best passages'
// lines, scores and byte ranges but no text (Source.Read reads it), and drops
// a file stat refuses or that changed since it was indexed. A file whose
// evidence does not count at threshold (index.ContentHit.Counts) is left
// out before stat.
func (x *Index) Search(ctx context.Context, text string, vec []float32, model string, threshold float64, stat func(context.Context, []string) []FileState) ([]index.ContentHit, error) {
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

	// Every hit is checked as the caller, in one call (most of a query's
	// system calls).
	fs := make([]*fileHits, 0, len(files))
	paths := make([]string, 0, len(files))
	for _, f := range files {
		if !f.evidence().Counts(threshold) {
			continue
		}
		fs = append(fs, f)
		paths = append(paths, f.path)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	states := stat(ctx, paths)
	if len(states) != len(fs) {
		return nil, fmt.Errorf("passage index: checking hits: %d answers for %d files", len(states), len(fs))
	}
	out := make([]index.ContentHit, 0, len(fs))
	for i, f := range fs {
		if h, ok := f.answer(states[i]); ok {
			out = append(out, h)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// readers is how many goroutines read an answer's passages, each at least
// perReader files; coalesceMax bounds the bytes one read of a file's
// passages may span (beyond it, one read per passage).
const (
	readers     = 4
	perReader   = 4
	coalesceMax = 64 << 10
)

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
	held    []uint64  // by pid: bit i, the query's word i (of the first 64) is the passage's
	touched []uint32  // the pids with cov > 0
	dist    []uint16  // by vid: Hamming distance to the query's sign bits
	// groupFids is the meaning scan's: the files a group's passages offered.
	groupFids []uint32
	// Each file's best passage by words, and (the meaning scan's own: it
	// runs beside the word stage) its closest by meaning.
	byWords   fileBests[uint32]
	byMeaning fileBests[simID]
}

// fileBests keeps, for one query, each file's best value offered (by fid)
// and the fids offered, so that resetting clears only what the query set.
type fileBests[T any] struct {
	best []T
	set  []bool
	fids []uint32
}

// size makes room for n fids.
func (b *fileBests[T]) size(n int) {
	if len(b.best) < n {
		b.best, b.set = make([]T, n), make([]bool, n)
	}
}

// offer keeps c as fid's best unless a value before it (before(a, b): a
// ranks ahead of b) was offered.
func (b *fileBests[T]) offer(fid uint32, c T, before func(a, b T) bool) {
	switch {
	case !b.set[fid]:
		b.best[fid], b.set[fid] = c, true
		b.fids = append(b.fids, fid)
	case before(c, b.best[fid]):
		b.best[fid] = c
	}
}

// top is the k best of the files' bests, in no order; reset clears them.
func (b *fileBests[T]) top(k int, before func(a, b T) bool) []T {
	h := newBestK(min(len(b.fids), k), before)
	for _, fid := range b.fids {
		h.offer(b.best[fid])
	}
	return h.h
}

func (b *fileBests[T]) reset() {
	var zero T
	for _, fid := range b.fids {
		b.best[fid], b.set[fid] = zero, false
	}
	b.fids = b.fids[:0]
}

// scratch returns working memory sized for the index. Precondition: mu held.
func (x *Index) scratch() *scratch {
	sc, _ := x.scratchPool.Get().(*scratch)
	if sc == nil {
		sc = &scratch{}
	}
	if len(sc.cov) < len(x.passes) {
		n := len(x.passes) + len(x.passes)/8
		sc.cov, sc.bm, sc.held, sc.dist = make([]float64, n), make([]float64, n), make([]uint64, n), make([]uint16, n)
	}
	if len(sc.byWords.best) < len(x.byFid) {
		n := len(x.byFid) + len(x.byFid)/8
		sc.byWords.size(n)
		sc.byMeaning.size(n)
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
	cov, bm, held := sc.cov, sc.bm, sc.held
	touched := sc.touched[:0]
	for i, h := range per {
		if h.pl == nil {
			continue
		}
		var bit uint64
		if i < 64 {
			bit = 1 << i
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
			held[id] |= bit
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
	// first.
	for _, id := range touched {
		sc.byWords.offer(x.meta[id].fid, id, before)
	}
	for _, top := range sc.byWords.top(wordFiles, before) {
		f := get(x.meta[top].fid)
		mine := make([]uint32, 0, perFile)
		var all uint64
		for _, id := range f.pids {
			if cov[id] > 0 {
				mine = keepBest(mine, perFile, id, before)
				all |= held[id]
			}
		}
		for i, t := range qt {
			if i < 64 && all&(1<<i) != 0 {
				f.terms = append(f.terms, t)
			}
		}
		for _, id := range mine {
			f.best = append(f.best, scored{id: id, cov: cov[id], bm: bm[id]})
			f.spans[id] = x.passes[id].span
		}
		f.kw = cov[top]
	}
	for _, id := range touched {
		cov[id], bm[id], held[id] = 0, 0, 0
	}
	sc.byWords.reset()
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

// bestK keeps the k best of the values offered (before(a, b): a ranks
// ahead of b), in a heap whose top is the last of those kept (keepBest is
// the form for a handful, kept sorted).
type bestK[T any] struct {
	k      int
	before func(a, b T) bool
	h      []T
}

func newBestK[T any](k int, before func(a, b T) bool) *bestK[T] {
	return &bestK[T]{k: k, before: before, h: make([]T, 0, k)}
}

// offer keeps c if it is among the k best so far.
func (b *bestK[T]) offer(c T) {
	switch {
	case len(b.h) < b.k:
		b.h = append(b.h, c)
		b.up(len(b.h) - 1)
	case b.k > 0 && b.before(c, b.h[0]):
		b.h[0] = c
		b.down(0)
	}
}

// later orders the heap: the value ranked last on top.
func (b *bestK[T]) later(i, j int) bool { return b.before(b.h[j], b.h[i]) }

func (b *bestK[T]) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !b.later(i, p) {
			return
		}
		b.h[i], b.h[p] = b.h[p], b.h[i]
		i = p
	}
}

func (b *bestK[T]) down(i int) {
	for {
		l := 2*i + 1
		if l >= len(b.h) {
			return
		}
		m := l
		if r := l + 1; r < len(b.h) && b.later(r, l) {
			m = r
		}
		if !b.later(m, i) {
			return
		}
		b.h[i], b.h[m] = b.h[m], b.h[i]
		i = m
	}
}

// evidence is f's hit without its passages.
func (f *fileHits) evidence() index.ContentHit {
	return index.ContentHit{Path: f.path, Keyword: f.kw, Terms: f.terms, Sim: f.sim, HasSim: f.hasSim, StandOut: f.standOut, Size: f.size, MTime: f.mt}
}

// answer is f's evidence, its best passages without their text, given its
// file's state as the caller sees it; false when the caller may not read the
// file, or it changed since it was indexed.
func (f *fileHits) answer(st FileState) (index.ContentHit, bool) {
	h := f.evidence()
	if st.Err != nil || st.Size != f.size || st.MTime != f.mt {
		return h, false
	}
	h.CTime, h.Ino = st.CTime, st.Ino
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
		h.Passages = append(h.Passages, index.Passage{Line: int(sp.line), Score: p.score})
		h.Spans = append(h.Spans, [2]int64{int64(sp.start), int64(sp.end)})
	}
	return h, len(h.Passages) > 0
}
