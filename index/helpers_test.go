package index_test

import (
	"context"
	"hash/fnv"
	"math"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/semfs/semfs/embed"
	"github.com/semfs/semfs/index"
)

// testModel is a 4-d model for client-supplied vectors whose cosines are exact.
var testModel = embed.Model{Name: "test-4d", Dims: 4, Threshold: 0.5}

var t0 = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

func openIndex(t testing.TB, dir string, opts index.Options) *index.Index {
	t.Helper()
	if opts.Models == nil {
		opts.Models = []embed.Model{embed.MiniLM, testModel}
	}
	x, err := index.Open(dir, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = x.Close() })
	return x
}

func mustCreate(t testing.TB, x *index.Index, path, by string, ino uint64) {
	t.Helper()
	if err := x.Create(path, by, ino, t0); err != nil {
		t.Fatalf("Create %s: %v", path, err)
	}
}

func mustTag(t testing.TB, x *index.Index, path, task string, apps []string, v *index.Vector) index.Record {
	t.Helper()
	r, err := x.Tag(context.Background(), path, task, apps, v)
	if err != nil {
		t.Fatalf("Tag %s: %v", path, err)
	}
	return r
}

func vec4(a, b, c, d float32) *index.Vector {
	return &index.Vector{Model: testModel.Name, Values: []float32{a, b, c, d}}
}

// query runs q; without a Rank it asks for the seed's rule, which the tests
// written for it pin exactly (best.go's tests ask for RankBest explicitly).
func query(t testing.TB, x *index.Index, q index.Query) []index.Result {
	t.Helper()
	if q.Rank == "" {
		q.Rank = index.RankSeed
	}
	res, err := x.Query(context.Background(), q)
	if err != nil {
		t.Fatalf("Query %+v: %v", q, err)
	}
	return res
}

type scored struct {
	Path  string
	Score float64
}

func scores(res []index.Result) []scored {
	out := make([]scored, len(res))
	for i, r := range res {
		out[i] = scored{r.Path, r.Score}
	}
	return out
}

// hashEmbedder is a small but real embedder for tests: a bag of hashed, lowercased
// words, L2-normalised. Texts sharing words are similar; it counts its calls.
type hashEmbedder struct {
	name  string
	dims  int
	calls *int64
}

func (h hashEmbedder) Name() string       { return h.name }
func (h hashEmbedder) Dims() int          { return h.dims }
func (h hashEmbedder) Threshold() float64 { return 0.2 }
func (h hashEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, h.dims)
		for _, w := range strings.FieldsFunc(strings.ToLower(t), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
			f := fnv.New32a()
			f.Write([]byte(w))
			v[f.Sum32()%uint32(h.dims)]++
		}
		var n float64
		for _, x := range v {
			n += float64(x) * float64(x)
		}
		if n == 0 {
			v[0], n = 1, 1
		}
		for j := range v {
			v[j] = float32(float64(v[j]) / math.Sqrt(n))
		}
		out[i] = v
	}
	return out, nil
}

func waitEmbedded(t testing.TB, x *index.Index) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := x.WaitEmbedded(ctx); err != nil {
		t.Fatalf("WaitEmbedded: %v", err)
	}
}
