package embed_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/semfs/semfs/embed"
	"github.com/semfs/semfs/embed/embedtest"
)

// lengthEmbedder is a tiny deterministic Embedder that records what reached
// it, so the cache's behaviour (not a model's) is what is observed.
type lengthEmbedder struct {
	mu    sync.Mutex
	calls [][]string
}

func (*lengthEmbedder) Name() string       { return "len" }
func (*lengthEmbedder) Dims() int          { return 2 }
func (*lengthEmbedder) Threshold() float64 { return 0.5 }
func (l *lengthEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	l.mu.Lock()
	l.calls = append(l.calls, append([]string(nil), texts...))
	l.mu.Unlock()
	out := make([][]float32, len(texts))
	for i, s := range texts {
		if s == "" {
			return nil, embed.ErrEmptyText
		}
		out[i] = []float32{float32(len(s)), 1}
	}
	return out, nil
}

func TestCachedLRU(t *testing.T) {
	inner := &lengthEmbedder{}
	c := embed.NewCached(inner, 2)
	ctx := context.Background()
	steps := []struct {
		texts      []string
		reachInner []string // nil: nothing reaches the model
	}{
		{[]string{"a", "bb", "a"}, []string{"a", "bb"}}, // duplicates embedded once
		{[]string{"bb", "a"}, nil},                      // both cached
		{[]string{"ccc"}, []string{"ccc"}},              // evicts "bb" (least recent)
		{[]string{"a"}, nil},
		{[]string{"bb"}, []string{"bb"}},
	}
	for i, st := range steps {
		before := len(inner.calls)
		v, err := c.Embed(ctx, st.texts)
		if err != nil {
			t.Fatal(err)
		}
		for j, s := range st.texts {
			if v[j][0] != float32(len(s)) {
				t.Fatalf("step %d: vector %d = %v for %q", i, j, v[j], s)
			}
		}
		var got []string
		if len(inner.calls) > before {
			got = inner.calls[before]
		}
		if strings.Join(got, "|") != strings.Join(st.reachInner, "|") {
			t.Fatalf("step %d: model saw %q, want %q", i, got, st.reachInner)
		}
	}
	// Returned vectors are the caller's: changing them must not poison the cache.
	v, _ := c.Embed(ctx, []string{"a"})
	v[0][0] = 99
	if v, _ := c.Embed(ctx, []string{"a"}); v[0][0] != 1 {
		t.Fatalf("cache returned a vector the caller changed: %v", v[0])
	}
	if _, err := c.Embed(ctx, []string{"x", ""}); !errors.Is(err, embed.ErrEmptyText) {
		t.Fatalf("error not passed through: %v", err)
	}
	if hits, misses := c.Stats(); hits == 0 || misses == 0 {
		t.Fatalf("stats %d hits %d misses", hits, misses)
	}
	if c.Name() != "len" || c.Dims() != 2 || c.Threshold() != 0.5 {
		t.Fatal("Cached does not report the wrapped model")
	}
}

func TestCachedRealModel(t *testing.T) {
	m := embedtest.USELite(t)
	c := embed.NewCached(m, 16)
	ctx := context.Background()
	want, err := m.Embed(ctx, []string{"auth problems"})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		got, err := c.Embed(ctx, []string{"auth problems"})
		if err != nil {
			t.Fatal(err)
		}
		if cosine(got[0], want[0]) < 0.999999 {
			t.Fatal("cached vector differs from the model's")
		}
	}
}
