package passage

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/index/content"
	"github.com/semfs/semfs/index/int8vec"
)

// genIndex indexes files generated files of paras paragraphs of about
// passageWords words each (one passage a paragraph; every 40th file has
// 2·perFileExact), and gives every passage a random unit vector of dims
// components.
func genIndex(t testing.TB, files, paras, dims int, rng *rand.Rand) (*Index, string) {
	t.Helper()
	root := t.TempDir()
	vocab := make([]string, 3000)
	for i := range vocab {
		vocab[i] = word(i)
	}
	var cs []content.Change
	for i := range files {
		var b strings.Builder
		n := paras
		if i%40 == 0 {
			n = 2 * perFileExact
		}
		for range n {
			for range passageWords + 10 {
				// Zipf-like: a few words everywhere, most rare.
				b.WriteString(vocab[int(float64(len(vocab))*math.Pow(rng.Float64(), 3))])
				b.WriteByte(' ')
			}
			b.WriteString("\n\n")
		}
		p := fmt.Sprintf("d%02d/f%04d.txt", i%17, i)
		if err := os.MkdirAll(filepath.Join(root, filepath.Dir(p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, p), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		cs = append(cs, content.Change{Op: content.Written, Path: p})
	}
	x, err := Open(Options{Files: content.Dir(root), CPU: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { x.Close() })
	indexBeside(t, x, cs)
	x.mu.Lock()
	// In pid order: which pid a passage gets depends on whether the worker
	// or this goroutine indexed its file, and the scan's sample takes every
	// k-th pid, so a seed gives that sample the same vectors in every run.
	// (In path order, one indexing order out of ~150 under load gave the
	// sample a deviation 16 % off every passage's.)
	for id := 1; id < len(x.passes); id++ {
		if x.passes[id].path != "" {
			x.setVecLocked(uint32(id), randUnit(rng, dims))
		}
	}
	x.model = "test"
	x.mu.Unlock()
	return x, root
}

// indexBeside applies cs and indexes the files it names on this goroutine,
// beside the worker: the worker runs at nice 19, and on a loaded machine it
// would take hours. It returns when the worker has nothing left either.
func indexBeside(t testing.TB, x *Index, cs []content.Change) {
	t.Helper()
	x.Apply(cs)
	var w workspace
	for {
		p, g, ok, more := x.q.Pop()
		if !more {
			break
		}
		if ok {
			x.index(p, g, &w)
		}
	}
	if err := x.Settle(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// word is the i-th word of the generated files: letters only, never a stop
// word or a stem of another.
func word(i int) string {
	w := []byte("zq")
	for ; i > 0; i /= 26 {
		w = append(w, byte('a'+i%26))
	}
	return string(w) + "zq"
}

func randUnit(rng *rand.Rand, dims int) []float32 {
	v := make([]float32, dims)
	var n float64
	for i := range v {
		v[i] = float32(rng.NormFloat64())
		n += float64(v[i]) * float64(v[i])
	}
	for i := range v {
		v[i] /= float32(math.Sqrt(n))
	}
	return v
}

// The approximate meaning scan (above exhaustiveMax vectors) changes which files
// are found by meaning alone, never what is said of a file: the word stage's
// evidence is the exact scan's, every Sim is the file's exact best cosine,
// and a file holding the query's own vector is found, closest.
func TestApproximateMeaningScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 25))
	x, root := genIndex(t, 700, 8, 512, rng)
	st := x.Stats()
	if st.Passages <= coarseMin {
		t.Fatalf("%d passages: the coarse pass would keep them all", st.Passages)
	}
	stat := DirSource(x, root).Stat
	// bestCos is the best cosine of path's passages, and whether one has
	// exactly sim.
	bestCos := func(path string, q []float32, sim float64) (float64, bool, int) {
		x.mu.RLock()
		defer x.mu.RUnlock()
		best, some := 0.0, false
		for _, id := range x.files.At(path).pids {
			c := cosine(q, x.passes[id].vec, norm(q), norm(x.passes[id].vec))
			best = max(best, c)
			some = some || c == sim
		}
		return best, some, len(x.files.At(path).pids)
	}
	for i := range 40 {
		x.mu.RLock()
		id := uint32(1 + rng.IntN(len(x.passes)-1))
		planted, pv := x.passes[id].path, x.passes[id].vec
		x.mu.RUnlock()
		q := randUnit(rng, 512)
		if i%2 == 0 {
			q = pv // the planted passage's own vector
		}
		words := word(rng.IntN(3000)) + " " + word(rng.IntN(300)) + " " + word(rng.IntN(3000))
		search := func(exhaustiveMax int) map[string]index.ContentHit {
			x.exhaustiveMax = exhaustiveMax
			hits, err := x.Search(context.Background(), words, q, "test", math.Inf(-1), stat)
			if err != nil {
				t.Fatal(err)
			}
			out := map[string]index.ContentHit{}
			for _, h := range hits {
				out[h.Path] = h
			}
			return out
		}
		exact, approx := search(math.MaxInt), search(100)
		for p, e := range exact {
			if e.Keyword == 0 {
				continue
			}
			a, ok := approx[p]
			if !ok || a.Keyword != e.Keyword {
				t.Errorf("query %d: %s: keyword %v in the exact scan's answer, %v (present %v) in the approximate one's", i, p, e.Keyword, a.Keyword, ok)
			}
		}
		for p, a := range approx {
			// A long file's Sim is one of its passages' cosines, its best
			// but for a rare miss of the sign bits.
			want, some, n := bestCos(p, q, a.Sim)
			if !a.HasSim || !some || a.Sim > want || n <= perFileExact && a.Sim != want {
				t.Errorf("query %d: %s (%d passages): sim %v (known %v, a passage's %v), its best passage's cosine is %v", i, p, n, a.Sim, a.HasSim, some, want)
			}
		}
		if i%2 == 0 {
			if a, ok := approx[planted]; !ok || a.Sim < 0.9999 {
				t.Errorf("query %d: the file holding the query's own vector, %s, not found (%v %v)", i, planted, ok, a.Sim)
			}
		}
	}
}

// The approximate scan's mean and deviation (for StandOut) come from about
// statSample passages spread over the index, and agree with every passage's.
func TestMeaningSampleIsSpread(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 12))
	x, _ := genIndex(t, 500, 8, 512, rng)
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.embedded <= exhaustiveMax {
		t.Fatalf("%d passages: the scan would be exhaustive", x.embedded)
	}
	sc := x.scratch()
	for i := range 5 {
		q := randUnit(rng, 512)
		r := x.scan(q, sc)
		if !r.approx || r.cnt < statSample*9/10 || r.cnt > statSample*11/10 {
			t.Fatalf("query %d: %d passages sampled (approx %v), want about %d", i, r.cnt, r.approx, statSample)
		}
		var sum, sum2 float64
		qq := make([]int8, x.dims)
		fq := int8vec.Put(qq, q)
		p8 := make([]int8, x.dims)
		for _, ps := range x.passes {
			if ps.vec != nil {
				s := int8vec.Cosine(qq, p8, fq, int8vec.Put(p8, ps.vec))
				sum, sum2 = sum+s, sum2+s*s
			}
		}
		n := float64(x.embedded)
		mean, std := sum/n, math.Sqrt(sum2/n-sum*sum/n/n)
		smean := r.sum / float64(r.cnt)
		sstd := math.Sqrt(r.sum2/float64(r.cnt) - smean*smean)
		if math.Abs(smean-mean) > 4*std/math.Sqrt(float64(r.cnt)) || math.Abs(sstd-std) > 0.15*std {
			t.Errorf("query %d: sample mean %.4f deviation %.4f, every passage's %.4f and %.4f", i, smean, sstd, mean, std)
		}
	}
}

