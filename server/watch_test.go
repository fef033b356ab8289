package server_test

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/semfs/semfs/integration/require"
	"github.com/semfs/semfs/server"
	"golang.org/x/sys/unix"
)

// watchFixture is an FS over a temporary directory with a Watcher whose
// FollowFunc hands each batch's scopes to the test.
type watchFixture struct {
	dir     string
	fs      *server.FS
	w       *server.Watcher
	batches chan []string
}

func newWatchFixture(t *testing.T, opts server.WatchOptions, dirs ...string) *watchFixture {
	t.Helper()
	f := newHeldWatchFixture(t, opts, dirs...)
	f.w.Run()
	return f
}

// newHeldWatchFixture is newWatchFixture with the Watcher not running yet:
// its events wait unread in the kernel's queue, where inotify merges
// identical ones, until the test calls f.w.Run.
func newHeldWatchFixture(t *testing.T, opts server.WatchOptions, dirs ...string) *watchFixture {
	t.Helper()
	f := &watchFixture{dir: t.TempDir(), batches: make(chan []string, 1024)}
	for _, d := range dirs {
		if err := os.MkdirAll(filepath.Join(f.dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var err error
	if f.fs, err = server.New(f.dir, server.Options{Logger: slog.New(slog.DiscardHandler), BackingCheck: -1}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.fs.Close() })
	opts.Logger = slog.New(slog.DiscardHandler)
	if f.w, err = f.fs.Watch(opts, func(_ context.Context, scopes []string) error {
		f.batches <- slices.Clone(scopes)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.w.Close)
	return f
}

// write creates or rewrites a file as a host process would, making its
// directories.
func (f *watchFixture) write(t *testing.T, p string) {
	t.Helper()
	full := filepath.Join(f.dir, p)
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(full, []byte(p), 0o644); err != nil {
		t.Fatal(err)
	}
}

// covers reports whether one of scopes is p or one of its ancestors.
func covers(scopes []string, p string) bool {
	for _, s := range scopes {
		if s == "" || s == p || strings.HasPrefix(p, s+"/") {
			return true
		}
	}
	return false
}

// waitCovered waits for a batch covering every path in want (all in one
// batch); 10 s is a failure bound, not an expectation.
func (f *watchFixture) waitCovered(t *testing.T, want ...string) []string {
	t.Helper()
	bound := time.After(10 * time.Second)
	for {
		select {
		case scopes := <-f.batches:
			ok := true
			for _, p := range want {
				ok = ok && covers(scopes, p)
			}
			if ok {
				return scopes
			}
		case <-bound:
			t.Fatalf("no batch covering %q within 10s", want)
		}
	}
}

func TestWatchFollowsHostChanges(t *testing.T) {
	f := newWatchFixture(t, server.WatchOptions{Quiet: 10 * time.Millisecond}, "old/deep")
	if f.w.Mode() != server.WatchInotify || f.w.Stats().Watches != 3 {
		t.Fatalf("mode %s, stats %+v; want inotify on 3 directories", f.w.Mode(), f.w.Stats())
	}

	f.write(t, "a.txt")
	f.waitCovered(t, "a.txt")

	// A directory tree made at once: whatever was inside before its watch
	// was added is covered by the directory's own scope.
	f.write(t, "n/m/f.txt")
	f.waitCovered(t, "n/m/f.txt")
	// ... and the new directories are watched from then on.
	f.write(t, "n/m/g.txt")
	if s := f.waitCovered(t, "n/m/g.txt"); covers(s, "n") && !slices.Contains(s, "n/m/g.txt") && !slices.Contains(s, "n/m") {
		t.Errorf("a later change in a new directory came as %q: its directory is not watched", s)
	}

	// A directory renamed: both names in one batch, so the index can follow
	// its files by identity; its watches follow it.
	if err := os.Rename(filepath.Join(f.dir, "old"), filepath.Join(f.dir, "new")); err != nil {
		t.Fatal(err)
	}
	f.waitCovered(t, "old", "new")
	f.write(t, "new/deep/x.txt")
	if s := f.waitCovered(t, "new/deep/x.txt"); !slices.Contains(s, "new/deep/x.txt") {
		t.Errorf("a change below a renamed directory came as %q, want its own path", s)
	}

	// A file moved between directories: both names in one batch.
	if err := os.Rename(filepath.Join(f.dir, "a.txt"), filepath.Join(f.dir, "new/deep/a.txt")); err != nil {
		t.Fatal(err)
	}
	f.waitCovered(t, "a.txt", "new/deep/a.txt")

	if err := os.RemoveAll(filepath.Join(f.dir, "n")); err != nil {
		t.Fatal(err)
	}
	f.waitCovered(t, "n")
	if st := f.w.Stats(); st.Watches != 3 || st.Rescans != 0 {
		t.Errorf("after removing n/ and n/m/: %+v, want 3 watches (root, new, new/deep) and no rescan", st)
	}
}

// A directory moved out of the tree takes its watch with it: later changes
// inside it are not the backing directory's.
func TestWatchDropsDirectoriesMovedOut(t *testing.T) {
	f := newWatchFixture(t, server.WatchOptions{Quiet: 10 * time.Millisecond}, "d")
	outside := filepath.Join(t.TempDir(), "d")
	if err := os.Rename(filepath.Join(f.dir, "d"), outside); err != nil {
		t.Fatal(err)
	}
	f.waitCovered(t, "d")
	if err := os.WriteFile(filepath.Join(outside, "x"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	f.write(t, "marker")
	s := f.waitCovered(t, "marker")
	if covers(s, "d/x") || covers(s, "x") {
		t.Errorf("a change outside the tree was reported: %q", s)
	}
	if st := f.w.Stats(); st.Watches != 1 {
		t.Errorf("watches %d, want 1 (the root)", st.Watches)
	}
}

// Past the watch limit the Watcher says so and rescans the whole directory
// periodically instead.
func TestWatchFallsBackToRescans(t *testing.T) {
	f := newWatchFixture(t, server.WatchOptions{MaxWatches: 2, Rescan: 20 * time.Millisecond}, "a", "b")
	if f.w.Mode() != server.WatchScan {
		t.Fatalf("mode %s with 3 directories and 2 watches allowed, want scan", f.w.Mode())
	}
	if s := f.waitCovered(t, "anything"); !slices.Equal(s, []string{""}) {
		t.Errorf("rescan scopes %q, want the whole directory", s)
	}
}

func TestWatchOffAndBadMode(t *testing.T) {
	f := newWatchFixture(t, server.WatchOptions{Mode: server.WatchOff})
	if f.w.Mode() != server.WatchOff || f.w.Stats().Watches != 0 {
		t.Errorf("off: %+v", f.w.Stats())
	}
	if _, err := f.fs.Watch(server.WatchOptions{Mode: "fanotify"}, nil); server.KindOf(err) != server.KindInvalid {
		t.Errorf("unknown mode: %v, want KindInvalid", err)
	}
}

// BenchmarkWatchSetup watches a tree of 5,051 directories (the shape of the
// 100,000-file benchmark in integration/bench, without the files, which cost
// no watch): time to add the watches and the Go heap the Watcher keeps.
//
//	go test ./server/ -run '^$' -bench WatchSetup -benchtime 3x
func BenchmarkWatchSetup(b *testing.B) {
	dir := b.TempDir()
	for a := 0; a < 50; a++ {
		for d := 0; d < 100; d++ {
			if err := os.MkdirAll(filepath.Join(dir, "app"+strconv.Itoa(a), "d"+strconv.Itoa(d)), 0o755); err != nil {
				b.Fatal(err)
			}
		}
	}
	fsys, err := server.New(dir, server.Options{Logger: slog.New(slog.DiscardHandler), BackingCheck: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer fsys.Close()
	var heap uint64
	for i := 0; i < b.N; i++ {
		var m0, m1 runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m0)
		w, err := fsys.Watch(server.WatchOptions{}, func(context.Context, []string) error { return nil })
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&m1)
		if st := w.Stats(); st.Watches != 5051 || st.Mode != server.WatchInotify {
			b.Fatalf("%+v", st)
		}
		heap = m1.HeapAlloc - m0.HeapAlloc
		w.Close()
	}
	b.ReportMetric(float64(heap)/5051, "heap-B/watch")
}

// A batch whose FollowFunc fails is kept and handed over again on its own,
// with no further change needed.
func TestWatchRetriesFailedBatch(t *testing.T) {
	dir := t.TempDir()
	fsys, err := server.New(dir, server.Options{Logger: slog.New(slog.DiscardHandler), BackingCheck: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close()
	calls := make(chan []string, 8)
	n := 0
	w, err := fsys.Watch(server.WatchOptions{Quiet: 10 * time.Millisecond, MaxDelay: 20 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)},
		func(_ context.Context, s []string) error {
			calls <- slices.Clone(s)
			if n++; n == 1 {
				return errors.New("index briefly unavailable")
			}
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	w.Run()
	if err := os.WriteFile(filepath.Join(dir, "f"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		select {
		case s := <-calls:
			if !covers(s, "f") {
				t.Fatalf("call %d: scopes %q, want f", i+1, s)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("call %d never came (the failed batch was not retried)", i+1)
		}
	}
	if st := w.Stats(); st.Errors != 1 || st.Batches != 2 {
		t.Errorf("stats %+v, want 1 error in 2 batches", st)
	}
}

// The core's own creates are not read back (the change stream told the index),
// but a host's write to such a file right after, or a host's create at a path
// the core created before, is still followed.
func TestWatchSkipsOwnCreatesButNotHostChanges(t *testing.T) {
	f := newWatchFixture(t, server.WatchOptions{Quiet: 10 * time.Millisecond}, "d")
	ctx := context.Background()
	create := func(p string) {
		t.Helper()
		file, created, err := f.fs.Create(ctx, p, 0o644, true)
		if err != nil || !created {
			t.Fatalf("create %s: %v (created %v)", p, err, created)
		}
		// Keep it open, as the NFS descriptor cache does: closing a written
		// file is an IN_CLOSE_WRITE, which is followed.
		t.Cleanup(func() { file.Close() })
	}
	var seen [][]string
	// waitFor collects batches until one covers p.
	waitFor := func(p string) {
		t.Helper()
		seen = append(seen, f.waitBatches(t, p)...)
	}
	coveredBy := func(p string) bool { return anyCovers(seen, p) }

	// 1. The core's create alone: a host marker made after it closes the
	// batch that holds (or follows) the create's event.
	create("d/own")
	f.write(t, "d/marker1")
	waitFor("d/marker1")
	if coveredBy("d/own") {
		t.Fatalf("the core's own create was followed: batches %q", seen)
	}

	// 2. A host write to the file the core just created is seen.
	create("d/then-host")
	f.write(t, "d/then-host")
	waitFor("d/then-host")

	// 2b. The same after the core closed its descriptor. (Why the core's
	// own IN_CLOSE_WRITEs cannot be left out the same way: inotify merges
	// the core's and the host's, identical and unread, into one event.)
	file, _, err := f.fs.Create(ctx, "d/closed-then-host", 0o644, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := file.Close(); err != nil {
		t.Fatal(err)
	}
	f.write(t, "d/closed-then-host")
	waitFor("d/closed-then-host")

	// 3. The core creates, the host removes and creates the same name: the
	// host's file is seen even though the core made one there before.
	create("d/replaced")
	if err := os.Remove(filepath.Join(f.dir, "d/replaced")); err != nil {
		t.Fatal(err)
	}
	full := filepath.Join(f.dir, "d/replaced")
	fd, err := os.OpenFile(full, os.O_RDONLY|os.O_CREATE, 0o644) // IN_CREATE only, no write
	if err != nil {
		t.Fatal(err)
	}
	fd.Close()
	waitFor("d/replaced")
}

// waitBatches collects batches until one covers p; 10 s is a failure bound.
func (f *watchFixture) waitBatches(t *testing.T, p string) [][]string {
	t.Helper()
	var seen [][]string
	bound := time.After(10 * time.Second)
	for {
		select {
		case s := <-f.batches:
			seen = append(seen, s)
			if covers(s, p) {
				return seen
			}
		case <-bound:
			t.Fatalf("no batch covering %q within 10s; batches %q", p, seen)
		}
	}
}

func anyCovers(batches [][]string, p string) bool {
	for _, s := range batches {
		if covers(s, p) {
			return true
		}
	}
	return false
}

// writeClose has the core create p, write data through it and close it, as
// an NFS CREATE, WRITE and the descriptor cache's eviction (or a 9P clunk) do.
func (f *watchFixture) writeClose(t *testing.T, p, data string) {
	t.Helper()
	file, created, err := f.fs.Create(context.Background(), p, 0o644, true)
	if err != nil || !created {
		t.Fatalf("create %s: %v (created %v)", p, err, created)
	}
	if _, err := file.WriteAt([]byte(data), 0); err != nil {
		t.Fatal(err)
	}
	if err := file.Close(); err != nil {
		t.Fatal(err)
	}
}

// A file the core made and closed without a write through it (an NFS
// client's empty CREATE, a touch) is the core's own too: each had been
// followed as a host change, a batch under the namespace lock per close. A
// file a host process wrote before the core's close is still followed.
func TestWatchSkipsOwnEmptyCreates(t *testing.T) {
	f := newWatchFixture(t, server.WatchOptions{Quiet: 10 * time.Millisecond}, "d")
	ctx := context.Background()
	for i := range 20 {
		p := "d/empty" + strconv.Itoa(i)
		file, created, err := f.fs.Create(ctx, p, 0o644, true)
		if err != nil || !created {
			t.Fatalf("create %s: %v (created %v)", p, err, created)
		}
		if err := file.Close(); err != nil {
			t.Fatal(err)
		}
	}
	file, _, err := f.fs.Create(ctx, "d/hostwrote", 0o644, true)
	if err != nil {
		t.Fatal(err)
	}
	f.write(t, "d/hostwrote")
	if err := file.Close(); err != nil {
		t.Fatal(err)
	}
	f.write(t, "d/marker")
	seen := f.waitBatches(t, "d/marker")
	for i := range 20 {
		if p := "d/empty" + strconv.Itoa(i); anyCovers(seen, p) {
			t.Fatalf("the core's own create and close of %s was followed: batches %q", p, seen)
		}
	}
	if !anyCovers(seen, "d/hostwrote") {
		t.Fatalf("a host write between the core's create and close was not followed: batches %q", seen)
	}
}

// The core's own writes and closes are not read back: the file is as the
// core left it, and the change stream told the index.
func TestWatchSkipsOwnCloses(t *testing.T) {
	f := newWatchFixture(t, server.WatchOptions{Quiet: 10 * time.Millisecond}, "d")
	for i := range 20 {
		f.writeClose(t, "d/own"+strconv.Itoa(i), "written by the core")
	}
	f.write(t, "d/marker")
	seen := f.waitBatches(t, "d/marker")
	for i := range 20 {
		if p := "d/own" + strconv.Itoa(i); anyCovers(seen, p) {
			t.Fatalf("the core's own write and close of %s was followed: batches %q", p, seen)
		}
	}
	if st := f.w.Stats(); st.Batches != uint64(len(seen)) {
		t.Errorf("stats %+v, %d batches seen", st, len(seen))
	}

	// Two closes of the same file, the second through a descriptor opened on
	// it again, read by the watcher together (held until both are queued: a
	// batch taken between them could take the second close's record with the
	// first close's event, and then follow the second, needlessly).
	h := newHeldWatchFixture(t, server.WatchOptions{Quiet: 10 * time.Millisecond}, "d")
	h.writeClose(t, "d/twice", "written by the core")
	file, err := h.fs.Open(context.Background(), "d/twice", os.O_RDWR)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := file.WriteAt([]byte("again"), 100); err != nil {
		t.Fatal(err)
	}
	if err := file.Close(); err != nil {
		t.Fatal(err)
	}
	h.w.Run()
	h.write(t, "d/marker")
	if seen := h.waitBatches(t, "d/marker"); anyCovers(seen, "d/twice") {
		t.Fatalf("the core's own writes and closes of d/twice were followed: batches %q", seen)
	}
}

// A host's write after the core's close, before the watcher read the core's
// IN_CLOSE_WRITE, is followed: the kernel merges the two identical unread
// events into one, and the file is no longer as the core left it.
func TestWatchFollowsHostWriteAfterOwnClose(t *testing.T) {
	f := newHeldWatchFixture(t, server.WatchOptions{Quiet: 10 * time.Millisecond}, "d")
	f.writeClose(t, "d/f", "written by the core")
	// Another size: on a file system whose ctime does not move within a
	// clock tick, and a write of the same size, following changes nothing
	// (see ownChanges).
	if err := os.WriteFile(filepath.Join(f.dir, "d/f"), []byte("then by a host"), 0o644); err != nil {
		t.Fatal(err)
	}
	f.w.Run()
	f.waitCovered(t, "d/f")

	// The same with the watcher reading: the core's close may be taken on
	// its own, and the host's close comes after.
	f.writeClose(t, "d/g", "written by the core")
	if err := os.WriteFile(filepath.Join(f.dir, "d/g"), []byte("then by a host"), 0o644); err != nil {
		t.Fatal(err)
	}
	f.waitCovered(t, "d/g")
}

// A host's change of the file's inode alone after the core's close (chmod,
// setxattr: IN_ATTRIB, which is not watched) changes its ctime, and is seen
// with the core's IN_CLOSE_WRITE.
func TestWatchFollowsHostAttrChangeAfterOwnClose(t *testing.T) {
	f := newHeldWatchFixture(t, server.WatchOptions{Quiet: 10 * time.Millisecond}, "d")
	f.writeClose(t, "d/mode", "written by the core")
	f.writeClose(t, "d/xattr", "written by the core")
	// On a file system without multigrain timestamps a change within the
	// same clock tick keeps the ctime: change it until it moved (at once on
	// Linux 6.13+ ext4, xfs, btrfs, tmpfs).
	changeCtime := func(p string, change func(full string) error) {
		t.Helper()
		full := filepath.Join(f.dir, p)
		before := ctimeOf(t, full)
		for i := 0; ctimeOf(t, full).Equal(before); i++ {
			if i == 1000 {
				t.Fatalf("%s: ctime still %v", p, before)
			}
			if i > 0 {
				time.Sleep(time.Millisecond)
			}
			if err := change(full); err != nil {
				t.Fatal(err)
			}
		}
	}
	changeCtime("d/mode", func(full string) error { return os.Chmod(full, 0o600) })
	changeCtime("d/xattr", func(full string) error {
		err := unix.Setxattr(full, "user.host", []byte("x"), 0)
		if err == unix.ENOTSUP {
			require.Environment(t, "no user extended attributes here")
		}
		return err
	})
	f.w.Run()
	seen := f.waitBatches(t, "d/mode")
	if !anyCovers(seen, "d/xattr") {
		f.waitCovered(t, "d/xattr")
	}
}

func ctimeOf(t *testing.T, full string) time.Time {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Lstat(full, &st); err != nil {
		t.Fatal(err)
	}
	return time.Unix(st.Ctim.Unix())
}

// The files the core makes in a directory it just made, before the watcher
// read the directory's IN_CREATE and watched it (no events of their own), are
// not read back, neither then nor at their close.
func TestWatchSkipsOwnFilesOfNewDirectory(t *testing.T) {
	f := newHeldWatchFixture(t, server.WatchOptions{Quiet: 10 * time.Millisecond})
	ctx := context.Background()
	for _, d := range []string{"n", "n/sub"} {
		if _, err := f.fs.Mkdir(ctx, d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var open []*server.File
	for _, p := range []string{"n/a", "n/sub/b"} {
		file, created, err := f.fs.Create(ctx, p, 0o644, true)
		if err != nil || !created {
			t.Fatalf("create %s: %v (created %v)", p, err, created)
		}
		if _, err := file.WriteAt([]byte(p), 0); err != nil {
			t.Fatal(err)
		}
		open = append(open, file)
	}
	f.w.Run()
	f.write(t, "marker1")
	seen := f.waitBatches(t, "marker1")
	// Now watched: a create there makes its own events.
	f.writeClose(t, "n/c", "after the watch")
	for _, file := range open {
		if err := file.Close(); err != nil {
			t.Fatal(err)
		}
	}
	f.write(t, "marker2")
	seen = append(seen, f.waitBatches(t, "marker2")...)
	for _, p := range []string{"n/a", "n/sub/b", "n/c"} {
		if anyCovers(seen, p) {
			t.Errorf("the core's own file %s was followed: batches %q", p, seen)
		}
	}
}

// What a host did in a new directory before the watcher watched it is still
// followed: its own files, a write to a file the core closed, a file renamed
// over one the core holds, and a rename or removal of a file the core made
// (the directory is followed as a whole then: the old name has no event).
func TestWatchFollowsHostChangesInNewDirectory(t *testing.T) {
	f := newHeldWatchFixture(t, server.WatchOptions{Quiet: 10 * time.Millisecond})
	ctx := context.Background()
	for _, d := range []string{"k", "r", "m", "h"} {
		if _, err := f.fs.Mkdir(ctx, d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// k: a host's file, and a host's write to a file the core closed.
	f.write(t, "k/host")
	f.writeClose(t, "k/closed", "written by the core")
	if err := os.WriteFile(filepath.Join(f.dir, "k/closed"), []byte("then by a host"), 0o644); err != nil {
		t.Fatal(err)
	}
	// r and m: a file the core holds, renamed or removed by a host.
	for _, p := range []string{"r/x", "m/x", "h/x"} {
		file, _, err := f.fs.Create(ctx, p, 0o644, true)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { file.Close() })
	}
	if err := os.Rename(filepath.Join(f.dir, "r/x"), filepath.Join(f.dir, "r/y")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(f.dir, "m/x")); err != nil {
		t.Fatal(err)
	}
	// h: a host's file renamed over the one the core holds open.
	f.write(t, "h/tmp")
	if err := os.Rename(filepath.Join(f.dir, "h/tmp"), filepath.Join(f.dir, "h/x")); err != nil {
		t.Fatal(err)
	}
	f.w.Run()
	f.write(t, "marker")
	seen := f.waitBatches(t, "marker")
	for _, p := range []string{"k/host", "k/closed", "r/x", "r/y", "m/x", "h/x"} {
		if !anyCovers(seen, p) {
			t.Errorf("%s was not followed: batches %q", p, seen)
		}
	}
	// The host's files are followed each for itself, not with the directory.
	if slices.ContainsFunc(seen, func(s []string) bool { return slices.Contains(s, "k") }) {
		t.Errorf("k was followed as a whole: batches %q", seen)
	}
}
