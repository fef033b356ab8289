package passage

// The passage index at the scale of a real export (issue 25 item 4, issue 27
// item 7): the best rank's content stage (Search) over ≥ 50,000 real files,
// their passages' words indexed as the daemon indexes them and a 512-d vector
// on every passage, queried with USE-lite's vectors of real queries.
//
// Opt-in (minutes of set-up, gigabytes of memory): SEMFS_PASSAGE_SCALE=1.
//
//	SEMFS_PASSAGE_SCALE=1 SEMFS_MODEL_DIR=embed/model/dist \
//	  go test -run TestPassageScale -v -timeout 2h ./index/passage/
//	... go test -run '^$' -bench PassageSearch -benchtime 200x ./index/passage/
//
// The corpus is SEMFS_PASSAGE_CORPUS (default /tmp/semfs-grepcorpus, built by
// integration/bench/grep/corpus.sh: 61,823 files, 901 MB), its first
// SEMFS_PASSAGE_FILES files in path order (default 50,000; 0: all). The words
// are indexed once and saved in SEMFS_PASSAGE_CACHE (default
// $TMPDIR/semfs-passagescale). Vectors: a passage the model embedded
// (TestPassageScaleEmbed, resumable, saved in the cache by text hash) has its
// own; every other passage gets a real passage's vector moved by noise to a
// cosine of about 0.9 with it, so the set has the real vectors' clusters and
// spread without half a million embeddings (the model takes 2–3 ms a
// passage). The figures say how many were the model's own.

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/semfs/semfs/embed"
	"github.com/semfs/semfs/embed/embedtest"
	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/index/content"
	"golang.org/x/sys/unix"
)

type scaleSet struct {
	root    string
	cache   string
	x       *Index
	emb     embed.Embedder
	queries []string
	qvecs   [][]float32
	own     int // passages with the model's own vector
}

// query is the content stage's share of one query: every hit's evidence,
// then the text of queryLimit of them (an answer's).
func (s *scaleSet) query(ctx context.Context, src Source, q string, v []float32, m string) error {
	hits, err := src.Evidence(ctx, q, v, m, math.Inf(-1))
	if err != nil {
		return err
	}
	read := make([]*index.ContentHit, 0, queryLimit)
	for i := range hits[:min(len(hits), queryLimit)] {
		read = append(read, &hits[i])
	}
	return src.Read(ctx, q, read)
}

// queryLimit is the answer's size a measured query reads passages for.
const queryLimit = 10

func scaleEnv(tb testing.TB) (root, cache string, nfiles int) {
	tb.Helper()
	if os.Getenv("SEMFS_PASSAGE_SCALE") != "1" {
		tb.Skip("opt-in: SEMFS_PASSAGE_SCALE=1 (minutes of set-up, gigabytes of memory)")
	}
	root = os.Getenv("SEMFS_PASSAGE_CORPUS")
	if root == "" {
		root = "/tmp/semfs-grepcorpus"
	}
	if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		tb.Skipf("no corpus at %s: build one with bash integration/bench/grep/corpus.sh %s", root, root)
	}
	cache = os.Getenv("SEMFS_PASSAGE_CACHE")
	if cache == "" {
		cache = filepath.Join(os.TempDir(), "semfs-passagescale")
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		tb.Fatal(err)
	}
	nfiles = 50_000
	if s := os.Getenv("SEMFS_PASSAGE_FILES"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			tb.Fatal(err)
		}
		nfiles = n
	}
	return root, cache, nfiles
}

