package index_test

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/semfs/semfs/embed"
	"github.com/semfs/semfs/index"
)

// TestGuardLeavesClientWritesAlone is the daemon's background start-up
// reconcile: the backing directory is listed, then clients create, rename,
// remove and tag files before the reconcile commits. Each of those must keep
// what the client did (the list is older), while every other path is
// reconciled as usual. A plain Reconcile of the same list clobbers all four,
// which is what the guard is for.
func TestGuardLeavesClientWritesAlone(t *testing.T) {
	for _, guarded := range []bool{true, false} {
		x := openIndex(t, t.TempDir(), index.Options{})
		mustCreate(t, x, "a/renamed.txt", "editor", 10)
		mustTag(t, x, "a/renamed.txt", "quarterly report", []string{"sheet"}, vec4(1, 0, 0, 0))
		mustCreate(t, x, "a/removed.txt", "editor", 11)
		mustCreate(t, x, "a/tagged.txt", "editor", 12)
		mustCreate(t, x, "a/gone-before.txt", "editor", 13) // removed while the daemon was down
		mustCreate(t, x, "a/kept.txt", "editor", 14)

		var g *index.Guard
		if guarded {
			g = x.Guard()
		}
		// The walk, as the daemon found the directory at start.
		files := []index.FileState{
			{Path: "a/renamed.txt", Ino: 10, Size: 1, ModTime: t0},
			{Path: "a/removed.txt", Ino: 11, Size: 1, ModTime: t0},
			{Path: "a/tagged.txt", Ino: 12, Size: 1, ModTime: t0},
			{Path: "a/kept.txt", Ino: 14, Size: 1, ModTime: t0},
			{Path: "a/host-made.txt", Ino: 15, Size: 1, ModTime: t0}, // made while down
		}
		// Clients, through the change stream and the control socket, after
		// the walk passed.
		at := t0.Add(time.Minute)
		if _, err := x.Apply([]index.Change{
			{Op: index.OpCreate, Path: "a/new.txt", CreatedBy: "notes", Ino: 20, At: at},
			{Op: index.OpRename, Path: "a/renamed.txt", NewPath: "b/renamed.txt", At: at},
			{Op: index.OpRemove, Path: "a/removed.txt"},
		}); err != nil {
			t.Fatal(err)
		}
		mustTag(t, x, "a/tagged.txt", "new tags", []string{"mail"}, nil)

		var rep index.ReconcileReport
		var err error
		skipped := 0
		if guarded {
			rep, skipped, err = g.Reconcile(files)
		} else {
			rep, err = x.Reconcile(files)
		}
		if err != nil {
			t.Fatal(err)
		}
		clobbered := []string{}
		if r, err := x.Get("a/new.txt"); err != nil || r.CreatedBy != "notes" {
			clobbered = append(clobbered, "create")
		}
		if r, err := x.Get("b/renamed.txt"); err != nil || r.Task != "quarterly report" {
			clobbered = append(clobbered, "rename")
		}
		if _, err := x.Get("a/renamed.txt"); !errors.Is(err, index.ErrNotFound) {
			clobbered = append(clobbered, "rename (old path back)")
		}
		if _, err := x.Get("a/removed.txt"); !errors.Is(err, index.ErrNotFound) {
			clobbered = append(clobbered, "remove")
		}
		if !guarded {
			if len(clobbered) == 0 {
				t.Fatalf("without a guard nothing was clobbered: the test no longer shows the race (report %+v)", rep)
			}
			continue
		}
		if len(clobbered) > 0 {
			t.Errorf("writes clobbered by the guarded reconcile: %v (report %+v)", clobbered, rep)
		}
		if r, err := x.Get("a/tagged.txt"); err != nil || r.Task != "new tags" {
			t.Errorf("tag during the reconcile: %+v %v", r, err)
		}
		// The rest is reconciled as usual.
		if !reflect.DeepEqual(rep.Created, []string{"a/host-made.txt"}) || !reflect.DeepEqual(rep.Removed, []string{"a/gone-before.txt"}) || len(rep.Renamed) != 0 {
			t.Errorf("report %+v", rep)
		}
		if skipped == 0 {
			t.Error("no path reported as left to clients")
		}
		// The guard ended: later writes are not noted, and reconciles see
		// everything again.
		if _, err := x.Reconcile([]index.FileState{{Path: "a/new.txt", Ino: 20, Size: 1, ModTime: at}}); err != nil {
			t.Fatal(err)
		}
		if _, err := x.Get("b/renamed.txt"); !errors.Is(err, index.ErrNotFound) {
			t.Errorf("after the guard, a plain Reconcile still skips b/renamed.txt: %v", err)
		}
	}
}

// TestOpenEmbedderFrom: the embedder given late is asked for once, after the
// vectors are loaded, and then serves as if given to Open; nil is
// keyword-only; a model the index does not take fails Open.
func TestOpenEmbedderFrom(t *testing.T) {
	dir := t.TempDir()
	emb := hashEmbedder{name: embed.UseLite.Name, dims: embed.UseLite.Dims, calls: new(int64)}
	x := openIndex(t, dir, index.Options{Embedder: emb})
	mustCreate(t, x, "notes/q3.md", "editor", 1)
	mustTag(t, x, "notes/q3.md", "quarterly sales report", []string{"sheet"}, nil)
	waitEmbedded(t, x)
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}

	calls := 0
	y, err := index.Open(dir, index.Options{EmbedderFrom: func() embed.Embedder { calls++; return emb }})
	if err != nil {
		t.Fatal(err)
	}
	st := y.Stats()
	if calls != 1 || st.Model != embed.UseLite.Name || st.KeywordOnly != "" || st.Vectors[embed.UseLite.Name] != 1 {
		t.Errorf("calls %d, stats %+v", calls, st)
	}
	res, err := y.Query(context.Background(), index.Query{Text: "sales figures", Limit: 5, Explain: true})
	if err != nil || len(res) != 1 || res[0].Explain == nil || res[0].Explain.Similarity == nil {
		t.Errorf("query with the late embedder: %+v %v", res, err)
	}
	y.Close()

	z, err := index.Open(dir, index.Options{EmbedderFrom: func() embed.Embedder { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	if st := z.Stats(); st.Model != "" || st.KeywordOnly == "" {
		t.Errorf("nil embedder: %+v", st)
	}
	z.Close()

	other := hashEmbedder{name: "not-a-known-model", dims: 8}
	if w, err := index.Open(dir, index.Options{EmbedderFrom: func() embed.Embedder { return other }}); !errors.Is(err, index.ErrUnknownModel) {
		if w != nil {
			w.Close()
		}
		t.Errorf("unknown late model: %v", err)
	}
}
