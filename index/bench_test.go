package index

import (
	"context"
	"fmt"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/semfs/semfs/embed"
	"github.com/semfs/semfs/embed/embedtest"
	"github.com/semfs/semfs/server/servertest"
	"github.com/tidwall/buntdb"
)

// Benchmarks (not tests). Corpora are written straight into buntdb (one
// transaction) and opened once per process, so Bleve's build is paid once; see
// BENCHMARKS.md for the commands and current figures, and
// docs/benchmarks-history.md for the earlier ones (the former index/BENCHMARKS.md).
//
//	go test ./index/ -run '^$' -bench . -benchtime 200x

var benchWords = []string{"auth", "login", "failure", "report", "quarterly", "sales", "budget", "photo",
	"resize", "refactor", "database", "migration", "index", "users", "deploy", "config", "notes",
	"meeting", "draft", "review", "invoice", "customer", "search", "cache", "token", "session",
	"upload", "export", "chart", "table", "layout", "theme", "bug", "fix", "test", "release"}
var benchApps = []string{"code-editor", "terminal", "browser", "spreadsheet", "image-editor",
	"mail", "chat", "notes-app", "pdf-viewer", "calendar", "music", "video", "shell", "git", "ci"}
var benchExts = []string{"md", "txt", "go", "xlsx", "png", "pdf", "sql", "json"}

type benchCorpus struct {
	dir string
	n   int
}

var (
	benchMu      sync.Mutex
	benchCorpora = map[string]*benchCorpus{}
	benchRoot    string
)

// corpus returns a directory holding n tagged records (with a 512-d use-lite
// client vector each when dims > 0), built on first use and kept for the process.
func corpus(b *testing.B, n, dims int) *benchCorpus {
	b.Helper()
	benchMu.Lock()
	defer benchMu.Unlock()
	key := fmt.Sprint(n, "/", dims)
	if c := benchCorpora[key]; c != nil {
		return c
	}
	if benchRoot == "" {
		d, err := os.MkdirTemp("", "semfs-index-bench")
		if err != nil {
			b.Fatal(err)
		}
		benchRoot = d
	}
	dir := filepath.Join(benchRoot, fmt.Sprintf("c%d-%d", n, dims))
	if err := writeCorpus(dir, n, dims); err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	x, err := Open(dir, Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("built Bleve for %d records in %v", n, time.Since(start))
	if err := x.Close(); err != nil {
		b.Fatal(err)
	}
	c := &benchCorpus{dir: dir, n: n}
	benchCorpora[key] = c
	return c
}

func writeCorpus(dir string, n, dims int) error { return writeCorpusTagged(dir, n, dims, true) }

// writeCorpusTagged writes n records, tagged or not (untagged records give an
// in-process embedder nothing to re-embed in the background).
func writeCorpusTagged(dir string, n, dims int, tagged bool) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	db, err := buntdb.Open(filepath.Join(dir, recordsFile))
	if err != nil {
		return err
	}
	defer db.Close()
	vdb, err := buntdb.Open(filepath.Join(dir, vectorsFile))
	if err != nil {
		return err
	}
	defer vdb.Close()
	r := rand.New(rand.NewSource(int64(n)))
	w := func() string { return benchWords[r.Intn(len(benchWords))] }
	return updateBoth(db, vdb, func(tx txn) error {
		for i := range n {
			p := fmt.Sprintf("proj%d/%s/%s-%s-%d.%s", i%300, w(), w(), w(), i, benchExts[r.Intn(len(benchExts))])
			s := &stored{CreatedBy: benchApps[r.Intn(len(benchApps))], Task: w() + " " + w() + " " + w(),
				RelatedApps: []string{benchApps[r.Intn(len(benchApps))], benchApps[r.Intn(len(benchApps))]},
				CreatedAt:   time.Unix(1_700_000_000+int64(i), 0).UTC(), Ino: uint64(i + 1)}
			s.UpdatedAt = s.CreatedAt
			if !tagged {
				s.Task, s.RelatedApps = "", []string{}
			}
			if _, _, err := tx.Set(recKey(p), s.encode(), nil); err != nil {
				return err
			}
			if dims > 0 {
				if _, _, err := tx.vec.Set(vecKey(p, embed.UseLite.Name), encodeVector(vecClient, 0, randUnit(r, dims)), nil); err != nil {
					return err
				}
			}
		}
		if _, _, err := tx.Set(schemaKey, schemaVers, nil); err != nil {
			return err
		}
		_, _, err := tx.Set(genKey, "1", nil)
		return err
	})
}