// scaleWords opens the passage index of the corpus's first nfiles files,
// words only, from the cache or built now (and saved there).
func scaleWords(tb testing.TB, root, cache string, nfiles int) *Index {
	tb.Helper()
	x, err := Open(Options{Files: content.Dir(root), CPU: 1})
	if err != nil {
		tb.Fatal(err)
	}
	sub := filepath.Join(cache, fmt.Sprintf("words-%d", nfiles))
	x.mu.Lock()
	x.opt.Dir = sub
	err = x.load()
	x.opt.Dir = ""
	if err != nil {
		x.reset()
	}
	x.mu.Unlock()
	if err == nil {
		return x
	}
	var paths []string
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		paths = append(paths, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	sort.Strings(paths)
	if nfiles > 0 && len(paths) > nfiles {
		paths = paths[:nfiles]
	}
	cs := make([]content.Change, len(paths))
	for i, p := range paths {
		cs[i] = content.Change{Op: content.Written, Path: p}
	}
	start := time.Now()
	indexBeside(tb, x, cs)
	tb.Logf("indexed the words of %d files in %v", len(paths), time.Since(start).Round(time.Second))
	if err := os.MkdirAll(sub, 0o755); err != nil {
		tb.Fatal(err)
	}
	x.opt.Dir = sub
	err = x.Save()
	x.opt.Dir = ""
	if err != nil {
		tb.Fatal(err)
	}
	return x
}

// The cache of the model's vectors: records of an 8-byte text hash and dims
// little-endian float32s, appended.
const vecCache = "uselite-vectors.bin"

func readVecCache(path string, dims int) (map[uint64][]float32, error) {
	out := map[uint64][]float32{}
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := bufio.NewReader(f)
	rec := make([]byte, 8+4*dims)
	for {
		if _, err := io.ReadFull(r, rec); err != nil {
			return out, nil // a torn last record is dropped
		}
		v := make([]float32, dims)
		for i := range v {
			v[i] = math.Float32frombits(binary.LittleEndian.Uint32(rec[8+4*i:]))
		}
		out[binary.LittleEndian.Uint64(rec)] = v
	}
}

// passageText reads passage id's text from the corpus.
func passageText(root string, ps pass) (string, error) {
	f, err := os.Open(filepath.Join(root, ps.path))
	if err != nil {
		return "", err
	}
	defer f.Close()
	buf := make([]byte, ps.span.end-ps.span.start)
	if _, err := f.ReadAt(buf, int64(ps.span.start)); err != nil && err != io.EOF {
		return "", err
	}
	return string(buf), nil
}

func loadScale(tb testing.TB) *scaleSet {
	tb.Helper()
	root, cache, nfiles := scaleEnv(tb)
	emb := embedtest.USELite(tb)
	x := scaleWords(tb, root, cache, nfiles)
	s := &scaleSet{root: root, cache: cache, x: x, emb: emb}
	own, err := readVecCache(filepath.Join(cache, vecCache), emb.Dims())
	if err != nil {
		tb.Fatal(err)
	}
	// A pool of real vectors to lend: the model's own, or, with fewer than
	// poolMin cached, poolMin passages embedded now.
	const poolMin = 2048
	rng := rand.New(rand.NewPCG(25, 4))
	var pool [][]float32
	hashes := make([]uint64, 0, len(own))
	for h := range own {
		hashes = append(hashes, h)
	}
	slices.Sort(hashes)
	for _, h := range hashes {
		pool = append(pool, own[h])
	}
	if len(pool) < poolMin {
		var texts []string
		var hs []uint64
		for len(texts) < poolMin {
			id := 1 + rng.IntN(len(x.passes)-1)
			if x.passes[id].path == "" || slices.Contains(hs, x.passes[id].hash) {
				continue
			}
			t, err := passageText(root, x.passes[id])
			if err != nil || strings.TrimSpace(t) == "" {
				continue
			}
			texts, hs = append(texts, t), append(hs, x.passes[id].hash)
		}
		f, err := os.OpenFile(filepath.Join(cache, vecCache), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			tb.Fatal(err)
		}
		for i := 0; i < len(texts); i += 64 {
			vs, err := emb.Embed(context.Background(), texts[i:min(len(texts), i+64)])
			if err != nil {
				tb.Fatal(err)
			}
			for j, v := range vs {
				// Saved, so that the next run lends the same vectors.
				rec := binary.LittleEndian.AppendUint64(nil, hs[i+j])
				for _, c := range v {
					rec = binary.LittleEndian.AppendUint32(rec, math.Float32bits(c))
				}
				if _, err := f.Write(rec); err != nil {
					tb.Fatal(err)
				}
			}
			pool = append(pool, vs...)
		}
		if err := f.Close(); err != nil {
			tb.Fatal(err)
		}
	}
	// Noise of σ per dimension moves a unit vector to a cosine of about
	// 1/√(1+dims·σ²) = 0.9 with where it was.
	sigma := math.Sqrt((1/0.81 - 1) / float64(emb.Dims()))
	x.mu.Lock()
	for id := 1; id < len(x.passes); id++ {
		ps := &x.passes[id]
		if ps.path == "" {
			continue
		}
		v, ok := own[ps.hash]
		if ok {
			s.own++
		} else {
			src := pool[rng.IntN(len(pool))]
			v = make([]float32, len(src))
			var n float64
			for i, c := range src {
				v[i] = c + float32(rng.NormFloat64()*sigma)
				n += float64(v[i]) * float64(v[i])
			}
			n = math.Sqrt(n)
			for i := range v {
				v[i] = float32(float64(v[i]) / n)
			}
		}
		x.setVecLocked(uint32(id), v)
	}
	x.model = emb.Name()
	x.mu.Unlock()

	// The queries: phrases of 3–6 words from random passages' lines (what
	// someone who half-remembers a file types), and a few in plain words.
	s.queries = []string{
		"payment webhook timed out", "list directory contents", "parse command line flags",
		"how to configure the network interface", "compress a file", "read a configuration file",
		"memory allocation failed", "unicode normalization", "http server timeout",
		"sort lines of text", "copy files between hosts", "regular expression syntax",
		"thread safety and locks", "license terms and conditions", "random number generator",
		"error handling best practices",
	}
	for len(s.queries) < 64 {
		id := 1 + rng.IntN(len(x.passes)-1)
		if x.passes[id].path == "" {
			continue
		}
		t, err := passageText(root, x.passes[id])
		if err != nil {
			continue
		}
		lines := strings.Split(t, "\n")
		l := strings.Fields(lines[rng.IntN(len(lines))])
		var ws []string
		for _, w := range l {
			if strings.IndexFunc(w, func(r rune) bool { return r < 'a' || r > 'z' }) < 0 && len(w) > 2 {
				ws = append(ws, w)
			}
		}
		if len(ws) < 3 {
			continue
		}
		n := min(len(ws), 3+rng.IntN(4))
		at := rng.IntN(len(ws) - n + 1)
		s.queries = append(s.queries, strings.Join(ws[at:at+n], " "))
	}
	if q := os.Getenv("SEMFS_PASSAGE_QUERIES"); q != "" {
		n, err := strconv.Atoi(q)
		if err != nil {
			tb.Fatal(err)
		}
		s.queries = s.queries[:min(n, len(s.queries))]
	}
	var err2 error
	s.qvecs, err2 = emb.Embed(context.Background(), s.queries)
	if err2 != nil {
		tb.Fatal(err2)
	}
	return s
}

// queryCPU is the process's CPU time: a query's, queries running one at a
// time (its meaning scan and its reads run on goroutines of their own).
func queryCPU() time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

type latency struct{ wall, cpu []time.Duration }

func (l latency) pct(p float64) (wall, cpu time.Duration) {
	w, c := slices.Clone(l.wall), slices.Clone(l.cpu)
	slices.Sort(w)
	slices.Sort(c)
	i := min(len(w)-1, int(p*float64(len(w))))
	return w[i], c[i]
}

// run queries every query rounds times (words only when words), one at a
// time.
func (s *scaleSet) run(tb testing.TB, rounds int, words bool) latency {
	tb.Helper()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var l latency
	ctx := context.Background()
	src := DirSource(s.x, s.root)
	for r := 0; r < rounds; r++ {
		for i, q := range s.queries {
			v, m := s.qvecs[i], s.emb.Name()
			if words {
				v, m = nil, ""
			}
			t0, c0 := time.Now(), queryCPU()
			if err := s.query(ctx, src, q, v, m); err != nil {
				tb.Fatal(err)
			}
			l.wall = append(l.wall, time.Since(t0))
			l.cpu = append(l.cpu, queryCPU()-c0)
		}
	}
	return l
}

func (s *scaleSet) stats() string {
	st := s.x.Stats()
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return fmt.Sprintf("%d files, %d passages (%d with the model's own vector, the rest lent), %.0f MB of text; Go heap %.0f MB after GC",
		st.Files, st.Passages, s.own, float64(st.Bytes)/1e6, float64(ms.HeapAlloc)/1e6)
}

// TestPassageScale prints the content stage's latency (p50, p90; wall and
// the query's own CPU) at scale, words only and with vectors, exhaustive and
// approximate (SEMFS_PASSAGE_ROUNDS rounds of the queries, default 3; 0
// skips them; SEMFS_PASSAGE_QUERIES=N keeps the first N of the 64), and the recall of the approximate meaning scan: of the 10
// (and 50) hits closest by meaning in the exhaustive scan's answer, the share in
// the approximate scan's. SEMFS_PASSAGE_DUMP=FILE writes every answer, as
// JSON lines, for comparing two builds.
func TestPassageScale(t *testing.T) {
	s := loadScale(t)
	defer s.x.Close()
	t.Log(s.stats())
	modes := []struct {
		name          string
		words         bool
		exhaustiveMax int
	}{{"words only", true, 0}, {"words+meaning, exhaustive scan", false, math.MaxInt}, {"words+meaning", false, 0}}
	rounds := 3
	if r := os.Getenv("SEMFS_PASSAGE_ROUNDS"); r != "" {
		var err error
		if rounds, err = strconv.Atoi(r); err != nil {
			t.Fatal(err)
		}
	}
	for _, m := range modes {
		if rounds == 0 {
			break
		}
		s.x.exhaustiveMax = m.exhaustiveMax
		s.run(t, 1, m.words) // warm
		r := rounds
		if m.exhaustiveMax == math.MaxInt {
			r = 1 // the slow one (the former cost): one round is enough to see it
		}
		l := s.run(t, r, m.words)
		w50, c50 := l.pct(0.5)
		w90, c90 := l.pct(0.9)
		t.Logf("%s: %d queries: p50 %v (cpu %v), p90 %v (cpu %v)", m.name, len(l.wall), w50.Round(10*time.Microsecond), c50.Round(10*time.Microsecond), w90.Round(10*time.Microsecond), c90.Round(10*time.Microsecond))
	}
	answers := func(exhaustiveMax int) [][]index.ContentHit {
		s.x.exhaustiveMax = exhaustiveMax
		var out [][]index.ContentHit
		for i, q := range s.queries {
			hits, err := s.x.Search(context.Background(), q, s.qvecs[i], s.emb.Name(), math.Inf(-1), DirSource(s.x, s.root).Stat)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, hits)
		}
		return out
	}
	exact, approx := answers(math.MaxInt), answers(0)
	s.x.exhaustiveMax = 0
	if p := os.Getenv("SEMFS_PASSAGE_DUMP"); p != "" {
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		enc := json.NewEncoder(f)
		for i, q := range s.queries {
			enc.Encode(map[string]any{"query": q, "exact": exact[i], "approx": approx[i]})
		}
		f.Close()
	}
	closest := func(hits []index.ContentHit, k int) []string {
		hits = slices.Clone(hits)
		sort.SliceStable(hits, func(i, j int) bool { return hits[i].Sim > hits[j].Sim })
		var out []string
		for _, h := range hits[:min(len(hits), k)] {
			if h.HasSim {
				out = append(out, h.Path)
			}
		}
		return out
	}
	for _, k := range []int{10, 50} {
		var got, want float64
		same := 0
		for i := range s.queries {
			e, a := closest(exact[i], k), closest(approx[i], k)
			want += float64(len(e))
			for _, p := range e {
				if slices.Contains(a, p) {
					got++
				}
			}
			if slices.Equal(e, a) {
				same++
			}
		}
		t.Logf("recall@%d of the approximate meaning scan against the exhaustive one: %.3f (%d of %d queries the same %d in the same order)", k, got/want, same, len(s.queries), k)
	}
}

