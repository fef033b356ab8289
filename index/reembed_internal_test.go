package index

import (
	"context"
	"testing"
	"time"

	"github.com/semfs/semfs/embed"
)

// countingEmbedder embeds every text as the same unit vector; enough to check
// that the background re-embedder reaches every record (the scan goes in chunks).
type countingEmbedder struct{}

func (countingEmbedder) Name() string       { return "const-4" }
func (countingEmbedder) Dims() int          { return 4 }
func (countingEmbedder) Threshold() float64 { return 0.5 }
func (countingEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i := range out {
		out[i] = []float32{1, 0, 0, 0}
	}
	return out, nil
}

func TestReembedScansEveryChunk(t *testing.T) {
	dir := t.TempDir()
	if err := writeCorpus(dir, 2500, 0); err != nil { // tagged, no vectors
		t.Fatal(err)
	}
	x, err := Open(dir, Options{Embedder: countingEmbedder{}, Models: []embed.Model{}})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := x.WaitEmbedded(ctx); err != nil {
		t.Fatal(err)
	}
	if s := x.Stats(); s.Vectors["const-4"] != 2500 || s.Reembed.Done != 2500 || s.Reembed.Running {
		t.Fatalf("stats %+v", s)
	}
}