func randUnit(r *rand.Rand, dims int) []float32 {
	v := make([]float32, dims)
	var n float64
	for i := range v {
		f := r.NormFloat64()
		v[i] = float32(f)
		n += f * f
	}
	for i := range v {
		v[i] = float32(float64(v[i]) / math.Sqrt(n))
	}
	return v
}

var benchQueries = []string{"auth bug", "quarterly report", "login failure notes", "spreadsheet", "md", "proj42 deploy", "zebra"}

func BenchmarkQuery(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		// uselite: the same 512-d corpus, each query embedded in-process by the
		// real model (its own query cache is not used: embed.LoadUSELite as is).
		for _, mode := range []string{"keyword", "vector512", "uselite"} {
			b.Run(fmt.Sprintf("%dk/%s", n/1000, mode), func(b *testing.B) {
				var opts Options
				dims := 0
				switch mode {
				case "vector512":
					dims = embed.UseLite.Dims
				case "uselite":
					dims = embed.UseLite.Dims
					opts.Embedder = embedtest.USELite(b)
				}
				c := corpus(b, n, dims)
				x, err := Open(c.dir, opts)
				if err != nil {
					b.Fatal(err)
				}
				defer x.Close()
				r := rand.New(rand.NewSource(1))
				qv := randUnit(r, embed.UseLite.Dims)
				hits := 0
				b.ResetTimer()
				for i := range b.N {
					q := Query{Text: benchQueries[i%len(benchQueries)], Limit: 20}
					if mode == "vector512" {
						q.Vector = &Vector{Model: embed.UseLite.Name, Values: qv}
					}
					res, err := x.Query(context.Background(), q)
					if err != nil {
						b.Fatal(err)
					}
					hits += len(res)
				}
				b.ReportMetric(float64(hits)/float64(b.N), "results/op")
			})
		}
	}
}