// BenchmarkPassageSearch is one content-stage query at scale, the queries in
// turn; it reports the p50 and p90 of the query's CPU time.
func BenchmarkPassageSearch(b *testing.B) {
	s := loadScale(b)
	defer s.x.Close()
	b.Log(s.stats())
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	src := DirSource(s.x, s.root)
	var cpu []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		j := i % len(s.queries)
		c0 := queryCPU()
		if err := s.query(context.Background(), src, s.queries[j], s.qvecs[j], s.emb.Name()); err != nil {
			b.Fatal(err)
		}
		cpu = append(cpu, queryCPU()-c0)
	}
	b.StopTimer()
	slices.Sort(cpu)
	b.ReportMetric(float64(cpu[len(cpu)/2])/1e6, "p50-cpu-ms")
	b.ReportMetric(float64(cpu[min(len(cpu)-1, len(cpu)*9/10)])/1e6, "p90-cpu-ms")
}

// TestPassageScaleEmbed embeds the corpus's passages with the model, file
// by file, and appends their vectors to the cache (resumable: passages
// already there are skipped). SEMFS_PASSAGE_EMBED_FOR bounds its run
// (default 30m).
func TestPassageScaleEmbed(t *testing.T) {
	root, cache, nfiles := scaleEnv(t)
	emb := embedtest.USELite(t)
	x := scaleWords(t, root, cache, nfiles)
	defer x.Close()
	path := filepath.Join(cache, vecCache)
	have, err := readVecCache(path, emb.Dims())
	if err != nil {
		t.Fatal(err)
	}
	d := 30 * time.Minute
	if s := os.Getenv("SEMFS_PASSAGE_EMBED_FOR"); s != "" {
		if d, err = time.ParseDuration(s); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// Files in a fixed random order: a partial run covers the corpus evenly.
	paths := make([]string, 0, x.files.Len())
	for p := range x.files.All() {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	rand.New(rand.NewPCG(25, 7)).Shuffle(len(paths), func(i, j int) { paths[i], paths[j] = paths[j], paths[i] })
	deadline := time.Now().Add(d)
	var mu sync.Mutex
	n := 0
	for _, p := range paths {
		if time.Now().After(deadline) {
			break
		}
		var texts []string
		var hashes []uint64
		for _, id := range x.files.At(p).pids {
			ps := x.passes[id]
			if _, ok := have[ps.hash]; ok {
				continue
			}
			txt, err := passageText(root, ps)
			if err != nil || strings.TrimSpace(txt) == "" {
				continue
			}
			have[ps.hash] = nil
			texts, hashes = append(texts, txt), append(hashes, ps.hash)
		}
		for i := 0; i < len(texts); i += 32 {
			vs, err := emb.Embed(context.Background(), texts[i:min(len(texts), i+32)])
			if err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			for j, v := range vs {
				rec := binary.LittleEndian.AppendUint64(nil, hashes[i+j])
				for _, c := range v {
					rec = binary.LittleEndian.AppendUint32(rec, math.Float32bits(c))
				}
				if _, err := f.Write(rec); err != nil {
					t.Fatal(err)
				}
				n++
			}
			mu.Unlock()
		}
	}
	t.Logf("embedded %d passages this run; %d in the cache", n, len(have))
}
