package index_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/semfs/semfs/index"
)

// MergeText (which evaluations call to score a settled index) loses nothing:
// over files tagged, then tagged again (each leaving an old version in
// Bleve's segments), every query word finds the same files after the merge as
// before, in both ranks.
func TestMergeTextKeepsEveryMatch(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 33))
	x, err := index.Open(t.TempDir(), index.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	ctx := context.Background()
	words := []string{"invoice", "budget", "kernel", "review", "meeting", "sensor", "deploy", "archive"}
	pick := func() string { return words[r.IntN(len(words))] + " " + words[r.IntN(len(words))] }
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	for i := range 300 {
		p := fmt.Sprintf("d%d/f%03d.txt", i%7, i)
		if err := x.Create(p, "app", uint64(i+1), at); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if _, err := x.Tag(ctx, p, pick(), nil, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	found := func() map[string][]string {
		out := map[string][]string{}
		for _, w := range words {
			for _, rank := range []string{index.RankSeed, index.RankBest} {
				res, err := x.Query(ctx, index.Query{Text: w, Rank: rank})
				if err != nil {
					t.Fatal(err)
				}
				var ps []string
				for _, h := range res {
					ps = append(ps, h.Path)
				}
				slices.Sort(ps)
				out[rank+" "+w] = ps
			}
		}
		return out
	}
	before := found()
	if err := x.MergeText(ctx); err != nil {
		t.Fatal(err)
	}
	after := found()
	for k, ps := range before {
		if !slices.Equal(ps, after[k]) {
			t.Fatalf("%s: %d files before the merge, %d after", k, len(ps), len(after[k]))
		}
		if len(ps) == 0 {
			t.Fatalf("%s: no file found", k)
		}
	}
}