// BenchmarkMeaningScan is the meaning stage's pass over every passage (the
// coarse and fine passes and the sample for the mean and deviation) at 40,000
// passages, the size of the mixed load's index after a few rounds.
func BenchmarkMeaningScan(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 30))
	x, _ := genIndex(b, 4000, 10, 512, rng)
	qs := make([][]float32, 64)
	for i := range qs {
		qs[i] = randUnit(rng, 512)
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	sc := x.scratch()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if r := x.scan(qs[i%len(qs)], sc); len(r.tops) == 0 || !r.approx {
			b.Fatalf("scan found nothing (approx %v)", r.approx)
		}
	}
}

// A file matched by meaning alone whose closest passage is below the
// threshold and does not stand out could not count in the best rank: Search
// leaves it out before asking stat about it. Every other hit is as it was.
func TestWeakMeaningOnlyHitsAreNotChecked(t *testing.T) {
	rng := rand.New(rand.NewPCG(30, 7))
	x, root := genIndex(t, 120, 4, 64, rng)
	dir := DirSource(x, root).Stat
	split := 0 // queries with word hits, meaning hits kept and meaning hits left out
	for i := range 20 {
		q := randUnit(rng, 64)
		// Words of the middle of the Zipf curve match some files; meaning
		// matches all.
		words := word(300+rng.IntN(300)) + " " + word(300+rng.IntN(300))
		all, err := x.Search(context.Background(), words, q, "test", math.Inf(-1), dir)
		if err != nil {
			t.Fatal(err)
		}
		// The threshold splits the hits found by meaning alone: which file
		// gets which random vector depends on which goroutine indexed it
		// (genIndex gives vectors in pid order), so a threshold drawn from
		// every hit's similarity left the split to chance (8 of 20 once).
		var sims []float64
		for _, h := range all {
			if h.Keyword == 0 && !h.StandOut {
				sims = append(sims, h.Sim)
			}
		}
		if len(sims) < 2 {
			t.Fatalf("query %d: %d hits by meaning alone of %d", i, len(sims), len(all))
		}
		slices.Sort(sims)
		threshold := sims[len(sims)/2] // some hits each side
		var asked []string
		stat := func(ctx context.Context, paths []string) []FileState {
			asked = append(asked, paths...)
			return dir(ctx, paths)
		}
		got, err := x.Search(context.Background(), words, q, "test", threshold, stat)
		if err != nil {
			t.Fatal(err)
		}
		var want []index.ContentHit
		for _, h := range all {
			if h.Keyword > 0 || h.Sim >= threshold || h.StandOut {
				want = append(want, h)
			}
		}
		words0 := 0
		for _, h := range all {
			if h.Keyword > 0 {
				words0++
			}
		}
		if words0 > 0 && words0 < len(want) && len(want) < len(all) {
			split++
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("query %d, threshold %v:\n got %v\nwant %v", i, threshold, got, want)
		}
		if len(asked) != len(want) {
			t.Errorf("query %d: stat asked about %d files, the answer has %d", i, len(asked), len(want))
		}
	}
	if split < 15 {
		t.Errorf("only %d of 20 queries had word hits, meaning hits kept and meaning hits left out", split)
	}
}

