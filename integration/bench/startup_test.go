// Package bench holds benchmarks of the real daemon; per-protocol peer
// comparisons live in its subdirectories (nfs/, ninep/) as scripts.
package bench_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/semfs/semfs/client"
	"github.com/semfs/semfs/embed"
	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/integration/semfstest"
	"github.com/semfs/semfs/server"
)

// BenchmarkDaemonStart measures `semfs serve` from exec to ready, on a backing
// directory and index that already hold n files and their records, as a
// restart finds them.
//
// Ready means: the daemon printed its listeners (NFS, 9P and the control
// socket are all listening; semfstest.Start waits for that line) and a query
// on the control socket has been answered. That is what a user or an agent
// waits for after `semfs serve`. It does not include the start-up reconcile
// with the backing directory when that runs in the background (docs/durability.md,
// "Start-up": queries meanwhile answer from the index as persisted);
// reconcile-after-ready-s reports how much later it finished.
//
// Cases:
//
//   - files=N,model=off: untagged files, keyword-only (--model-dir off), the
//     figure earlier sections of docs/benchmarks-history.md give;
//
//   - files=N,model=use-lite,tagged: every file tagged (task, related apps,
//     durable record in its user.semfs attribute) with a 512-d USE-lite
//     in-process vector, and the model loaded, as `make serve` runs. The tags
//     are written in setup through the index API with a stand-in embedder of
//     the same name and dimensions (embedding 100k texts with the real model
//     would take minutes), and their durable records through the core, so the
//     daemon opens exactly the records, vectors and attributes a real one would
//     hold; the vectors' values are not the model's, which start-up never reads
//     for meaning.
//
//     go test -run '^$' -bench DaemonStart -benchtime 3x ./integration/bench/
func BenchmarkDaemonStart(b *testing.B) {
	for _, c := range []struct {
		n      int
		tagged bool
	}{{10_000, false}, {100_000, false}, {100_000, true}} {
		name := fmt.Sprintf("files=%d,model=off", c.n)
		if c.tagged {
			name = fmt.Sprintf("files=%d,model=use-lite,tagged", c.n)
		}
		b.Run(name, func(b *testing.B) {
			base := b.TempDir()
			data := filepath.Join(base, "data")
			writeTree(b, data, c.n)
			opt := semfstest.Options{Data: data, ModelDir: "off", NoWaitReconcile: true}
			if c.tagged {
				opt.ModelDir = ""
				opt.Index = filepath.Join(base, "index")
				tagAll(b, data, opt.Index, c.n)
			}
			t0 := time.Now()
			d := semfstest.Start(b, opt)
			b.ReportMetric(time.Since(t0).Seconds(), "first-start-s")
			d.WaitReconciled()
			d.Stop()
			b.ResetTimer()
			// SEMFS_BENCH_OLD_BIN: also start that binary before each timed
			// start, on the same directories, and report it as old-*: an A/B
			// under the same load (the old binary may reconcile before it
			// listens, so its ready time includes that).
			oldBin := os.Getenv("SEMFS_BENCH_OLD_BIN")
			newBin := semfstest.Binary(b)
			var cpu, cpuReady, bg, oldReady, oldCPU, oldCPUReady time.Duration
			for i := 0; i < b.N; i++ {
				if oldBin != "" {
					b.StopTimer()
					b.Setenv("SEMFS_BIN", oldBin)
					t0 := time.Now()
					d.Restart()
					if _, err := d.Client.Query(d.Context(), client.QueryRequest{Text: "quarterly report", Limit: 10}); err != nil {
						b.Fatal(err)
					}
					oldReady += time.Since(t0)
					oldCPUReady += processCPU(b, d.PID())
					d.WaitReconciled()
					oldCPU += processCPU(b, d.PID())
					d.Stop()
					b.Setenv("SEMFS_BIN", newBin)
					b.StartTimer()
				}
				t0 := time.Now()
				d.Restart()
				if _, err := d.Client.Query(d.Context(), client.QueryRequest{Text: "quarterly report", Limit: 10}); err != nil {
					b.Fatal(err)
				}
				ready := time.Since(t0)
				b.StopTimer()
				cpuReady += processCPU(b, d.PID())
				d.WaitReconciled()
				bg += time.Since(t0) - ready
				cpu += processCPU(b, d.PID())
				if i == b.N-1 {
					// Where the last start's time went, from the daemon's log.
					for _, l := range strings.Split(d.Log(), "\n") {
						if strings.Contains(l, "index: opened") || strings.Contains(l, "model loaded") ||
							strings.Contains(l, "semfs started") || strings.Contains(l, "index reconciled") {
							b.Log(l)
						}
					}
				}
				d.Stop()
				b.StartTimer()
			}
			if oldBin != "" {
				b.ReportMetric(oldReady.Seconds()/float64(b.N), "old-ready-s")
				b.ReportMetric(oldCPU.Seconds()/float64(b.N), "old-cpu-at-reconciled-s")
				b.ReportMetric(oldCPUReady.Seconds()/float64(b.N), "old-cpu-at-ready-s")
			}
			b.ReportMetric(cpuReady.Seconds()/float64(b.N), "cpu-at-ready-s")
			b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-at-reconciled-s")
			b.ReportMetric(bg.Seconds()/float64(b.N), "reconcile-after-ready-s")
		})
	}
}

