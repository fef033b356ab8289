package embed_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/semfs/semfs/embed"
	"github.com/semfs/semfs/embed/embedtest"
)

func cosine(a, b []float32) float64 {
	var d, na, nb float64
	for i := range a {
		d += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	return d / math.Sqrt(na*nb)
}

// TestMatchesJSRuntime checks the tokenizer and the forward pass against ids
// and vectors from USE-lite's own TF.js runtime (testdata/ref_use.json, made
// by testdata/jsref/mkref.mjs): equal ids and cosine >= 0.9999 per sentence.
func TestMatchesJSRuntime(t *testing.T) {
	m := embedtest.USELite(t)
	ref := embedtest.LoadUSERef(t)
	tok := m.(*embed.USELite).Tokenizer()

	// The reference must keep covering the hard cases.
	covers := map[string]func(s string, ids []int) bool{
		"over 128 tokens": func(_ string, ids []int) bool { return len(ids) > embed.MaxTokens },
		"CJK":             func(s string, _ []int) bool { return strings.ContainsRune(s, '語') },
		"emoji":           func(s string, _ []int) bool { return strings.ContainsRune(s, '🚀') },
		"accents":         func(s string, _ []int) bool { return strings.ContainsRune(s, 'é') },
		"code":            func(s string, _ []int) bool { return strings.Contains(s, "func (") },
		"NFKC folding":    func(s string, _ []int) bool { return strings.ContainsRune(s, 'ﬁ') },
	}
	for name, has := range covers {
		found := false
		for i, s := range ref.Sentences {
			found = found || has(s, ref.IDs[i])
		}
		if !found {
			t.Errorf("reference set lacks a sentence with %s", name)
		}
	}

	batch, err := m.Embed(context.Background(), ref.Sentences)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range ref.Sentences {
		name := s
		if utf8.RuneCountInString(name) > 40 {
			name = string([]rune(name)[:40])
		}
		t.Run(name, func(t *testing.T) {
			ids := tok.Encode(s)
			if !equalInts(ids, ref.IDs[i]) {
				t.Fatalf("token ids\n got %v\nwant %v", ids, ref.IDs[i])
			}
			if c := cosine(batch[i], ref.Emb[i]); c < 0.9999 {
				t.Errorf("batched: cosine to JS %.7f < 0.9999", c)
			}
			one, err := m.Embed(context.Background(), []string{s})
			if err != nil {
				t.Fatal(err)
			}
			if c := cosine(one[0], ref.Emb[i]); c < 0.9999 {
				t.Errorf("alone: cosine to JS %.7f < 0.9999", c)
			}
			if n := cosine(one[0], one[0]); math.Abs(n-1) > 1e-5 {
				t.Errorf("not unit length: |v|^2 = %v", n)
			}
		})
	}
}

// TestBF16MatchesFP32 bounds what the bf16 kernels (weights rounded to
// bfloat16, and for AMX and AVX512_BF16 the activations too before each
// product; sums in fp32) change in the model's output: over the JS reference
// sentences and 2,000 tag texts, every vector stays within cosine 0.9999 of
// the fp32 path's, the bar TestMatchesJSRuntime sets against TF.js. Each bf16
// kernel this CPU can run is checked (AMX tiles, AVX512_BF16, bf16 weights).
func TestBF16MatchesFP32(t *testing.T) {
	kernels := embed.BF16Kernels()
	if len(kernels) == 0 {
		t.Skip("no AMX-BF16, AVX512_BF16 or AVX2 here: the model runs in fp32 only") // platform
	}
	dir := embedtest.ModelDir(t)
	ref, err := embed.LoadUSELiteFP32(dir)
	if err != nil {
		t.Fatal(err)
	}
	texts := append(tagTexts(2000), embedtest.LoadUSERef(t).Sentences...)
	want, err := ref.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range kernels {
		t.Run(k, func(t *testing.T) {
			m, err := embed.LoadUSELiteKernel(dir, k)
			if err != nil {
				t.Fatal(err)
			}
			got, err := m.Embed(context.Background(), texts)
			if err != nil {
				t.Fatal(err)
			}
			worst, sum := 1.0, 0.0
			for i := range texts {
				c := cosine(got[i], want[i])
				sum += 1 - c
				worst = min(worst, c)
				if c < 0.9999 {
					t.Errorf("text %d %q: cosine to fp32 %.7f < 0.9999", i, texts[i], c)
				}
			}
			t.Logf("%s, %d texts: min cosine to fp32 %.7f, mean 1-cosine %.2g", k, len(texts), worst, sum/float64(len(texts)))
		})
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestEmptyText pins the documented behaviour: a text without a non-space
// character is an error of KindInput wrapping ErrEmptyText, for the whole
// batch, and no vectors are returned.
func TestEmptyText(t *testing.T) {
	m := embedtest.USELite(t)
	for _, tc := range []struct {
		name  string
		texts []string
	}{
		{"empty", []string{""}},
		{"spaces", []string{"   "}},
		{"whitespace mix", []string{"\t\n \u00a0"}},
		{"one of many", []string{"fix auth bug", "", "sales report"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := m.Embed(context.Background(), tc.texts)
			if !errors.Is(err, embed.ErrEmptyText) || embed.KindOf(err) != embed.KindInput {
				t.Fatalf("err = %v, want KindInput wrapping ErrEmptyText", err)
			}
			if v != nil {
				t.Fatalf("got %d vectors with the error", len(v))
			}
		})
	}
	v, err := m.Embed(context.Background(), nil)
	if err != nil || len(v) != 0 {
		t.Fatalf("empty batch: %v, %v; want no vectors and no error", v, err)
	}
}

// TestMeaning checks that the vectors carry meaning the hybrid query relies on.
func TestMeaning(t *testing.T) {
	m := embedtest.USELite(t)
	texts := []string{
		"auth problems",
		embed.TagText("fix login failure", nil, "notes/a.md"),
		embed.TagText("authentication bug", nil, "notes/b.md"),
		embed.TagText("quarterly sales report", []string{"spreadsheet"}, "reports/q3.xlsx"),
		"A dog runs through the park",
		"The dog is running in the park",
		"I love eating pizza for dinner",
	}
	v, err := m.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	th := m.Threshold()
	for _, tc := range []struct {
		a, b  int
		above bool
	}{
		{0, 1, true}, {0, 2, true}, {0, 3, false}, {4, 5, true}, {4, 6, false},
	} {
		c := cosine(v[tc.a], v[tc.b])
		if (c >= th) != tc.above {
			t.Errorf("cos(%q, %q) = %.3f; want above threshold %.2f: %v", texts[tc.a], texts[tc.b], c, th, tc.above)
		}
	}
}

// TestConcurrentEmbed runs many goroutines on one model and expects the same
// vectors as a single serial call: the model shares weights, not scratch.
func TestConcurrentEmbed(t *testing.T) {
	m := embedtest.USELite(t)
	texts := []string{"fix auth bug", "quarterly sales report", "日本語のテキスト", strings.Repeat("long text ", 80)}
	want, err := m.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := 0; r < 3; r++ {
				got, err := m.Embed(context.Background(), texts[g%len(texts):])
				if err != nil {
					errs <- err
					return
				}
				for i := range got {
					if c := cosine(got[i], want[g%len(texts)+i]); c < 0.999999 {
						t.Errorf("goroutine %d: text %d cosine %.7f to serial result", g, i, c)
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// TestSerialEmbed: under embed.Serial a batch large enough to be split over
// the workers is computed on the caller's goroutine alone, with the same
// vectors, and a canceled context still stops it.
func TestSerialEmbed(t *testing.T) {
	m := embedtest.USELite(t)
	var texts []string
	for i := range 40 {
		texts = append(texts, fmt.Sprintf("passage %d: %s", i, strings.Repeat("the payment webhook timed out ", 1+i%9)))
	}
	want, err := m.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	before := runtime.NumGoroutine()
	peak := before
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { // watches for the workers Serial must not start
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
				peak = max(peak, runtime.NumGoroutine())
				runtime.Gosched()
			}
		}
	}()
	got, err := m.Embed(embed.Serial(context.Background()), texts)
	close(stop)
	<-done
	if err != nil {
		t.Fatal(err)
	}
	for i := range got {
		if c := cosine(got[i], want[i]); c < 0.999999 {
			t.Errorf("text %d: cosine %.7f to the parallel result", i, c)
		}
	}
	if peak > before+1 { // +1: the watcher itself
		t.Errorf("goroutines rose from %d to %d during a Serial embed", before, peak)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := m.Embed(embed.Serial(ctx), texts); embed.KindOf(err) != embed.KindCanceled {
		t.Fatalf("canceled Serial embed: err = %v, want KindCanceled", err)
	}
}

func TestCanceled(t *testing.T) {
	m := embedtest.USELite(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := m.Embed(ctx, []string{"fix auth bug"})
	if embed.KindOf(err) != embed.KindCanceled || !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want KindCanceled wrapping context.Canceled", err)
	}
}

func TestLoadErrors(t *testing.T) {
	writeModel := func(t *testing.T, files map[string]string) string {
		dir := t.TempDir()
		for name, body := range files {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	vocab := `[["\ufffd",0],["<s>",0],["</s>",0],["e1",0],["e2",0],["e3",0],["a",-1]]`
	for _, tc := range []struct {
		name string
		dir  func(t *testing.T) string
		kind embed.Kind
	}{
		{"no directory", func(t *testing.T) string { return filepath.Join(t.TempDir(), "absent") }, embed.KindModelMissing},
		{"no vocab", func(t *testing.T) string { return writeModel(t, map[string]string{"model.json": "{}"}) }, embed.KindModelMissing},
		{"bad vocab", func(t *testing.T) string { return writeModel(t, map[string]string{"vocab.json": "{"}) }, embed.KindModelInvalid},
		{"no model.json", func(t *testing.T) string { return writeModel(t, map[string]string{"vocab.json": vocab}) }, embed.KindModelMissing},
		{"bad model.json", func(t *testing.T) string {
			return writeModel(t, map[string]string{"vocab.json": vocab, "model.json": "[1,"})
		}, embed.KindModelInvalid},
		{"shard escapes dir", func(t *testing.T) string {
			return writeModel(t, map[string]string{"vocab.json": vocab,
				"model.json": `{"weightsManifest":[{"paths":["../x"],"weights":[]}]}`})
		}, embed.KindModelInvalid},
		{"shard too short", func(t *testing.T) string {
			return writeModel(t, map[string]string{"vocab.json": vocab, "s1": "abcd",
				"model.json": `{"weightsManifest":[{"paths":["s1"],"weights":[{"name":"w","shape":[2],"dtype":"float32"}]}]}`})
		}, embed.KindModelInvalid},
		{"weights missing", func(t *testing.T) string {
			return writeModel(t, map[string]string{"vocab.json": vocab, "s1": "abcd",
				"model.json": `{"weightsManifest":[{"paths":["s1"],"weights":[{"name":"w","shape":[1],"dtype":"float32"}]}]}`})
		}, embed.KindModelInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, err := embed.LoadUSELite(tc.dir(t))
			if err == nil || e != nil {
				t.Fatalf("loaded a broken model: %v", err)
			}
			if k := embed.KindOf(err); k != tc.kind {
				t.Fatalf("kind %v (%v), want %v", k, err, tc.kind)
			}
			if tc.kind == embed.KindModelMissing && !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("%v does not match fs.ErrNotExist", err)
			}
		})
	}
}

// TestOddInput feeds text no client should send but some will: nothing may
// panic, and every result is a unit vector.
func TestOddInput(t *testing.T) {
	m := embedtest.USELite(t)
	huge := strings.Repeat("authentication failure ", 100_000) // 2.3 MB
	texts := []string{
		"\xff\xfe invalid utf-8 \xc3",
		"nul\x00byte",
		"\u200b\u200d zero-width",
		"\U0010FFFF private \uFFFD",
		strings.Repeat("🐛", 500),
		huge,
	}
	v, err := m.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	for i, x := range v {
		if n := cosine(x, x); math.IsNaN(n) || math.Abs(n-1) > 1e-5 {
			t.Errorf("text %d: |v|^2 = %v", i, n)
		}
	}
	// Only the first 128 tokens count, so a huge text embeds like its start.
	start, err := m.Embed(context.Background(), []string{huge[:5000]})
	if err != nil {
		t.Fatal(err)
	}
	if c := cosine(start[0], v[len(v)-1]); c < 0.99999 {
		t.Errorf("huge text vs its first 5000 bytes: cosine %.6f", c)
	}
}

func FuzzTokenizer(f *testing.F) {
	dir := embedtest.ModelDir(f)
	tok, err := embed.LoadTokenizer(filepath.Join(dir, "vocab.json"))
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{"fix auth bug", "日本語", "🚀\u200d", "\xff", "  "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, id := range tok.Encode(s) {
			if id < 0 || id >= tok.VocabSize() {
				t.Fatalf("%q: id %d outside the vocabulary", s, id)
			}
		}
	})
}
