package index_test

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/semfs/semfs/embed"
	"github.com/semfs/semfs/index"
)

func allPaths(t *testing.T, x *index.Index) []string {
	t.Helper()
	// "/" hits every nested path; these tests use nested paths only.
	res := query(t, x, index.Query{Text: "/"})
	out := make([]string, len(res))
	for i, r := range res {
		out[i] = r.Path
	}
	sort.Strings(out)
	return out
}

func TestCreateIsIdempotent(t *testing.T) {
	x := openIndex(t, t.TempDir(), index.Options{})
	mustCreate(t, x, "d/f", "app1", 7)
	mustTag(t, x, "d/f", "task", []string{"x"}, nil)
	later := t0.Add(time.Hour)
	if err := x.Create("d/f", "app2", 8, later); err != nil {
		t.Fatal(err)
	}
	r, err := x.Get("d/f")
	if err != nil {
		t.Fatal(err)
	}
	if r.CreatedBy != "app1" || !r.CreatedAt.Equal(t0) || r.Task != "task" || !r.UpdatedAt.Equal(later) {
		t.Errorf("record after second create = %+v", r)
	}
	if err := x.Touch("d/f", later.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := x.Touch("d/f", t0); err != nil { // older event: UpdatedAt does not go back
		t.Fatal(err)
	}
	if r, _ := x.Get("d/f"); !r.UpdatedAt.Equal(later.Add(time.Minute)) {
		t.Errorf("UpdatedAt = %v", r.UpdatedAt)
	}
	if err := x.Touch("d/missing", t0); !errors.Is(err, index.ErrNotFound) || index.KindOf(err) != index.KindNotFound {
		t.Errorf("Touch missing: %v", err)
	}
	if _, err := x.Get("d/missing"); !errors.Is(err, index.ErrNotFound) {
		t.Errorf("Get missing: %v", err)
	}
}

func TestInvalidInputChangesNothing(t *testing.T) {
	x := openIndex(t, t.TempDir(), index.Options{})
	mustCreate(t, x, "d/f", "app", 1)
	mustTag(t, x, "d/f", "keep", []string{"a"}, vec4(1, 0, 0, 0))
	inf := float32(math.Inf(1))
	bad := []struct {
		name string
		do   func() error
		is   error
	}{
		{"create absolute", func() error { return x.Create("/etc/passwd", "", 1, t0) }, index.ErrInvalidPath},
		{"create dotdot", func() error { return x.Create("a/../b", "", 1, t0) }, index.ErrInvalidPath},
		{"create trailing slash", func() error { return x.Create("a/", "", 1, t0) }, index.ErrInvalidPath},
		{"create empty", func() error { return x.Create("", "", 1, t0) }, index.ErrInvalidPath},
		{"create double slash", func() error { return x.Create("a//b", "", 1, t0) }, index.ErrInvalidPath},
		{"create bad utf8 creator", func() error { return x.Create("d/g", "\xff", 1, t0) }, index.ErrInvalidText},
		{"rename into itself", func() error { return x.Rename("d", "d/e", t0) }, index.ErrInvalidPath},
		{"rename onto ancestor", func() error { return x.Rename("d/f", "d", t0) }, index.ErrInvalidPath},
		{"tag unknown model", func() error {
			_, err := x.Tag(context.Background(), "d/f", "new", nil, &index.Vector{Model: "gpt", Values: []float32{1}})
			return err
		}, index.ErrUnknownModel},
		{"tag wrong dims", func() error {
			_, err := x.Tag(context.Background(), "d/f", "new", nil, &index.Vector{Model: embed.MiniLM.Name, Values: make([]float32, 383)})
			return err
		}, index.ErrInvalidVector},
		{"tag Inf", func() error { _, err := x.Tag(context.Background(), "d/f", "new", nil, vec4(inf, 0, 0, 0)); return err }, index.ErrInvalidVector},
		{"tag NaN", func() error {
			_, err := x.Tag(context.Background(), "d/f", "new", nil, vec4(float32(math.NaN()), 0, 0, 0))
			return err
		}, index.ErrInvalidVector},
		{"tag zero vector", func() error { _, err := x.Tag(context.Background(), "d/f", "new", nil, vec4(0, 0, 0, 0)); return err }, index.ErrInvalidVector},
		{"tag bad utf8", func() error { _, err := x.Tag(context.Background(), "d/f", "\xc3", nil, nil); return err }, index.ErrInvalidText},
		{"tag new file with bad vector", func() error { _, err := x.Tag(context.Background(), "d/new", "t", nil, vec4(0, 0, 0, 0)); return err }, index.ErrInvalidVector},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.do()
			if !errors.Is(err, tc.is) || index.KindOf(err) != index.KindInvalid {
				t.Fatalf("err = %v, want %v (KindInvalid)", err, tc.is)
			}
		})
	}
	r, err := x.Get("d/f")
	if err != nil || r.Task != "keep" || !reflect.DeepEqual(r.RelatedApps, []string{"a"}) || r.CreatedBy != "app" {
		t.Errorf("record changed: %+v %v", r, err)
	}
	if _, err := x.Get("d/new"); !errors.Is(err, index.ErrNotFound) {
		t.Errorf("bad tag created a record: %v", err)
	}
	if got := scores(query(t, x, index.Query{Vector: vec4(1, 0, 0, 0)})); !reflect.DeepEqual(got, []scored{{"d/f", 1}}) {
		t.Errorf("vector changed: %v", got)
	}
}

