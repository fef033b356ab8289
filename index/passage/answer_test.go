package passage_test

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/index/content"
	"github.com/semfs/semfs/index/passage"
)

// A query reads passages' text from the answer's files only (a busy query
// has hundreds of candidates and keeps ten), and every passage it shows is
// the file's lines at that line number; a file changed between the check
// and the read shows no passage rather than wrong lines. Random corpora.
func TestAnswerReadsOnlyItsFiles(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 30))
	ctx := context.Background()
	root := t.TempDir()
	x, err := index.Open(t.TempDir(), index.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	px := open(t, root, "")
	defer px.Close()
	files := map[string]string{}
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	for i := range 60 {
		p := fmt.Sprintf("d%d/f%02d.txt", i%4, i)
		files[p] = genText(r)
		if err := x.Create(p, "", uint64(i+1), at); err != nil {
			t.Fatal(err)
		}
	}
	px.Apply(write(t, root, files))
	settle(t, px)

	var mu sync.Mutex
	opened := map[string]int{}
	src := passage.DirSource(px, root)
	readEach := src.ReadEach
	src.ReadEach = func(ctx context.Context, paths []string, each func(int, io.ReaderAt, passage.FileState)) {
		mu.Lock()
		for _, p := range paths {
			opened[p]++
		}
		mu.Unlock()
		readEach(ctx, paths, each)
	}
	for range 30 {
		q := vocab[r.IntN(len(vocab))] + " " + vocab[r.IntN(len(vocab))]
		limit := 1 + r.IntN(5)
		clear(opened)
		res, err := x.Query(ctx, index.Query{Text: q, Limit: limit, Contents: src})
		if err != nil {
			t.Fatal(err)
		}
		hits, err := src.Evidence(ctx, q, nil, "", 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) <= limit {
			continue // nothing to leave unread
		}
		var shown []string
		for _, rs := range res {
			if len(rs.Passages) > 0 {
				shown = append(shown, rs.Path)
			}
			lines := strings.Split(files[rs.Path], "\n")
			for _, p := range rs.Passages {
				if msg := notFilesText(lines, p); msg != "" {
					t.Fatalf("%q: %s: %s", q, rs.Path, msg)
				}
			}
		}
		var read []string
		for p := range opened {
			read = append(read, p)
		}
		slices.Sort(read)
		slices.Sort(shown)
		if !slices.Equal(read, shown) {
			t.Fatalf("%q, limit %d, %d content hits: read %v, showed passages of %v", q, limit, len(hits), read, shown)
		}
	}

	// Changed after Evidence, before Read: no passage, the others kept.
	hits, err := src.Evidence(ctx, "alpha", nil, "", 0)
	if err != nil || len(hits) < 2 {
		t.Fatalf("%d hits for alpha: %v", len(hits), err)
	}
	if err := os.WriteFile(filepath.Join(root, hits[0].Path), []byte("alpha changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ptrs := []*index.ContentHit{&hits[0], &hits[1]}
	if err := src.Read(ctx, "alpha", ptrs); err != nil {
		t.Fatal(err)
	}
	if len(hits[0].Passages) != 0 || len(hits[1].Passages) == 0 || hits[1].Passages[0].Text == "" {
		t.Fatalf("after a change between the check and the read: %+v / %+v", hits[0].Passages, hits[1].Passages)
	}
	px.Apply([]content.Change{{Op: content.Written, Path: hits[0].Path}})
}