// BenchmarkQueryWord measures single words of growing selectivity (100k, keyword).
func BenchmarkQueryWord(b *testing.B) {
	c := corpus(b, 100_000, 0)
	x, err := Open(c.dir, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer x.Close()
	for _, w := range []string{"zebra", "invoice", "proj42/", "md", "a"} {
		b.Run(w, func(b *testing.B) {
			for range b.N {
				res, err := x.Query(context.Background(), Query{Text: w, Limit: 20})
				if err != nil || (w != "zebra" && len(res) == 0) {
					b.Fatal(err, len(res))
				}
			}
		})
	}
}

// BenchmarkTag: one Tag per op on an index of 10k untagged records, durable on return:
// keyword-only, with a client 512-d vector, and with the real USE-lite model
// embedding the tag text in-process (skipped when the model is not fetched).
func BenchmarkTag(b *testing.B) {
	for _, mode := range []string{"keyword", "vector512", "uselite"} {
		b.Run(mode, func(b *testing.B) {
			var opts Options
			if mode == "uselite" {
				opts.Embedder = embedtest.USELite(b)
			}
			dir := b.TempDir()
			if err := writeCorpusTagged(dir, 10_000, 0, false); err != nil {
				b.Fatal(err)
			}
			x, err := Open(dir, opts)
			if err != nil {
				b.Fatal(err)
			}
			defer x.Close()
			r := rand.New(rand.NewSource(2))
			v := &Vector{Model: embed.UseLite.Name, Values: randUnit(r, embed.UseLite.Dims)}
			b.ResetTimer()
			for i := range b.N {
				var vv *Vector
				if mode == "vector512" {
					vv = v
				}
				task := benchWords[i%len(benchWords)] + " " + benchWords[(i/7)%len(benchWords)]
				if _, err := x.Tag(context.Background(), fmt.Sprintf("tagged/f%d.md", i), task, []string{"code-editor"}, vv); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkTagMany: b.N files tagged through TagMany in batches of 256 (per-op
// figure = per file), keyword-only and with USE-lite embedding in-process.
func BenchmarkTagMany(b *testing.B) {
	for _, mode := range []string{"keyword", "uselite"} {
		b.Run(mode, func(b *testing.B) {
			var opts Options
			if mode == "uselite" {
				opts.Embedder = embedtest.USELite(b)
			}
			dir := b.TempDir()
			if err := writeCorpusTagged(dir, 10_000, 0, false); err != nil {
				b.Fatal(err)
			}
			x, err := Open(dir, opts)
			if err != nil {
				b.Fatal(err)
			}
			defer x.Close()
			b.ResetTimer()
			for i := 0; i < b.N; i += 256 {
				var reqs []TagRequest
				for j := i; j < min(i+256, b.N); j++ {
					task := benchWords[j%len(benchWords)] + " " + benchWords[(j/7)%len(benchWords)]
					reqs = append(reqs, TagRequest{Path: fmt.Sprintf("tagged/f%d.md", j), Task: task, RelatedApps: []string{"code-editor"}})
				}
				if _, err := x.TagMany(context.Background(), reqs); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// openUntagged opens an index of n untagged records, closed when b ends.
func openUntagged(b *testing.B, n int) *Index {
	dir := b.TempDir()
	if err := writeCorpus(dir, n, 0); err != nil {
		b.Fatal(err)
	}
	x, err := Open(dir, Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { x.Close() })
	return x
}

// BenchmarkCreate: one Create per op (a new file through the server), durable.
func BenchmarkCreate(b *testing.B) {
	x := openUntagged(b, 10_000)
	at := time.Now()
	b.ResetTimer()
	for i := range b.N {
		if err := x.Create(fmt.Sprintf("new/f%d.txt", i), "code-editor", uint64(i+1), at); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkApplyCreateTouch: one Apply of a create and its write's touch per
// op, as the change stream hands them over at an NFS COMMIT after a create
// (File.Sync applies the queued changes on the COMMIT's own goroutine, so
// this is on every create's path).
func BenchmarkApplyCreateTouch(b *testing.B) {
	x := openUntagged(b, 10_000)
	at := time.Now()
	b.ResetTimer()
	for i := range b.N {
		applyCreateTouch(b, x, i, at)
	}
}

// BenchmarkRebuild: Bleve rebuilt from 100k records (what Open does after a crash
// left Bleve behind buntdb).
func BenchmarkRebuild(b *testing.B) {
	c := corpus(b, 100_000, 0)
	for range b.N {
		x, err := Open(c.dir, Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		x.mu.Lock()
		if err := x.bl.Close(); err != nil {
			b.Fatal(err)
		}
		x.bl = nil
		b.StartTimer()
		if err := os.RemoveAll(filepath.Join(c.dir, bleveDir)); err != nil {
			b.Fatal(err)
		}
		if err := x.openBleve(x.gen); err != nil {
			b.Fatal(err)
		}
		x.mu.Unlock()
		b.StopTimer()
		if err := x.Close(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}

// BenchmarkOpen: start time with 100k tagged records and 512-d vectors, Bleve
// persisted (a clean restart).
func BenchmarkOpen(b *testing.B) {
	c := corpus(b, 100_000, embed.UseLite.Dims)
	b.ResetTimer()
	for range b.N {
		x, err := Open(c.dir, Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if err := x.Close(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}

func TestMain(m *testing.M) {
	code := m.Run()
	if benchRoot != "" {
		os.RemoveAll(benchRoot)
	}
	os.Exit(code)
}

// BenchmarkReconcile: start-up reconcile of 100k records against 100k files, the
// first time (every record learns its size/mtime: 100k rewritten) and again with
// nothing changed; 1% of the files renamed and 1% removed behind the index's back.
func BenchmarkReconcile(b *testing.B) {
	for range b.N {
		b.StopTimer()
		dir := b.TempDir()
		if err := writeCorpus(dir, 100_000, 0); err != nil {
			b.Fatal(err)
		}
		x, err := Open(dir, Options{})
		if err != nil {
			b.Fatal(err)
		}
		var files []FileState
		err = x.db.View(func(tx *buntdb.Tx) error {
			return tx.AscendRange("", recPrefix, "r;", func(k, v string) bool {
				s, _ := decodeStored(v)
				p := k[len(recPrefix):]
				if s.Ino%100 == 1 {
					p = "renamed/" + p
				}
				if s.Ino%100 != 2 {
					files = append(files, FileState{Path: p, Ino: s.Ino, Size: 100, ModTime: s.UpdatedAt})
				}
				return true
			})
		})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		rep, err := x.Reconcile(files)
		if err != nil {
			b.Fatal(err)
		}
		first := time.Now()
		rep2, err := x.Reconcile(files)
		if err != nil || rep2.Changed() {
			b.Fatal(err, rep2)
		}
		b.StopTimer()
		b.Logf("%v; second reconcile (nothing changed) %v", rep, time.Since(first))
		if err := x.Close(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}

// BenchmarkQueryRank: the two rank modes side by side at 100k tagged records
// with a 512-d client vector each and a 512-d query vector, limit 20; reports
// the median (p50-ms) and the 90th percentile (p90-ms) per query besides the mean.
//
//	go test ./index/ -run '^$' -bench 'BenchmarkQueryRank' -benchtime 200x
func BenchmarkQueryRank(b *testing.B) {
	c := corpus(b, 100_000, embed.UseLite.Dims)
	x, err := Open(c.dir, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer x.Close()
	r := rand.New(rand.NewSource(1))
	qvs := make([][]float32, 16)
	for i := range qvs {
		qvs[i] = randUnit(r, embed.UseLite.Dims)
	}
	for _, rank := range []string{RankSeed, RankBest} {
		b.Run(rank, func(b *testing.B) {
			times := make([]time.Duration, 0, b.N)
			for i := range b.N {
				q := Query{Text: benchQueries[i%len(benchQueries)], Limit: 20, Rank: rank,
					Vector: &Vector{Model: embed.UseLite.Name, Values: qvs[i%len(qvs)]}}
				start := time.Now()
				if _, err := x.Query(context.Background(), q); err != nil {
					b.Fatal(err)
				}
				times = append(times, time.Since(start))
			}
			sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
			b.ReportMetric(float64(times[len(times)/2])/1e6, "p50-ms")
			b.ReportMetric(float64(times[len(times)*9/10])/1e6, "p90-ms")
		})
	}
}

// applyCreateTouch applies the i-th new file's create and its write's touch,
// as the change stream hands them over at an NFS COMMIT after a create.
func applyCreateTouch(b *testing.B, x *Index, i int, at time.Time) {
	p := fmt.Sprintf("many/f%05d", i)
	if _, err := x.Apply([]Change{{Op: OpCreate, Path: p, CreatedBy: "bench", Ino: uint64(i + 1), At: at},
		{Op: OpTouch, Path: p, At: at.Add(time.Millisecond)}}); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkApplyCreateCPU: the process CPU (user+system, getrusage) per new
// untagged record, everything the index spends on it included: the Apply on
// the COMMIT's path and the background work it sets off (Bleve's batches,
// persister and merger), waited out after the last op. On a 2-core machine
// that background work competes with the NFS client and the serving thread,
// so it is part of a create's cost even though no caller waits for it.
// bleveIdle reports whether Bleve's persister and merger have caught up with
// its latest snapshot: scorch's own "index_bgthreads_active", read from its
// counters rather than StatsMap, which walks every segment and would add the
// polling's CPU to what a benchmark counts.
func bleveIdle(tb testing.TB, x *Index) bool {
	adv, err := x.bl.Advanced()
	if err != nil {
		tb.Fatal(err)
	}
	s, ok := adv.(*scorch.Scorch)
	if !ok {
		tb.Fatalf("Bleve's index is a %T, not scorch: no persister to wait for", adv)
	}
	st := s.Stats().(*scorch.Stats)
	root := atomic.LoadUint64(&st.CurRootEpoch)
	return atomic.LoadUint64(&st.LastPersistedEpoch) == root && atomic.LoadUint64(&st.LastMergedEpoch) == root
}

func BenchmarkApplyCreateCPU(b *testing.B) {
	x := openUntagged(b, 10_000)
	at := time.Now()
	settle := func() {
		x.flushBleve()
		// The persister and merger's work on the last batches: until both
		// have reached Bleve's latest snapshot.
		servertest.WaitForWithin(b, "Bleve's persister and merger to catch up", time.Minute, func() bool { return bleveIdle(b, x) })
	}
	settle()
	cpu0 := processCPU(b)
	b.ResetTimer()
	for i := range b.N {
		applyCreateTouch(b, x, i, at)
	}
	settle()
	b.StopTimer()
	b.ReportMetric(float64((processCPU(b)-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
}

func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