func TestTagReplacesAndCreates(t *testing.T) {
	x := openIndex(t, t.TempDir(), index.Options{})
	// Tag on a file the index has not seen creates its record.
	r := mustTag(t, x, "d/new", "first", []string{"a", "", "b"}, vec4(1, 0, 0, 0))
	if r.CreatedBy != "" || r.Task != "first" || !reflect.DeepEqual(r.RelatedApps, []string{"a", "b"}) {
		t.Errorf("tag record = %+v", r)
	}
	// Tagging again replaces tags and the vector: no vector now.
	mustTag(t, x, "d/new", "second", nil, nil)
	if got := query(t, x, index.Query{Text: "first"}); len(got) != 0 {
		t.Errorf("old task still found: %v", scores(got))
	}
	if got := query(t, x, index.Query{Vector: vec4(1, 0, 0, 0)}); len(got) != 0 {
		t.Errorf("old vector still used: %v", scores(got))
	}
	if got := scores(query(t, x, index.Query{Text: "SECOND"})); !reflect.DeepEqual(got, []scored{{"d/new", 1}}) {
		t.Errorf("new task: %v", got)
	}
	if s := x.Stats(); s.Records != 1 || s.Tagged != 1 {
		t.Errorf("stats %+v", s)
	}
}

func TestRenameFileAndSubtree(t *testing.T) {
	x := openIndex(t, t.TempDir(), index.Options{})
	for i, p := range []string{"proj/a.txt", "proj/sub/b.txt", "proj2/c.txt", "other/proj/d.txt", "dst/old.txt"} {
		mustCreate(t, x, p, "maker", uint64(i+1))
	}
	mustTag(t, x, "proj/sub/b.txt", "budget", []string{"sheet"}, vec4(0, 1, 0, 0))
	mustTag(t, x, "dst/old.txt", "replaced", nil, nil)

	// A file.
	later := t0.Add(time.Hour)
	if err := x.Rename("proj/a.txt", "proj/renamed.txt", later); err != nil {
		t.Fatal(err)
	}
	// A directory: only proj/ moves, not proj2/ (a prefix without the slash).
	if err := x.Rename("proj", "dst", later); err != nil {
		t.Fatal(err)
	}
	want := []string{"dst/renamed.txt", "dst/sub/b.txt", "other/proj/d.txt", "proj2/c.txt"}
	if got := allPaths(t, x); !reflect.DeepEqual(got, want) {
		t.Errorf("paths after renames = %v, want %v", got, want)
	}
	r, err := x.Get("dst/sub/b.txt")
	if err != nil {
		t.Fatal(err)
	}
	if r.Task != "budget" || r.CreatedBy != "maker" || !r.CreatedAt.Equal(t0) || !r.UpdatedAt.Equal(later) {
		t.Errorf("moved record = %+v", r)
	}
	// The client vector moved with it, unchanged; the replaced file's is gone.
	if got := scores(query(t, x, index.Query{Vector: vec4(0, 1, 0, 0)})); !reflect.DeepEqual(got, []scored{{"dst/sub/b.txt", 1}}) {
		t.Errorf("vector after move: %v", got)
	}
	if got := query(t, x, index.Query{Text: "replaced"}); len(got) != 0 {
		t.Errorf("replaced record survived: %v", scores(got))
	}
	// Renaming something the index does not hold changes nothing...
	if err := x.Rename("nothing/here", "x/y", t0); err != nil {
		t.Fatal(err)
	}
	if s := x.Stats(); s.Records != 4 || s.Tagged != 1 {
		t.Errorf("stats %+v", s)
	}
	// ...except that a file it replaces loses its record.
	if err := x.Rename("untracked/file", "proj2/c.txt", t0); err != nil {
		t.Fatal(err)
	}
	if _, err := x.Get("proj2/c.txt"); !errors.Is(err, index.ErrNotFound) {
		t.Errorf("replaced record kept: %v", err)
	}
}

