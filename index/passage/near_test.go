package passage_test

import (
	"context"
	"testing"
	"time"

	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/index/content"
	"github.com/semfs/semfs/index/passage"
)

// TestNoTypoGuessForAWordInContents: a query word no file's tags hold is
// looked for as the names' words a typo away ("statment": statement) only
// when no file the caller reads holds it in its contents either; held there,
// it is no typo, and the file holding it ranks above the name look-alike.
// Without contents (tags only) the typo guess stands.
func TestNoTypoGuessForAWordInContents(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	x, err := index.Open(t.TempDir(), index.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	px, err := passage.Open(passage.Options{Files: content.Dir(root), CPU: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer px.Close()
	files := map[string]string{
		"bank/statement_march.txt": "balance carried forward\n",
		"work/notes.txt":           "the statment of work for the harbour project, as signed\n",
		"work/other.txt":           "nothing to see here\n",
	}
	cs := write(t, root, files)
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	ino := uint64(1)
	for p := range files {
		if err := x.Create(p, "", ino, at); err != nil {
			t.Fatal(err)
		}
		ino++
	}
	px.Apply(cs)
	settle(t, px)
	src := passage.DirSource(px, root)

	res, err := x.Query(ctx, index.Query{Text: "statment", Limit: 10, Contents: src, Explain: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) == 0 || res[0].Path != "work/notes.txt" {
		t.Fatalf("statment with contents: %v, want work/notes.txt first", pathsOf(res))
	}
	for _, r := range res {
		if r.Path == "bank/statement_march.txt" {
			t.Errorf("statment with contents: %s found by a typo guess (%+v): the word is in a file's contents", r.Path, r.Explain)
		}
	}

	res, err = x.Query(ctx, index.Query{Text: "statment", Limit: 10, Scope: index.ScopeTags})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) == 0 || res[0].Path != "bank/statement_march.txt" {
		t.Fatalf("statment in tags only: %v, want the typo's bank/statement_march.txt first", pathsOf(res))
	}
}

func pathsOf(res []index.Result) []string {
	out := make([]string, len(res))
	for i, r := range res {
		out[i] = r.Path
	}
	return out
}
