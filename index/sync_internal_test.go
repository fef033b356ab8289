package index

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/tidwall/buntdb"
)

// Apply (the change stream: creates, touches, renames, removals, each also
// durable outside the index) leaves records.db unsynced; Bleve learns a
// generation only after records.db holds it on disk, so a power cut can leave
// Bleve behind records.db (rebuilt at Open) but never ahead of it (damage).
func TestApplyDefersSyncUntilBleveLearnsTheGeneration(t *testing.T) {
	dir := t.TempDir()
	x, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	policy := func() buntdb.SyncPolicy {
		var cfg buntdb.Config
		if err := x.db.ReadConfig(&cfg); err != nil {
			t.Fatal(err)
		}
		return cfg.SyncPolicy
	}
	apply := func(paths ...string) { applyCreates(t, x, 1, paths...) }
	apply("a/one.md", "a/two.md")
	if !x.unsynced || x.syncs != 0 {
		t.Fatalf("after Apply: unsynced %v, syncs %d; want an unsynced commit", x.unsynced, x.syncs)
	}
	if p := policy(); p != buntdb.Always {
		t.Fatalf("sync policy after Apply: %v, want Always for every other write", p)
	}
	// A synced write flushes the file, the earlier apply with it.
	if err := x.Create("b/three.md", "", 3, time.Unix(2, 0)); err != nil {
		t.Fatal(err)
	}
	if x.unsynced {
		t.Fatal("a synced Create left records.db marked unsynced")
	}
	apply("c/four.md")
	res, err := x.Query(context.Background(), Query{Text: "four"})
	if err != nil || len(res) != 1 {
		t.Fatalf("query: %v %v", res, err)
	}
	if x.unsynced || x.syncs != 1 {
		t.Fatalf("after the Bleve batch: unsynced %v, syncs %d; want one sync first", x.unsynced, x.syncs)
	}
	v, err := x.bl.GetInternal([]byte(bleveGen))
	if err != nil || string(v) != strconv.FormatUint(x.gen, 10) {
		t.Fatalf("Bleve's generation %q (%v), records.db's %d", v, err, x.gen)
	}
	apply("d/five.md")
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	y, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer y.Close()
	if d := y.Damage(); d.Records != "" || d.Bleve != "" {
		t.Fatalf("reopened after unsynced applies: damage %+v", d)
	}
	for _, p := range []string{"a/one.md", "a/two.md", "b/three.md", "c/four.md", "d/five.md"} {
		if _, err := y.Get(p); err != nil {
			t.Errorf("%s after reopen: %v", p, err)
		}
	}
}

// applyCreates applies the creation of paths by "editor" as one change-stream
// batch, their inode numbers counting from ino.
func applyCreates(t testing.TB, x *Index, ino uint64, paths ...string) {
	t.Helper()
	cs := make([]Change, 0, len(paths))
	for i, p := range paths {
		cs = append(cs, Change{Op: OpCreate, Path: p, CreatedBy: "editor", Ino: ino + uint64(i), At: time.Unix(1, 0)})
	}
	if _, err := x.Apply(cs); err != nil {
		t.Fatal(err)
	}
}