func TestRemoveSubtree(t *testing.T) {
	x := openIndex(t, t.TempDir(), index.Options{})
	for i, p := range []string{"a/b/c.txt", "a/b/d/e.txt", "a/bc.txt", "a/f.txt"} {
		mustCreate(t, x, p, "", uint64(i+1))
		mustTag(t, x, p, "t", nil, vec4(1, 0, 0, 0))
	}
	if err := x.Remove("a/b"); err != nil {
		t.Fatal(err)
	}
	if got, want := allPaths(t, x), []string{"a/bc.txt", "a/f.txt"}; !reflect.DeepEqual(got, want) {
		t.Errorf("after remove: %v, want %v", got, want)
	}
	if err := x.Remove("a/f.txt"); err != nil {
		t.Fatal(err)
	}
	if err := x.Remove("never/was"); err != nil {
		t.Fatal(err)
	}
	if s := x.Stats(); s.Records != 1 || s.Vectors[testModel.Name] != 1 {
		t.Errorf("stats %+v", s)
	}
}

func TestReopenKeepsEverything(t *testing.T) {
	dir := t.TempDir()
	x, err := index.Open(dir, index.Options{Models: []embed.Model{testModel}})
	if err != nil {
		t.Fatal(err)
	}
	mustCreate(t, x, "k/one.md", "editor", 1)
	mustTag(t, x, "k/one.md", "auth bug", []string{"term"}, vec4(1, 1, 1, 1))
	mustCreate(t, x, "k/two.md", "", 2)
	q := index.Query{Text: "md", Vector: vec4(1, 0, 0, 0)}
	before := query(t, x, q)
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := x.Query(context.Background(), q); index.KindOf(err) != index.KindClosed {
		t.Errorf("query after close: %v", err)
	}
	x2 := openIndex(t, dir, index.Options{Models: []embed.Model{testModel}})
	after := query(t, x2, q)
	if !reflect.DeepEqual(before, after) {
		t.Errorf("after reopen:\n%v\nbefore:\n%v", after, before)
	}
	if s := x2.Stats(); s.Records != 2 || s.Tagged != 1 || s.Vectors[testModel.Name] != 1 {
		t.Errorf("stats %+v", s)
	}
}

// TestBleveRebuiltWhenBehind simulates a crash after buntdb committed but before
// Bleve persisted: an older copy of bleve/ is put back; Open must notice and rebuild.
func TestBleveRebuiltWhenBehind(t *testing.T) {
	dir := t.TempDir()
	x, err := index.Open(dir, index.Options{})
	if err != nil {
		t.Fatal(err)
	}
	mustCreate(t, x, "old/file", "", 1)
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(t.TempDir(), "bleve")
	if err := os.CopyFS(stale, os.DirFS(filepath.Join(dir, "bleve"))); err != nil {
		t.Fatal(err)
	}
	x, err = index.Open(dir, index.Options{})
	if err != nil {
		t.Fatal(err)
	}
	mustCreate(t, x, "new/zebra", "", 2)
	if err := x.Remove("old/file"); err != nil {
		t.Fatal(err)
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(dir, "bleve")); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(filepath.Join(dir, "bleve"), os.DirFS(stale)); err != nil {
		t.Fatal(err)
	}
	x2 := openIndex(t, dir, index.Options{})
	if got := scores(query(t, x2, index.Query{Text: "/"})); !reflect.DeepEqual(got, []scored{{"new/zebra", 1}}) {
		t.Errorf("after rebuild: %v", got)
	}
	// And a Bleve directory that is garbage.
	if err := x2.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(dir, "bleve")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "bleve"), []byte("junk"), 0o600); err != nil {
		t.Fatal(err)
	}
	x3 := openIndex(t, dir, index.Options{})
	if got := scores(query(t, x3, index.Query{Text: "zebra"})); !reflect.DeepEqual(got, []scored{{"new/zebra", 1}}) {
		t.Errorf("after rebuild from junk: %v", got)
	}
}

func TestSecondOpenFails(t *testing.T) {
	dir := t.TempDir()
	x := openIndex(t, dir, index.Options{})
	mustCreate(t, x, "a/b", "", 1)
	if y, err := index.Open(dir, index.Options{}); err == nil {
		y.Close()
		t.Fatal("second Open of a live index succeeded")
	}
	if got := scores(query(t, x, index.Query{Text: "/"})); !reflect.DeepEqual(got, []scored{{"a/b", 1}}) {
		t.Errorf("first index damaged: %v", got)
	}
}
