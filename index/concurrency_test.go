package index_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand"
	"sync"
	"testing"

	"github.com/semfs/semfs/index"
)

// TestConcurrentUse runs writers, readers, dumps and the background re-embedder at
// once (run it with -race), then checks the index is still exactly consistent:
// every query equals the brute-force answer over the records Get returns, and
// every tagged record has its in-process vector.
func TestConcurrentUse(t *testing.T) {
	emb := hashEmbedder{name: "hash-16", dims: 16}
	x := openIndex(t, t.TempDir(), index.Options{Embedder: emb})
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for w := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewSource(int64(w)))
			for i := range 40 {
				p := fmt.Sprintf("w%d/d%d/f%d", w, i%4, i)
				if err := x.Create(p, "app", uint64(w*1000+i), t0); err != nil {
					errs <- err
					return
				}
				if _, err := x.Tag(ctx, p, fmt.Sprintf("task %d", i), []string{"editor"}, nil); err != nil {
					errs <- err
					return
				}
				switch r.Intn(5) {
				case 0:
					if err := x.Rename(fmt.Sprintf("w%d/d%d", w, i%4), fmt.Sprintf("w%d/m%d", w, i), t0); err != nil {
						errs <- err
						return
					}
				case 1:
					if err := x.Remove(p); err != nil {
						errs <- err
						return
					}
				}
			}
		}()
	}
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 30 {
				if _, err := x.Query(ctx, index.Query{Text: "task editor", Limit: 5}); err != nil {
					errs <- err
					return
				}
				_ = x.Stats()
				var b bytes.Buffer
				if err := x.Dump(&b); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	waitEmbedded(t, x)

	files := map[string]modelFile{}
	for _, r := range query(t, x, index.Query{Text: "/"}) {
		rec, err := x.Get(r.Path)
		if err != nil {
			t.Fatal(err)
		}
		files[r.Path] = modelFile{rec: rec}
	}
	s := x.Stats()
	if s.Records != len(files) || s.Tagged != len(files) || s.Vectors["hash-16"] != len(files) {
		t.Fatalf("stats %+v for %d files", s, len(files))
	}
	// Queries here are embedded too; compare the keyword rule exactly on a
	// keyword-only copy loaded from a dump.
	var b bytes.Buffer
	if err := x.Dump(&b); err != nil {
		t.Fatal(err)
	}
	y, err := index.Load(t.TempDir()+"/copy", &b, index.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer y.Close()
	for _, q := range []string{"task", "w1 m", "editor 3", "f1 d2", "/"} {
		got := query(t, y, index.Query{Text: q})
		want := brute(files, index.Query{Text: q}, 1)
		if !sameResults(got, want) {
			t.Errorf("%q:\n got  %v\n want %v", q, resultsString(got), resultsString(want))
		}
	}
}
