package passage_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/semfs/semfs/embed"
	"github.com/semfs/semfs/embed/embedtest"
	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/index/content"
	"github.com/semfs/semfs/index/passage"
)

// Word lists with no word, stem or 4-rune prefix in common: file names,
// contents, and query words found in no file.
var (
	promiseNames   = strings.Fields("anchor basket candle dragon engine falcon garden harbor island jacket kettle ladder magnet needle orchard pepper quartz rabbit saddle tunnel violin walnut")
	promiseContent = strings.Fields("river mountain forest ocean desert valley storm thunder winter summer bread cheese coffee butter market village castle bridge tower church doctor nurse school teacher student lesson music guitar piano dance")
	promiseQuery   = strings.Fields("invoice payroll mortgage lawsuit telescope vaccine satellite algorithm")
	// promiseNear is close in meaning to the query words without holding
	// them: the files made of it come by meaning alone, and closer than
	// any named file.
	promiseNear = strings.Fields("billing accountant salary wages bank loan court judge attorney stars planet orbit injection immunity computer program software")
)

// The seed's promise with contents (docs/contents.md): on random corpora, a
// file whose basename equals a query word ranks above every file the query
// reaches by meaning alone, through its tags' vectors or its passages'.
func TestContentsNamePromise(t *testing.T) {
	use, err := embed.LoadUSELite(embedtest.ModelDir(t))
	if err != nil {
		t.Fatal(err)
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 27))
	ctx := context.Background()
	root := t.TempDir()
	x, err := index.Open(t.TempDir(), index.Options{Embedder: use})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	px, err := passage.Open(passage.Options{Files: content.Dir(root), Embedder: use, CPU: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer px.Close()
	var cs []content.Change
	names := r.Perm(len(promiseNames))
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	for i, ni := range names {
		p := fmt.Sprintf("d%d/%s.txt", i%3, promiseNames[ni])
		var b strings.Builder
		for range 5 + r.IntN(80) {
			b.WriteString(promiseContent[r.IntN(len(promiseContent))] + " ")
			if r.IntN(12) == 0 {
				b.WriteString("\n\n")
			}
		}
		os.MkdirAll(filepath.Join(root, filepath.Dir(p)), 0o755)
		if err := os.WriteFile(filepath.Join(root, p), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := x.Create(p, "", uint64(i+1), at); err != nil {
			t.Fatal(err)
		}
		if r.IntN(2) == 0 { // half tagged, with contents words
			task := promiseContent[r.IntN(len(promiseContent))] + " " + promiseContent[r.IntN(len(promiseContent))]
			if _, err := x.Tag(ctx, p, task, nil, nil); err != nil {
				t.Fatal(err)
			}
		}
		cs = append(cs, content.Change{Op: content.Written, Path: p})
	}
	for i := range 6 {
		p := fmt.Sprintf("e/f%d.txt", i)
		var b strings.Builder
		for range 10 + r.IntN(30) {
			b.WriteString(promiseNear[r.IntN(len(promiseNear))] + " ")
		}
		os.MkdirAll(filepath.Join(root, "e"), 0o755)
		if err := os.WriteFile(filepath.Join(root, p), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := x.Create(p, "", uint64(100+i), at); err != nil {
			t.Fatal(err)
		}
		cs = append(cs, content.Change{Op: content.Written, Path: p})
	}
	px.Apply(cs)
	settle(t, px)
	src := passage.DirSource(px, root)
	others, byContents := 0, 0 // files ranked below the named one: the promise was tested against them
	for range 40 {
		name := promiseNames[names[r.IntN(len(names))]]
		words := []string{name}
		for range 1 + r.IntN(3) {
			words = append(words, promiseQuery[r.IntN(len(promiseQuery))])
		}
		r.Shuffle(len(words), func(i, j int) { words[i], words[j] = words[j], words[i] })
		q := strings.Join(words, " ")
		res, err := x.Query(ctx, index.Query{Text: q, Limit: 10, Contents: src})
		if err != nil {
			t.Fatal(err)
		}
		if len(res) == 0 || !strings.HasSuffix(res[0].Path, "/"+name+".txt") {
			var got []string
			for _, r := range res {
				got = append(got, fmt.Sprintf("%s %.3f", r.Path, r.Score))
			}
			t.Fatalf("%q: the file named %s is not first: %v", q, name, got)
		}
		for _, o := range res[1:] {
			others++
			if len(o.Passages) > 0 {
				byContents++
			}
			if o.Score >= res[0].Score {
				t.Fatalf("%q: %s (meaning alone) scores %v, the named file %v", q, o.Path, o.Score, res[0].Score)
			}
		}
	}
	t.Logf("%d files below the named one, %d of them with passages", others, byContents)
	if byContents == 0 {
		t.Fatalf("no file came by its passages' meaning: the promise was not tested against contents")
	}
}
