package index

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
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
	if !x.unsynced || x.syncs.Load() != 0 {
		t.Fatalf("after Apply: unsynced %v, syncs %d; want an unsynced commit", x.unsynced, x.syncs.Load())
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
	if x.unsynced || x.syncs.Load() != 1 {
		t.Fatalf("after the Bleve batch: unsynced %v, syncs %d; want one sync first", x.unsynced, x.syncs.Load())
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

// TestBleveBatchSyncLeavesTheIndexOpen: the records.db sync a Bleve batch
// needs first is made without the index's lock, so writes (an NFS COMMIT's
// apply of its create) and reads go on while it runs, and the batch still
// tells Bleve the generation only after the sync. After buntdb's shrink has
// put a new file in records.db's place, the sync is of the new file.
func TestBleveBatchSyncLeavesTheIndexOpen(t *testing.T) {
	x, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	applyCreates(t, x, 1, "a/one.md")
	inSync, release := make(chan struct{}), make(chan struct{})
	var releaseOnce sync.Once
	letGo := func() { releaseOnce.Do(func() { close(release) }) }
	defer letGo() // before Close (deferred earlier), which waits for the flush
	var calls atomic.Int32
	x.onRecordsSync = func() {
		if calls.Add(1) == 1 { // the first sync only; Close's own goes through
			inSync <- struct{}{}
			<-release
		}
	}
	flushed := make(chan struct{})
	go func() {
		x.flushBleve()
		close(flushed)
	}()
	select {
	case <-inSync:
	case <-time.After(time.Minute): // failure bound only
		t.Fatal("the Bleve flush never synced records.db")
	}
	// Mid-sync: Bleve has not been told the generation yet.
	if v, _ := x.bl.GetInternal([]byte(bleveGen)); string(v) == strconv.FormatUint(x.gen, 10) {
		t.Fatalf("Bleve holds generation %s before records.db was synced", v)
	}
	applied := make(chan error, 1)
	go func() {
		_, err := x.Apply([]Change{{Op: OpCreate, Path: "a/two.md", CreatedBy: "editor", Ino: 2, At: time.Unix(2, 0)}})
		if err == nil {
			_, err = x.Get("a/one.md")
		}
		applied <- err
	}()
	select {
	case err := <-applied:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second): // failure bound only
		t.Fatal("an Apply waited for the Bleve batch's records.db sync")
	}
	letGo()
	<-flushed
	x.onRecordsSync = nil
	if x.syncs.Load() != 1 {
		t.Fatalf("records.db synced %d times, want 1", x.syncs.Load())
	}
	if !x.unsynced {
		t.Fatal("the Apply made during the sync left records.db marked synced")
	}

	// buntdb's shrink renames a rewritten file over records.db: the next
	// sync must be of that file, not of the descriptor's old one.
	if err := x.db.Shrink(); err != nil {
		t.Fatal(err)
	}
	applyCreates(t, x, 3, "a/three.md")
	x.flushBleve()
	have, err := x.recFile.Stat()
	if err != nil {
		t.Fatal(err)
	}
	cur, err := os.Stat(filepath.Join(x.dir, recordsFile))
	if err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(have, cur) {
		t.Fatal("after a shrink, the sync was of the replaced records.db")
	}
	if v, err := x.bl.GetInternal([]byte(bleveGen)); err != nil || string(v) != strconv.FormatUint(x.gen, 10) {
		t.Fatalf("Bleve's generation %q (%v), records.db's %d", v, err, x.gen)
	}
}
