package embed_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/semfs/semfs/embed"
	"github.com/semfs/semfs/embed/embedtest"
)

// tagTexts builds n distinct tag texts shaped like real ones (task, apps,
// path through embed.TagText), about 20 tokens each.
func tagTexts(n int) []string {
	tasks := []string{"fix auth bug", "quarterly sales report", "resize product photos", "refactor database migrations",
		"book flights to Berlin", "fix flaky CI pipeline", "write down the lasagna recipe", "rotate leaked API keys",
		"redesign settings page", "review candidate resumes", "restore files from backup", "train sentiment classifier",
		"update README installation steps", "refund customer payment", "mix the podcast episode", "deploy service to kubernetes"}
	apps := [][]string{{"code-editor", "terminal"}, {"spreadsheet"}, {"browser"}, {"image-editor", "browser"}, nil, {"notebook"}}
	dirs := []string{"notes/auth", "reports/2026", "assets/img", "db/migrations", "travel/berlin", "ops/ci", "personal/recipes", "docs/guide"}
	out := make([]string, n)
	for i := range out {
		out[i] = embed.TagText(tasks[i%len(tasks)], apps[i%len(apps)],
			fmt.Sprintf("%s/item-%d-%s.md", dirs[(i/7)%len(dirs)], i, []string{"draft", "final", "notes", "log"}[i%4]))
	}
	return out
}

// cpuTime is the process's user+system CPU time. The machine is shared, so
// wall-clock figures swing with other load; CPU time per text does not.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func tokensPerText(b *testing.B, m embed.Embedder, texts []string) float64 {
	tok := m.(*embed.USELite).Tokenizer()
	n := 0
	for _, s := range texts {
		n += min(len(tok.Encode(s)), embed.MaxTokens)
	}
	return float64(n) / float64(len(texts))
}

// BenchmarkEmbedSingle is one query's embedding, uncached.
func BenchmarkEmbedSingle(b *testing.B) {
	m := embedtest.USELite(b)
	ctx := context.Background()
	q := []string{"auth problems when logging in"}
	tpt := tokensPerText(b, m, q)
	cpu0 := cpuTime()
	for b.Loop() {
		if _, err := m.Embed(ctx, q); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(tpt, "tokens/text")
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/1000/float64(b.N)/1, "cpu-ms/text")
}

// BenchmarkEmbedSingleCached is a repeated query through embed.NewCached.
func BenchmarkEmbedSingleCached(b *testing.B) {
	c := embed.NewCached(embedtest.USELite(b), 256)
	ctx := context.Background()
	q := []string{"auth problems when logging in"}
	if _, err := c.Embed(ctx, q); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := c.Embed(ctx, q); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEmbedBatch32 is one call with 32 tag texts.
func BenchmarkEmbedBatch32(b *testing.B) {
	m := embedtest.USELite(b)
	ctx := context.Background()
	texts := tagTexts(32)
	tpt := tokensPerText(b, m, texts)
	cpu0 := cpuTime()
	for b.Loop() {
		if _, err := m.Embed(ctx, texts); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(tpt, "tokens/text")
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N)/32, "ms/text")
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/1000/float64(b.N)/32, "cpu-ms/text")
}

// BenchmarkTag10k embeds 10,000 distinct tag texts per op, in calls of 256
// (how a bulk re-embed would batch), with the kernel this CPU selects. Run it
// with -benchtime 1x.
func BenchmarkTag10k(b *testing.B) { tag10k(b, embedtest.USELite(b)) }

// BenchmarkTag10kFP32 is BenchmarkTag10k with every product in fp32, as on
// a CPU without AMX-BF16.
func BenchmarkTag10kFP32(b *testing.B) {
	m, err := embed.LoadUSELiteFP32(embedtest.ModelDir(b))
	if err != nil {
		b.Fatal(err)
	}
	tag10k(b, m)
}

func tag10k(b *testing.B, m embed.Embedder) {
	ctx := context.Background()
	texts := tagTexts(10000)
	tpt := tokensPerText(b, m, texts)
	cpu0 := cpuTime()
	for b.Loop() {
		for i := 0; i < len(texts); i += 256 {
			if _, err := m.Embed(ctx, texts[i:min(i+256, len(texts))]); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(tpt, "tokens/text")
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N)/10000, "ms/text")
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/1000/float64(b.N)/10000, "cpu-ms/text")
}

// BenchmarkTagOneByOne is tagging as a stream of single-text calls (one Tag
// request at a time); ms/text times 10,000 is the unbatched 10k figure.
func BenchmarkTagOneByOne(b *testing.B) {
	m := embedtest.USELite(b)
	ctx := context.Background()
	texts := tagTexts(512)
	tpt := tokensPerText(b, m, texts)
	i := 0
	cpu0 := cpuTime()
	for b.Loop() {
		if _, err := m.Embed(ctx, texts[i%len(texts):i%len(texts)+1]); err != nil {
			b.Fatal(err)
		}
		i++
	}
	b.ReportMetric(tpt, "tokens/text")
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/text")
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/1000/float64(b.N)/1, "cpu-ms/text")
}

// BenchmarkLoadUSELite is the daemon's start-up cost for the model.
func BenchmarkLoadUSELite(b *testing.B) {
	dir := embedtest.ModelDir(b)
	for b.Loop() {
		if _, err := embed.LoadUSELite(dir); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEmbedConcurrent is 16 callers each embedding one query of two or
// three words at a time, as queries and tags arrive under load: each its own forward pass
// (alone), or joined by embed.Coalescer as the daemon does (joined).
func BenchmarkEmbedConcurrent(b *testing.B) {
	m := embedtest.USELite(b)
	words := strings.Fields("login token expired session cache quarter revenue report draft invoice budget kernel driver network latency deploy")
	var texts []string // two or three words, as queries are
	for i := range 512 {
		t := words[i%len(words)] + " " + words[(i/len(words))%len(words)]
		if i%2 == 1 {
			t += " " + words[(i*7)%len(words)]
		}
		texts = append(texts, t)
	}
	for _, c := range []struct {
		name string
		e    embed.Embedder
	}{{"alone", m}, {"joined", embed.NewCoalescer(m, 32)}} {
		b.Run(c.name, func(b *testing.B) {
			ctx := context.Background()
			cpu0 := cpuTime()
			var next atomic.Int64
			b.SetParallelism(8) // 16 callers on the 2 CPUs of the VM
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					t := texts[next.Add(1)%int64(len(texts))]
					if _, err := c.e.Embed(ctx, []string{t}); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/1000/float64(b.N), "cpu-ms/text")
		})
	}
}
