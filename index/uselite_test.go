package index_test

import (
	"testing"

	"github.com/semfs/semfs/embed/embedtest"
	"github.com/semfs/semfs/index"
)

// TestUSELiteHybrid: the real in-process model (skipped when it is not fetched).
// Files tagged "fix login failure" and "authentication bug" answer "auth
// problems"; an unrelated file does not; keyword hits rank above the
// pure-semantic match.
func TestUSELiteHybrid(t *testing.T) {
	emb := embedtest.USELite(t)
	x := openIndex(t, t.TempDir(), index.Options{Embedder: emb})
	files := []struct{ path, task string }{
		{"notes/login.md", "fix login failure"},
		{"notes/bug.md", "authentication bug"},
		{"photos/beach.jpg", "holiday pictures from the beach"},
		{"problems/list.txt", "groceries"}, // keyword hit on "problems" only
	}
	for i, f := range files {
		mustCreate(t, x, f.path, "", uint64(i+1))
		mustTag(t, x, f.path, f.task, []string{"code-editor"}, nil)
	}
	got := query(t, x, index.Query{Text: "auth problems"})
	t.Logf("auth problems -> %v", scores(got))
	// "auth" is a substring of "authentication" (one point); "problems" of the
	// list's path (one point); "fix login failure" matches by meaning only.
	if len(got) != 3 || got[2].Path != "notes/login.md" || got[2].Score >= 1 || got[2].Score < emb.Threshold() {
		t.Fatalf("results %v: want two keyword hits, then notes/login.md by meaning alone", scores(got))
	}
	for _, r := range got[:2] {
		if r.Path != "notes/bug.md" && r.Path != "problems/list.txt" {
			t.Errorf("unexpected %s", r.Path)
		}
	}
}
