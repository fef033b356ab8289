package passage

import (
	"context"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/semfs/semfs/embed"
	"github.com/semfs/semfs/embed/embedtest"
	"github.com/semfs/semfs/index/content"
	"github.com/semfs/semfs/index/int8vec"
)

// dupIndex is an index of files of one passage each, most of them copies of
// a few texts, every passage with a vector: the same text's is the same
// vector (one per text, random).
type dupIndex struct {
	x    *Index
	root string
	rng  *rand.Rand
	vecs map[uint64][]float32 // by text hash
	n    int                  // files written so far
	dims int
}

func newDupIndex(t testing.TB, seed uint64, dims int) *dupIndex {
	root := t.TempDir()
	x, err := Open(Options{Files: content.Dir(root), CPU: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { x.Close() })
	return &dupIndex{x: x, root: root, rng: rand.New(rand.NewPCG(seed, 40)), vecs: map[uint64][]float32{}, dims: dims}
}

// write writes files new files, a copy of one of templates texts each but
// for one in unique, and indexes them; then gives every passage without a
// vector its text's.
func (d *dupIndex) write(t testing.TB, files, templates, unique int) {
	var cs []content.Change
	for range files {
		k := d.rng.IntN(templates)
		if d.rng.IntN(unique) == 0 {
			k = templates + d.n
		}
		var b strings.Builder
		for j := range 20 {
			b.WriteString(word(k*20 + j))
			b.WriteByte(' ')
		}
		p := fmt.Sprintf("d%d/f%05d.txt", d.n%7, d.n)
		d.n++
		if err := os.MkdirAll(filepath.Join(d.root, filepath.Dir(p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d.root, p), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		cs = append(cs, content.Change{Op: content.Written, Path: p})
	}
	d.index(t, cs)
}

func (d *dupIndex) index(t testing.TB, cs []content.Change) {
	x := d.x
	indexBeside(t, x, cs)
	x.mu.Lock()
	defer x.mu.Unlock()
	for id := 1; id < len(x.passes); id++ {
		if ps := &x.passes[id]; ps.path != "" && ps.vec == nil {
			v := d.vecs[ps.hash]
			if v == nil {
				v = randUnit(d.rng, d.dims)
				d.vecs[ps.hash] = v
			}
			x.setVecLocked(uint32(id), v)
		}
	}
	x.model = "test"
}

// remove removes files of the files written, at random.
func (d *dupIndex) remove(t *testing.T, files int) {
	var cs []content.Change
	for _, i := range d.rng.Perm(d.n)[:files] {
		p := fmt.Sprintf("d%d/f%05d.txt", i%7, i)
		if err := os.Remove(filepath.Join(d.root, p)); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		cs = append(cs, content.Change{Op: content.Removed, Path: p})
	}
	d.index(t, cs)
}

// checkGroups checks the groups against the passages: every live passage
// with a vector is in the group of its vector, and in no other; a group's
// passages are in pid order and have its vector; a vid is coded while it has
// passages, and free when not; every group is found by its text's hash, and
// no two of a text have one vector.
func (d *dupIndex) checkGroups(t *testing.T) {
	t.Helper()
	x := d.x
	x.mu.RLock()
	defer x.mu.RUnlock()
	in := map[uint32]uint32{}
	used := 0
	for vid := 1; vid < len(x.groups); vid++ {
		g := x.groups[vid]
		l := x.lead[vid]
		if x.coded[vid] != (l != 0) {
			t.Fatalf("vid %d: coded %v, lead %x", vid, x.coded[vid], l)
		}
		if l == 0 {
			if g != nil {
				t.Fatalf("free vid %d: passages %v", vid, g)
			}
			continue
		}
		members := []uint32{l}
		if l&manyBit != 0 {
			members = g
			if len(members) < 2 || l&^manyBit != members[0] {
				t.Fatalf("vid %d: lead %x, passages %v", vid, l, g)
			}
		} else if g != nil {
			t.Fatalf("vid %d of one passage (%d) holds passages %v", vid, l, g)
		}
		used++
		if !slices.IsSorted(members) {
			t.Fatalf("vid %d: passages %v not in pid order", vid, members)
		}
		for _, id := range members {
			ps := x.passes[id]
			if ps.path == "" || x.vidOf[id] != uint32(vid) || !slices.Equal(ps.vec, x.passes[members[0]].vec) {
				t.Fatalf("vid %d: passage %d (path %q, vid %d) is not one of its", vid, id, ps.path, x.vidOf[id])
			}
			if _, dup := in[id]; dup {
				t.Fatalf("passage %d in two groups", id)
			}
			in[id] = uint32(vid)
		}
	}
	// Each text's groups, from byHash along nextOfHash: every group in use
	// once, of that text, no two of one vector.
	chained := map[uint32]bool{}
	for h, first := range x.byHash {
		var vecs [][]float32
		for vid := first; vid != 0; vid = x.nextOfHash[vid] {
			l := x.lead[vid]
			if l == 0 || x.passes[l&^manyBit].hash != h || chained[vid] {
				t.Fatalf("byHash %x: vid %d, lead %x, not a group of that text, or met twice", h, vid, l)
			}
			chained[vid] = true
			v := x.passes[l&^manyBit].vec
			if slices.ContainsFunc(vecs, func(o []float32) bool { return slices.Equal(o, v) }) {
				t.Fatalf("text %x: two groups of one vector (vid %d)", h, vid)
			}
			vecs = append(vecs, v)
		}
	}
	for vid := 1; vid < len(x.groups); vid++ {
		if x.lead[vid] != 0 && !chained[uint32(vid)] {
			t.Fatalf("vid %d: not found by its text's hash", vid)
		}
		if x.lead[vid] == 0 && x.nextOfHash[vid] != 0 {
			t.Fatalf("free vid %d: next of its hash %d", vid, x.nextOfHash[vid])
		}
	}
	if used != x.vids {
		t.Fatalf("%d groups in use, counted %d", used, x.vids)
	}
	distinct := map[*float32]bool{} // the test's vectors: equal ones share an array
	for id, ps := range x.passes {
		if ps.path != "" && ps.vec != nil {
			if in[uint32(id)] == 0 {
				t.Fatalf("passage %d has a vector and no group", id)
			}
			distinct[&ps.vec[0]] = true
		}
	}
	if len(distinct) != used {
		t.Fatalf("%d distinct vectors in %d groups", len(distinct), used)
	}
}

// The meaning scan compares the query with each group of equal vectors once,
// and finds what comparing it with every passage finds: the same closest
// files, each at its closest passage (the lowest pid of equals), and the same
// mean over every passage; through removals, compaction and the reuse of pids
// and vids, and when passages of one text have different vectors (a hash's
// collision).
func TestEqualVectorsAreScannedOnce(t *testing.T) {
	d := newDupIndex(t, 3, 64)
	d.write(t, 2000, 40, 25)
	d.checkGroups(t)
	for round := range 3 {
		d.checkScan(t, round)
		d.remove(t, d.x.Stats().Files*3/5)
		d.checkGroups(t)
		d.write(t, 1200, 40, 25)
		d.checkGroups(t)
		// The passages of a shared text but one get vectors of their own:
		// its group goes from many to one.
		x := d.x
		x.mu.Lock()
		for id := len(x.passes) - 1; id > 0; id-- {
			if vid := x.vidOf[id]; vid != 0 && x.lead[vid]&manyBit != 0 {
				for _, o := range slices.Clone(x.groups[vid])[1:] {
					x.setVecLocked(o, randUnit(d.rng, 64))
				}
				if x.lead[vid]&manyBit != 0 {
					t.Fatalf("vid %d: still many passages: %v", vid, x.groups[vid])
				}
				break
			}
		}
		x.mu.Unlock()
		d.checkGroups(t)
	}
	d.checkScan(t, 3)
}

func (d *dupIndex) checkScan(t *testing.T, round int) {
	t.Helper()
	x := d.x
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.vids >= coarseMin || x.embedded <= 2*x.vids {
		t.Fatalf("round %d: %d groups of %d passages: the test needs fewer than %d groups, of several passages each", round, x.vids, x.embedded, coarseMin)
	}
	sc := x.scratch()
	defer x.scratchPool.Put(sc)
	var hashes []uint64
	for h := range d.vecs {
		hashes = append(hashes, h)
	}
	sort.Slice(hashes, func(i, j int) bool { return hashes[i] < hashes[j] })
	for i := range 6 {
		q := randUnit(d.rng, 64)
		if i%2 == 0 {
			q = d.vecs[hashes[d.rng.IntN(len(hashes))]] // a shared text's own vector
		}
		// The oracle: every passage's int8 cosine, each file's closest
		// passage, the closest files.
		qq := make([]int8, 64)
		fq := int8vec.Put(qq, q)
		p8 := make([]int8, 64)
		best := map[uint32]simID{}
		var sum float64
		n := 0
		for id, ps := range x.passes {
			if ps.path == "" || ps.vec == nil {
				continue
			}
			s := int8vec.Cosine(qq, p8, fq, int8vec.Put(p8, ps.vec))
			sum += s
			n++
			fid := x.meta[id].fid
			if b, ok := best[fid]; !ok || closer(simID{uint32(id), s}, b) {
				best[fid] = simID{uint32(id), s}
			}
		}
		var want []simID
		for _, b := range best {
			want = append(want, b)
		}
		sort.Slice(want, func(i, j int) bool { return closer(want[i], want[j]) })
		want = want[:min(len(want), meaningFiles)]
		for _, limit := range []int{math.MaxInt, 10} { // every group, and the coarse pass (which keeps them all here)
			x.exhaustiveMax = limit
			r := x.scan(q, sc)
			if r.approx != (limit == 10) {
				t.Fatalf("round %d: limit %d: approx %v", round, limit, r.approx)
			}
			if !slices.Equal(r.tops, want) {
				t.Fatalf("round %d query %d limit %d: closest files\n%v\nwant\n%v", round, i, limit, r.tops, want)
			}
			if limit == math.MaxInt && (r.cnt != n || math.Abs(r.sum-sum) > 1e-9*float64(n)) {
				t.Fatalf("round %d query %d: %d passages summing %v, want %d summing %v", round, i, r.cnt, r.sum, n, sum)
			}
		}
		x.exhaustiveMax = 0
	}
}

// BenchmarkMeaningScanCopies is BenchmarkMeaningScan's scan over 40,000
// passages of which all but one in 50 are copies of 100 texts (the mixed
// load's writers write one page each, over and over).
func BenchmarkMeaningScanCopies(b *testing.B) {
	d := newDupIndex(b, 8, 512)
	for range 10 {
		d.write(b, 4000, 100, 50)
	}
	x := d.x
	qs := make([][]float32, 64)
	for i := range qs {
		qs[i] = randUnit(d.rng, 512)
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	b.Logf("%d passages, %d groups", x.embedded, x.vids)
	sc := x.scratch()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if r := x.scan(qs[i%len(qs)], sc); len(r.tops) == 0 {
			b.Fatal("scan found nothing")
		}
	}
}

// countingEmbedder counts the texts it is asked to embed.
type countingEmbedder struct {
	embed.Embedder
	texts atomic.Int64
}

func (c *countingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	c.texts.Add(int64(len(texts)))
	return c.Embedder.Embed(ctx, texts)
}

// A copy of a file the index holds takes its passages' vectors from the
// index: the model embeds nothing again, and the copy is found by meaning
// as the original is.
func TestCopiesAreNotEmbeddedAgain(t *testing.T) {
	use, err := embed.LoadUSELite(embedtest.ModelDir(t))
	if err != nil {
		t.Fatal(err)
	}
	emb := &countingEmbedder{Embedder: use}
	root := t.TempDir()
	x, err := Open(Options{Files: content.Dir(root), CPU: 1, Embedder: emb})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { x.Close() })
	text := strings.Repeat("The harbour ferry leaves at dawn and returns before the tide turns.\n", 30) + "\n" +
		strings.Repeat("Invoices are paid on the first working day of the month.\n", 30)
	write := func(p string) {
		if err := os.WriteFile(filepath.Join(root, p), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		x.Apply([]content.Change{{Op: content.Written, Path: p}})
		if err := x.Settle(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	write("a.txt")
	once := emb.texts.Load()
	st := x.Stats()
	if once < 2 || st.Embedded != st.Passages {
		t.Fatalf("the original: %d texts embedded, %d of %d passages with vectors", once, st.Embedded, st.Passages)
	}
	write("b.txt")
	write("c.txt")
	if st2 := x.Stats(); emb.texts.Load() != once || st2.Embedded != 3*st.Passages || st2.Pending != 0 {
		t.Fatalf("two copies: %d more texts embedded, %d of %d passages with vectors (original: %d)", emb.texts.Load()-once, st2.Embedded, st2.Passages, st.Passages)
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.vids != st.Passages {
		t.Fatalf("%d groups for three copies of %d passages", x.vids, st.Passages)
	}
}

// BenchmarkSave saves and loads an index of 20,000 one-passage files with
// 512-d vectors: "copies", all but one in 50 copies of 22 texts (the mixed
// load's writers' tree), and "distinct", none a copy. It reports the saved
// file's size and the time of a Save and of a load.
func BenchmarkSave(b *testing.B) {
	for _, c := range []struct {
		name   string
		unique int
	}{{"copies", 50}, {"distinct", 1}} {
		b.Run(c.name, func(b *testing.B) {
			d := newDupIndex(b, 9, 512)
			for range 5 {
				d.write(b, 4000, 22, c.unique)
			}
			dir := b.TempDir()
			d.x.opt.Dir = dir
			defer func() { d.x.opt.Dir = "" }()
			b.Run("save", func(b *testing.B) {
				for b.Loop() {
					if err := d.x.Save(); err != nil {
						b.Fatal(err)
					}
				}
				fi, err := os.Stat(filepath.Join(dir, fileName))
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(fi.Size()), "file-bytes")
			})
			b.Run("load", func(b *testing.B) {
				for b.Loop() {
					x := &Index{opt: Options{Dir: dir}}
					x.reset()
					if err := x.load(); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}

// passState is what the saved index must give back of a passage.
type passState struct {
	span  span
	words int32
	hash  uint64
	vec   []float32
	terms map[string]uint16
}

// statesOf is every live passage of x by path and start, with its words from
// the postings.
func statesOf(x *Index) map[string]passState {
	x.mu.RLock()
	defer x.mu.RUnlock()
	out := map[string]passState{}
	key := func(id uint32) string { ps := x.passes[id]; return fmt.Sprintf("%s@%d", ps.path, ps.span.start) }
	for id, ps := range x.passes {
		if ps.path != "" && x.meta[id].fid != 0 {
			out[key(uint32(id))] = passState{span: ps.span, words: ps.words, hash: ps.hash, vec: ps.vec, terms: map[string]uint16{}}
		}
	}
	for t, pl := range x.post {
		for i, id := range pl.ids {
			if x.meta[id].fid != 0 {
				out[key(id)].terms[t] = pl.tf[i]
			}
		}
	}
	return out
}

// A saved index loads as it was: every passage's span, words, hash, vector
// and terms, and the groups of equal vectors; each distinct text (words and
// vector) is saved once. The index has copies, removals, passages without a
// vector, and one text with two vectors (a hash's collision).
func TestSaveKeepsEveryPassage(t *testing.T) {
	d := newDupIndex(t, 11, 32)
	d.write(t, 1500, 30, 10)
	d.remove(t, 400)
	x := d.x
	x.mu.Lock()
	x.drainLocked() // the removals, as Save would first
	for id := len(x.passes) - 1; id > 0; id-- {
		if vid := x.vidOf[id]; vid != 0 && x.lead[vid]&manyBit != 0 {
			x.setVecLocked(uint32(id), randUnit(d.rng, 32)) // one copy's own vector
			break
		}
	}
	novec := 0
	for id := 1; id < len(x.passes) && novec < 5; id++ {
		if x.passes[id].path != "" && x.passes[id].vec != nil {
			x.leaveGroupLocked(uint32(id))
			x.passes[id].vec, x.passes[id].nv = nil, 0
			x.embedded--
			novec++
		}
	}
	x.mu.Unlock()
	d.checkGroups(t)
	want := statesOf(x)
	distinct := map[string]bool{}
	for _, st := range want {
		terms := slices.Sorted(maps.Keys(st.terms))
		var vp *float32
		if st.vec != nil {
			vp = &st.vec[0]
		}
		distinct[fmt.Sprint(st.hash, st.words, vp, terms, st.terms)] = true
	}

	dir := saveIn(t, x)
	s := readSaved(t, dir)
	if len(s.Texts) != len(distinct) {
		t.Fatalf("%d texts saved for %d passages of %d distinct texts", len(s.Texts), len(want), len(distinct))
	}

	checkLoads(t, dir, d, x, want)

	// The same index as layout 1 wrote it (each passage with its words and
	// vector) loads the same.
	for i := range s.Files {
		for j := range s.Files[i].Passages {
			sp := &s.Files[i].Passages[j]
			st := s.Texts[sp.Text]
			sp.Text, sp.Hash, sp.Words, sp.Terms, sp.TF, sp.Vec = 0, st.Hash, st.Words, st.Terms, st.TF, st.Vec
		}
	}
	s.Layout, s.Texts = 1, nil
	dir1 := t.TempDir()
	writeSaved(t, dir1, &s)
	checkLoads(t, dir1, d, x, want)
}

// checkLoads opens the index saved in dir and checks it holds want, and
// groups as x does.
func checkLoads(t *testing.T, dir string, d *dupIndex, x *Index, want map[string]passState) {
	t.Helper()
	y, err := Open(Options{Dir: dir, Files: content.Dir(d.root), CPU: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { y.Close() })
	if y.Damaged() != "" {
		t.Fatalf("reopened: damaged %q", y.Damaged())
	}
	got := statesOf(y)
	if len(got) != len(want) {
		t.Fatalf("%d passages loaded, %d saved", len(got), len(want))
	}
	for k, w := range want {
		g, ok := got[k]
		if !ok || g.span != w.span || g.words != w.words || g.hash != w.hash || !slices.Equal(g.vec, w.vec) || (g.vec == nil) != (w.vec == nil) || !maps.Equal(g.terms, w.terms) {
			t.Fatalf("passage %s: loaded %+v, saved %+v", k, g, w)
		}
	}
	(&dupIndex{x: y}).checkGroups(t)
	if y.vids != x.vids || y.embedded != x.embedded {
		t.Fatalf("loaded %d groups of %d passages with vectors, saved %d of %d", y.vids, y.embedded, x.vids, x.embedded)
	}
}

// Words fold to ASCII in contents as in tags: "cafe" finds "Café", "malmo"
// a decomposed "Malmö". An index saved by a build that did not fold (Words
// 0) reads its files again at Open, keeping their vectors by text hash; a
// Save before the last is read says the old version, after it the new.
func TestWordsFoldAndOldWordsAreReadAgain(t *testing.T) {
	root, dir := t.TempDir(), t.TempDir()
	body := "Lunch at Café Linné in Malmo\u0308 on Friday\n"
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	x, err := Open(Options{Dir: dir, Files: content.Dir(root), CPU: -1})
	if err != nil {
		t.Fatal(err)
	}
	indexBeside(t, x, []content.Change{{Op: content.Written, Path: "a.txt"}})
	found := func(x *Index, q string) bool {
		t.Helper()
		x.mu.RLock()
		defer x.mu.RUnlock()
		for _, term := range queryTerms(q) {
			pl := x.post[term]
			if pl == nil || len(pl.ids) == 0 {
				return false
			}
		}
		return true
	}
	for _, q := range []string{"cafe malmo linne", "Café MALMÖ", "cafe\u0301"} {
		if !found(x, q) {
			t.Errorf("%q: no passage holds its words", q)
		}
	}
	// The passage gets a vector, then the index is saved as an older build
	// would have: words unfolded, no Words version.
	vec := []float32{0.6, 0.8}
	x.mu.Lock()
	x.model = "test"
	for id := 1; id < len(x.passes); id++ {
		if x.passes[id].path != "" {
			x.setVecLocked(uint32(id), vec)
		}
	}
	x.mu.Unlock()
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	rewrite := func(f func(*saved)) {
		t.Helper()
		s := readSaved(t, dir)
		f(&s)
		writeSaved(t, dir, &s)
	}
	savedWords := func() int { t.Helper(); return readSaved(t, dir).Words }
	if w := savedWords(); w != wordsVersion {
		t.Fatalf("saved words version %d, want %d", w, wordsVersion)
	}
	rewrite(func(s *saved) {
		s.Words = 0
		for i := range s.Texts {
			for j, term := range s.Texts[i].Terms {
				if term == "cafe" {
					s.Texts[i].Terms[j] = "café"
				}
			}
		}
	})

	y, err := Open(Options{Dir: dir, Files: content.Dir(root), CPU: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer y.Close()
	if y.Damaged() != "" {
		t.Fatalf("damaged: %q", y.Damaged())
	}
	settleCtx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := y.Settle(settleCtx); err != nil {
		t.Fatal(err)
	}
	if !found(y, "cafe") {
		t.Error("after the files were read again: no passage holds cafe")
	}
	y.mu.RLock()
	for id := 1; id < len(y.passes); id++ {
		if ps := y.passes[id]; ps.path != "" && !slices.Equal(ps.vec, vec) {
			t.Errorf("passage %d: vector %v, want the saved %v kept", id, ps.vec, vec)
		}
	}
	y.mu.RUnlock()
	// While a file is still to be read again, Save says the old version.
	y.mu.Lock()
	for _, e := range y.files.All() {
		e.oldWords = true
	}
	y.mu.Unlock()
	if err := y.Save(); err != nil {
		t.Fatal(err)
	}
	if w := savedWords(); w != 0 {
		t.Fatalf("saved with a file not read again: words version %d, want 0", w)
	}
	y.mu.Lock()
	for _, e := range y.files.All() {
		e.oldWords = false
	}
	y.changed = true
	y.mu.Unlock()
	if err := y.Save(); err != nil {
		t.Fatal(err)
	}
	if w := savedWords(); w != wordsVersion {
		t.Fatalf("saved after the files were read again: words version %d, want %d", w, wordsVersion)
	}
}

// readSaved decodes the index file saved in dir.
func readSaved(t *testing.T, dir string) saved {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, fileName))
	if err != nil {
		t.Fatal(err)
	}
	s, err := decodeSaved(b)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// writeSaved writes s as the index file in dir.
func writeSaved(t *testing.T, dir string, s *saved) {
	t.Helper()
	b, err := s.encode()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, fileName), b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// A text whose passages have two vectors (a hash's collision, an embedder
// not bit-exact from call to call) is two groups, one a vector: a passage
// of either vector joins its vector's group, whichever group the text had
// first and after that one is gone; and so does the index load, whichever
// vector's file the saved index holds first.
func TestTextOfTwoVectorsIsTwoGroups(t *testing.T) {
	d := newDupIndex(t, 5, 16)
	d.write(t, 12, 1, math.MaxInt) // copies of one text
	x := d.x
	x.mu.RLock()
	var pids []uint32
	for id := 1; id < len(x.passes); id++ {
		if x.passes[id].path != "" {
			pids = append(pids, uint32(id))
		}
	}
	vids := x.vids
	x.mu.RUnlock()
	if len(pids) != 12 || vids != 1 {
		t.Fatalf("%d passages in %d groups, want 12 in one", len(pids), vids)
	}
	// sameGroup says whether a and b are in one group, of two in all.
	sameGroup := func(a, b uint32) bool {
		x.mu.RLock()
		defer x.mu.RUnlock()
		return x.vids == 2 && x.vidOf[a] == x.vidOf[b]
	}
	b, c := randUnit(d.rng, 16), randUnit(d.rng, 16)
	set := func(v []float32, ids ...uint32) {
		t.Helper()
		x.mu.Lock()
		for _, id := range ids {
			x.setVecLocked(id, slices.Clone(v)) // a vector of its own, as the model gives
		}
		x.mu.Unlock()
		d.checkGroups(t)
	}
	set(b, pids[0], pids[1]) // after the text's first group
	if !sameGroup(pids[0], pids[1]) {
		t.Fatal("two passages of one vector, not one group of two")
	}
	set(c, pids[2:]...) // the text's first group goes; b's is found still
	set(b, pids[2])
	if !sameGroup(pids[2], pids[0]) {
		t.Fatal("after the text's first group went: a passage of the other vector, not in its group")
	}

	// Saved, then loaded with each text's files first.
	dir := saveIn(t, x)
	s := readSaved(t, dir)
	if len(s.Texts) != 2 {
		t.Fatalf("%d texts saved, want 2", len(s.Texts))
	}
	want := statesOf(x)
	for first := range s.Texts {
		sort.SliceStable(s.Files, func(i, j int) bool {
			return s.Files[i].Passages[0].Text == uint32(first) && s.Files[j].Passages[0].Text != uint32(first)
		})
		dir := t.TempDir()
		writeSaved(t, dir, &s)
		checkLoads(t, dir, d, x, want)
	}
}

// saveIn saves x into a new directory, which it returns, and leaves x
// without one (as the tests build it).
func saveIn(t *testing.T, x *Index) string {
	t.Helper()
	dir := t.TempDir()
	x.opt.Dir = dir
	err := x.Save()
	x.opt.Dir = ""
	if err != nil {
		t.Fatal(err)
	}
	return dir
}