// writeTree makes n empty files in 50 app directories of 20 subdirectories.
func writeTree(b testing.TB, data string, n int) {
	for i := 0; i < n; i++ {
		dir := filepath.Join(data, fmt.Sprintf("app%02d", i%50), fmt.Sprintf("d%03d", i/1000))
		if i%1000 < 50 {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				b.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("note-%06d.md", i)), nil, 0o644); err != nil {
			b.Fatal(err)
		}
	}
}

// processCPU is the user+system CPU time process pid has used so far.
func processCPU(b *testing.B, pid int) time.Duration {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	// Fields after the command's closing parenthesis; utime and stime are
	// the 14th and 15th fields of the line, in clock ticks (100 Hz on Linux).
	s := string(raw)
	i := len(s) - 1
	for i > 0 && s[i] != ')' {
		i--
	}
	var state string
	var f [12]int64
	if _, err := fmt.Sscan(s[i+1:], &state, &f[0], &f[1], &f[2], &f[3], &f[4], &f[5], &f[6], &f[7], &f[8], &f[9], &f[10], &f[11]); err != nil {
		b.Fatal(err)
	}
	return time.Duration(f[10]+f[11]) * 10 * time.Millisecond
}

// tagAll tags every file of writeTree through the index API, with durable
// records through the core, as POST /v1/tags does: a task and related apps,
// and a 512-d in-process vector from fakeUSE.
func tagAll(b testing.TB, data, indexDir string, n int) {
	fs, err := server.New(data, server.Options{Journal: filepath.Clean(indexDir) + ".journal"})
	if err != nil {
		b.Fatal(err)
	}
	defer fs.Close()
	x, err := index.Open(indexDir, index.Options{Embedder: fakeUSE{}, Saver: saver{fs}})
	if err != nil {
		b.Fatal(err)
	}
	words := []string{"quarterly", "report", "budget", "auth", "login", "photo", "resize", "invoice", "meeting", "draft"}
	apps := []string{"code-editor", "terminal", "browser", "spreadsheet", "mail"}
	var reqs []index.TagRequest
	for i := 0; i < n; i++ {
		p := fmt.Sprintf("app%02d/d%03d/note-%06d.md", i%50, i/1000, i)
		reqs = append(reqs, index.TagRequest{Path: p,
			Task:        words[i%len(words)] + " " + words[(i/7)%len(words)] + " " + words[(i/13)%len(words)],
			RelatedApps: []string{apps[i%len(apps)], apps[(i/3)%len(apps)]}})
		if len(reqs) == 2000 || i == n-1 {
			if _, err := x.TagMany(context.Background(), reqs); err != nil {
				b.Fatal(err)
			}
			reqs = reqs[:0]
		}
	}
	if err := x.WaitEmbedded(context.Background()); err != nil {
		b.Fatal(err)
	}
	if err := x.Close(); err != nil {
		b.Fatal(err)
	}
}

// saver writes the durable records as the daemon's recordSaver does.
type saver struct{ fs *server.FS }

func (s saver) SaveRecord(ctx context.Context, p string, update func(index.Saved, bool) index.Saved) (index.Saved, error) {
	m, err := s.fs.SaveMeta(ctx, p, func(cur server.Meta, ok bool) server.Meta {
		d := update(index.Saved{CreatedBy: cur.CreatedBy, CreatedAt: cur.CreatedAt, Task: cur.Task, RelatedApps: cur.RelatedApps}, ok)
		return server.Meta{CreatedBy: d.CreatedBy, CreatedAt: d.CreatedAt, Task: d.Task, RelatedApps: d.RelatedApps}
	})
	return index.Saved{CreatedBy: m.CreatedBy, CreatedAt: m.CreatedAt, Task: m.Task, RelatedApps: m.RelatedApps}, err
}

// fakeUSE stands in for USE-lite when writing the benchmark's vectors: same
// name and dimensions, so the daemon takes them as current in-process vectors
// (their hash is of the tag text), with values derived from the text.
type fakeUSE struct{}

func (fakeUSE) Name() string       { return embed.UseLite.Name }
func (fakeUSE) Dims() int          { return embed.UseLite.Dims }
func (fakeUSE) Threshold() float64 { return embed.UseLite.Threshold }
func (fakeUSE) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		h := fnv.New64a()
		h.Write([]byte(t))
		seed := h.Sum64()
		v := make([]float32, embed.UseLite.Dims)
		var n float64
		for j := range v {
			seed = seed*6364136223846793005 + 1442695040888963407
			var buf [8]byte
			binary.LittleEndian.PutUint64(buf[:], seed)
			v[j] = float32(int32(binary.LittleEndian.Uint32(buf[4:]))) / math.MaxInt32
			n += float64(v[j]) * float64(v[j])
		}
		for j := range v {
			v[j] /= float32(math.Sqrt(n))
		}
		out[i] = v
	}
	return out, nil
}
