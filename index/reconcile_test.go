package index_test

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/semfs/semfs/index"
)

func TestReconcile(t *testing.T) {
	x := openIndex(t, t.TempDir(), index.Options{})
	mustCreate(t, x, "keep/same.txt", "a", 10)
	mustCreate(t, x, "keep/edited.txt", "a", 11)
	mustCreate(t, x, "old/moved.txt", "b", 12)
	mustTag(t, x, "old/moved.txt", "quarterly report", []string{"sheet"}, vec4(1, 0, 0, 0))
	mustCreate(t, x, "gone/deleted.txt", "c", 13)
	mustTag(t, x, "gone/deleted.txt", "scratch", nil, vec4(0, 1, 0, 0))
	mustCreate(t, x, "keep/replaced.txt", "d", 14) // saved by rename-over: new inode
	mustTag(t, x, "keep/replaced.txt", "draft", nil, nil)

	files := []index.FileState{
		{Path: "keep/same.txt", Ino: 10, Size: 5, ModTime: t0},
		{Path: "keep/edited.txt", Ino: 11, Size: 9, ModTime: t0.Add(time.Hour)},
		{Path: "new/place.txt", Ino: 12, Size: 3, ModTime: t0},
		{Path: "keep/replaced.txt", Ino: 99, Size: 1, ModTime: t0},
		{Path: "fresh/unknown.txt", Ino: 15, Size: 1, ModTime: t0.Add(2 * time.Hour)},
	}
	rep, err := x.Reconcile(files)
	if err != nil {
		t.Fatal(err)
	}
	want := index.ReconcileReport{
		Created: []string{"fresh/unknown.txt"},
		Renamed: []index.Move{{From: "old/moved.txt", To: "new/place.txt"}},
		Removed: []string{"gone/deleted.txt"},
		Updated: []string{"keep/edited.txt"},
		Unsized: []string{"keep/edited.txt"}, // created through the server: no size seen yet
	}
	if !reflect.DeepEqual(rep, want) {
		t.Errorf("report = %+v\nwant     %+v", rep, want)
	}
	// Tags and the vector followed the inode.
	r, err := x.Get("new/place.txt")
	if err != nil || r.Task != "quarterly report" || r.CreatedBy != "b" {
		t.Errorf("moved record %+v %v", r, err)
	}
	if got := scores(query(t, x, index.Query{Vector: vec4(1, 0, 0, 0)})); !reflect.DeepEqual(got, []scored{{"new/place.txt", 1}}) {
		t.Errorf("moved vector: %v", got)
	}
	if got := query(t, x, index.Query{Vector: vec4(0, 1, 0, 0)}); len(got) != 0 {
		t.Errorf("deleted file's vector still ranked: %v", scores(got))
	}
	if _, err := x.Get("gone/deleted.txt"); !errors.Is(err, index.ErrNotFound) {
		t.Errorf("deleted record: %v", err)
	}
	if r, _ := x.Get("keep/replaced.txt"); r.Task != "draft" {
		t.Errorf("rename-over lost tags: %+v", r)
	}
	if r, _ := x.Get("keep/edited.txt"); !r.UpdatedAt.Equal(t0.Add(time.Hour)) {
		t.Errorf("edited UpdatedAt = %v", r.UpdatedAt)
	}
	if r, _ := x.Get("fresh/unknown.txt"); r.CreatedBy != "" || !r.CreatedAt.Equal(t0.Add(2*time.Hour)) {
		t.Errorf("created record = %+v", r)
	}

	// Same state again: nothing to fix.
	rep, err = x.Reconcile(files)
	if err != nil || rep.Changed() {
		t.Errorf("second reconcile: %+v %v", rep, err)
	}
	// A size change with an older mtime is still a change (compared with what the
	// last Reconcile saw); UpdatedAt never goes back.
	files[0].Size = 6
	rep, err = x.Reconcile(files)
	if err != nil || !reflect.DeepEqual(rep.Updated, []string{"keep/same.txt"}) {
		t.Errorf("size change: %+v %v", rep, err)
	}
	// A write through the server (Touch) then an unchanged file: not reported.
	if err := x.Touch("keep/same.txt", t0.Add(3*time.Hour)); err != nil {
		t.Fatal(err)
	}
	rep, err = x.Reconcile(files)
	if err != nil || rep.Changed() {
		t.Errorf("after touch: %+v %v", rep, err)
	}
	// Bad input changes nothing.
	if _, err := x.Reconcile([]index.FileState{{Path: "../escape"}}); index.KindOf(err) != index.KindInvalid {
		t.Errorf("bad path: %v", err)
	}
	if s := x.Stats(); s.Records != 5 {
		t.Errorf("records = %d", s.Records)
	}
}