// TestOweKeepsTheBudget: the worker's rests, taken in pieces of restMin or
// more, add up to what its work earned at the budget, short of at most one
// piece, whatever the sizes of the work between them.
func TestOweKeepsTheBudget(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	for _, f := range []float64{0.02, 0.25, 0.5, 0.9} {
		var owed, slept, worked time.Duration
		for i := range 5000 {
			took := time.Duration(rng.IntN(200)) * time.Microsecond
			if i%500 == 0 {
				took = 30 * time.Millisecond // an embedding batch
			}
			worked += took
			var d time.Duration
			d, owed = owe(owed, took, f)
			if d != 0 && d < restMin {
				t.Fatalf("f %v: a rest of %v, below restMin", f, d)
			}
			slept += d
		}
		earned := time.Duration(float64(worked) * (1 - f) / f)
		// Each call rounds its share down by under a nanosecond.
		if diff := earned - (slept + owed); diff < 0 || diff > 5000 {
			t.Fatalf("f %v: slept %v + owed %v, earned %v", f, slept, owed, earned)
		}
		if owed >= restMin {
			t.Fatalf("f %v: %v left owed, at least restMin", f, owed)
		}
	}
	if d, left := owe(time.Second, time.Second, 1); d != 0 || left != 0 {
		t.Fatalf("a whole core: sleep %v, owed %v", d, left)
	}
}