func TestReconcileInodeAmbiguity(t *testing.T) {
	x := openIndex(t, t.TempDir(), index.Options{})
	mustCreate(t, x, "a/one", "", 5)
	mustCreate(t, x, "a/two", "", 5) // hard links of one inode, both gone
	mustTag(t, x, "a/one", "first", nil, nil)
	mustTag(t, x, "a/two", "second", nil, nil)
	rep, err := x.Reconcile([]index.FileState{
		{Path: "b/x", Ino: 5, ModTime: t0},
		{Path: "b/y", Ino: 5, ModTime: t0},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := index.ReconcileReport{Renamed: []index.Move{{"a/one", "b/x"}, {"a/two", "b/y"}}}
	if !reflect.DeepEqual(rep, want) {
		t.Errorf("report %+v", rep)
	}
	if r, _ := x.Get("b/y"); r.Task != "second" {
		t.Errorf("b/y = %+v", r)
	}
}

// ReconcileIn looks only at its scopes: a host rename whose old and new paths
// are both in scope keeps the record's tags; records outside are left alone,
// even when the files list does not mention them.
func TestReconcileIn(t *testing.T) {
	x := openIndex(t, t.TempDir(), index.Options{})
	mustCreate(t, x, "a/moved.txt", "b", 12)
	mustTag(t, x, "a/moved.txt", "quarterly report", []string{"sheet"}, nil)
	mustCreate(t, x, "a/gone.txt", "c", 13)
	mustCreate(t, x, "ab.txt", "d", 14) // shares a prefix with scope "a", is not below it
	mustCreate(t, x, "elsewhere/keep.txt", "e", 15)

	files := []index.FileState{
		{Path: "b/moved.txt", Ino: 12, Size: 3, ModTime: t0},
		{Path: "b/new.txt", Ino: 16, Size: 1, ModTime: t0},
	}
	rep, err := x.ReconcileIn([]string{"a", "b"}, files)
	if err != nil {
		t.Fatal(err)
	}
	want := index.ReconcileReport{
		Created: []string{"b/new.txt"},
		Renamed: []index.Move{{From: "a/moved.txt", To: "b/moved.txt"}},
		Removed: []string{"a/gone.txt"},
	}
	if !reflect.DeepEqual(rep, want) {
		t.Errorf("report = %+v\nwant     %+v", rep, want)
	}
	if r, err := x.Get("b/moved.txt"); err != nil || r.Task != "quarterly report" || r.CreatedBy != "b" {
		t.Errorf("moved record %+v %v", r, err)
	}
	for _, p := range []string{"ab.txt", "elsewhere/keep.txt"} {
		if _, err := x.Get(p); err != nil {
			t.Errorf("out-of-scope record %s: %v", p, err)
		}
	}
	if rep, err := x.ReconcileIn(nil, nil); err != nil || rep.Changed() {
		t.Errorf("no scopes: %+v %v", rep, err)
	}
	if _, err := x.ReconcileIn([]string{"../x"}, nil); index.KindOf(err) != index.KindInvalid {
		t.Errorf("invalid scope: %v", err)
	}
	if _, err := x.Get("ab.txt"); err != nil {
		t.Errorf("invalid scope changed something: %v", err)
	}
}

// A host's write right after a touch through the core is seen even when its
// mtime is no later than the touch's time: a kernel stamps files from a clock
// that ticks every few milliseconds, and the core reads the time of a touch
// from a finer one. The touch (Change.Left) records the state it left the
// file in, and the next Reconcile compares the file with that state.
func TestReconcileSeesHostWriteInTheTickOfATouch(t *testing.T) {
	x := openIndex(t, t.TempDir(), index.Options{})
	mustCreate(t, x, "t.txt", "", 7)
	left := index.Left{Size: 3, ModTime: t0.Add(10 * time.Millisecond)}
	if _, err := x.Reconcile([]index.FileState{{Path: "t.txt", Ino: 7, Size: 3, ModTime: t0}}); err != nil {
		t.Fatal(err)
	}
	touch := func(l *index.Left) {
		t.Helper()
		if n, err := x.Apply([]index.Change{{Op: index.OpTouch, Path: "t.txt", At: left.ModTime.Add(time.Millisecond), Left: l}}); err != nil || n != 0 {
			t.Fatalf("touch: %d skipped, %v", n, err)
		}
	}
	touch(&left)
	// As the touch left it (its own IN_ATTRIB, followed): nothing changed.
	rep, err := x.ReconcileIn([]string{"t.txt"}, []index.FileState{{Path: "t.txt", Ino: 7, Size: left.Size, ModTime: left.ModTime}})
	if err != nil || rep.Changed() {
		t.Fatalf("the touch's own state: %+v %v", rep, err)
	}
	// A host appends within the clock's tick: a new size, the same mtime.
	touch(&left)
	rep, err = x.ReconcileIn([]string{"t.txt"}, []index.FileState{{Path: "t.txt", Ino: 7, Size: 8, ModTime: left.ModTime}})
	if err != nil || !reflect.DeepEqual(rep.Updated, []string{"t.txt"}) {
		t.Fatalf("a host write stamped in the touch's tick: %+v %v, want t.txt updated", rep, err)
	}
	// A touch whose state is not known falls back to its time.
	touch(nil)
	rep, err = x.ReconcileIn([]string{"t.txt"}, []index.FileState{{Path: "t.txt", Ino: 7, Size: 8, ModTime: left.ModTime.Add(time.Second)}})
	if err != nil || !reflect.DeepEqual(rep.Updated, []string{"t.txt"}) {
		t.Fatalf("a later host write after a touch of unknown state: %+v %v", rep, err)
	}
}
