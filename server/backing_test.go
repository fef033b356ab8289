package server_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/semfs/semfs/server"
	"github.com/semfs/semfs/server/servertest"
)

// logCount is a slog handler counting records whose message holds a word.
type logCount struct {
	mu   sync.Mutex
	msgs []string
}

func (l *logCount) Enabled(context.Context, slog.Level) bool { return true }
func (l *logCount) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.msgs = append(l.msgs, r.Message)
	return nil
}
func (l *logCount) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logCount) WithGroup(string) slog.Handler      { return l }
func (l *logCount) count(word string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, m := range l.msgs {
		if strings.Contains(m, word) {
			n++
		}
	}
	return n
}

// wantGone fails unless err is the backing directory's clean refusal.
func wantGone(t *testing.T, what string, err error) {
	t.Helper()
	if err == nil || !errors.Is(err, server.ErrBackingGone) || server.KindOf(err) != server.KindStale {
		t.Fatalf("%s with the backing directory gone: %v, want KindStale wrapping ErrBackingGone", what, err)
	}
}

// TestBackingRenamedAwayStopsServing: the directory the core holds open is
// renamed away under it. The core must not go on serving it (writes would land
// where no client looks): every operation fails with a clear error, logged once,
// until the same directory is renamed back.
func TestBackingRenamedAwayStopsServing(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "data")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	logs := &logCount{}
	fsys, err := server.New(dir, server.Options{Logger: slog.New(logs), BackingCheck: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close()
	ctx := as("app")
	f, _, err := fsys.Create(ctx, "open.txt", 0o644, false)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt([]byte("before"), 0); err != nil {
		t.Fatal(err)
	}
	if err := fsys.CheckBacking(); err != nil {
		t.Fatalf("healthy directory: %v", err)
	}

	moved := filepath.Join(base, "moved")
	if err := os.Rename(dir, moved); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		wantGone(t, "CheckBacking", fsys.CheckBacking())
	}
	if n := logs.count("moved or removed"); n != 1 {
		t.Fatalf("the failure was logged %d times, want once", n)
	}
	_, err = fsys.Lstat(ctx, "open.txt")
	wantGone(t, "lstat", err)
	_, err = fsys.Lstat(ctx, "")
	wantGone(t, "lstat of the root", err)
	_, err = fsys.ReadDir(ctx, "")
	wantGone(t, "readdir", err)
	_, _, err = fsys.Create(ctx, "new.txt", 0o644, true)
	wantGone(t, "create", err)
	_, _, ok, err := fsys.TryCreate(ctx, "new2.txt", 0o644, true)
	if ok {
		wantGone(t, "trycreate", err)
	}
	_, err = fsys.Mkdir(ctx, "d", 0o755)
	wantGone(t, "mkdir", err)
	wantGone(t, "rename", fsys.Rename(ctx, "open.txt", "x.txt"))
	wantGone(t, "remove", fsys.Remove(ctx, "open.txt", false))
	mode := os.FileMode(0o600)
	_, err = fsys.SetAttr(ctx, "", server.SetAttr{Mode: &mode})
	wantGone(t, "setattr of the root", err)
	_, err = fsys.StatFS(ctx)
	wantGone(t, "statfs", err)
	_, err = f.WriteAt([]byte("after"), 0)
	wantGone(t, "write to an open file", err)
	_, err = f.ReadAt(make([]byte, 4), 0)
	wantGone(t, "read of an open file", err)
	wantGone(t, "sync", f.Sync())

	// Nothing reached the moved directory.
	ents, err := os.ReadDir(moved)
	if err != nil || len(ents) != 1 || ents[0].Name() != "open.txt" {
		t.Fatalf("the moved directory changed: %v %v", ents, err)
	}
	if b, _ := os.ReadFile(filepath.Join(moved, "open.txt")); string(b) != "before" {
		t.Fatalf("the moved directory's file changed: %q", b)
	}

	// The very same directory renamed back: serving resumes.
	if err := os.Rename(moved, dir); err != nil {
		t.Fatal(err)
	}
	if err := fsys.CheckBacking(); err != nil {
		t.Fatalf("the directory is back: %v", err)
	}
	if _, err := fsys.Lstat(ctx, "open.txt"); err != nil {
		t.Fatalf("lstat after the directory came back: %v", err)
	}
	if n := logs.count("serving it again"); n != 1 {
		t.Fatalf("the recovery was logged %d times, want once", n)
	}
}

// TestBackingRemovedOrReplacedIsNotAdopted: a removed directory never comes
// back, and a new directory made at the configured path is not served in its
// place (the index knows nothing of it; a restart reconciles).
func TestBackingRemovedOrReplacedIsNotAdopted(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "data")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	fsys, err := server.New(dir, server.Options{Logger: slog.New(&logCount{}), BackingCheck: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close()
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	wantGone(t, "CheckBacking after removal", fsys.CheckBacking())
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	err = fsys.CheckBacking()
	wantGone(t, "CheckBacking with another directory at the path", err)
	if !strings.Contains(err.Error(), "removed") {
		t.Fatalf("the reason does not say the directory was removed: %v", err)
	}
	_, _, err = fsys.Create(as("app"), "f", 0o644, true)
	wantGone(t, "create", err)
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("the new directory at the path was written to: %v", ents)
	}
}

// TestBackingCheckedInBackground: no health request needed; the core notices on
// its own within a few check periods.
func TestBackingCheckedInBackground(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "data")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	fsys, err := server.New(dir, server.Options{Logger: slog.New(&logCount{}), BackingCheck: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close()
	if err := os.Rename(dir, filepath.Join(base, "elsewhere")); err != nil {
		t.Fatal(err)
	}
	servertest.WaitFor(t, "the background check to notice the directory was renamed away", func() bool {
		_, err = fsys.ReadDir(context.Background(), "")
		return err != nil
	})
	wantGone(t, "readdir", err)
}

// TestNewNamesMustBeUTF8: a name that is not UTF-8 could never be tagged (the
// tag API is JSON), so the core refuses to make one, by every way of making a
// name; names a host tool made stay usable.
func TestNewNamesMustBeUTF8(t *testing.T) {
	f := newFixture(t)
	ctx := as("app")
	bad := "bad-\xff\xfe.txt"
	if err := os.WriteFile(filepath.Join(f.dir, "ok.txt"), []byte("ok"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(f.dir, "dir-\xff"), 0o755); err != nil {
		t.Fatal(err)
	}
	wantInvalid := func(what string, err error) {
		t.Helper()
		if server.KindOf(errOr(err)) != server.KindInvalid || !strings.Contains(errOr(err).Error(), "UTF-8") {
			t.Fatalf("%s: %v, want KindInvalid naming UTF-8", what, err)
		}
	}
	_, _, err := f.fs.Create(ctx, bad, 0o644, true)
	wantInvalid("create", err)
	_, _, err = f.fs.Create(ctx, bad, 0o644, false)
	wantInvalid("create (not exclusive)", err)
	_, _, ok, err := f.fs.TryCreate(ctx, bad, 0o644, true)
	if !ok {
		t.Fatal("TryCreate did not run on an idle FS")
	}
	wantInvalid("trycreate", err)
	_, _, _, err = f.fs.TryCreate(ctx, "dir-\xff/inside.txt", 0o644, true)
	wantInvalid("trycreate inside a non-UTF-8 directory", err)
	_, err = f.fs.Mkdir(ctx, bad, 0o755)
	wantInvalid("mkdir", err)
	_, err = f.fs.Symlink(ctx, "ok.txt", bad)
	wantInvalid("symlink", err)
	_, err = f.fs.Mkfifo(ctx, bad, 0o644)
	wantInvalid("mknod", err)
	_, err = f.fs.Link(ctx, "ok.txt", bad)
	wantInvalid("link", err)
	wantInvalid("rename", f.fs.Rename(ctx, "ok.txt", bad))
	wantInvalid("rename into a non-UTF-8 directory", f.fs.Rename(ctx, "ok.txt", "dir-\xff/ok.txt"))
	ents, _ := os.ReadDir(f.dir)
	if len(ents) != 2 {
		t.Fatalf("a refused create left something: %v", ents)
	}
	if len(f.rec.all()) != 0 {
		t.Fatalf("a refused create reached the index: %v", f.rec.all())
	}

	// A name a host tool made: listed, read, renamed to a UTF-8 name, removed.
	if err := os.WriteFile(filepath.Join(f.dir, bad), []byte("host"), 0o644); err != nil {
		t.Fatal(err)
	}
	list, err := f.fs.ReadDir(ctx, "")
	if err != nil || len(list) != 3 {
		t.Fatalf("readdir with a host-made name: %v %v", list, err)
	}
	fl, err := f.fs.Open(ctx, bad, os.O_RDONLY)
	if err != nil {
		t.Fatalf("open of a host-made name: %v", err)
	}
	b := make([]byte, 4)
	if n, err := fl.ReadAt(b, 0); (err != nil && err != io.EOF) || string(b[:n]) != "host" {
		t.Fatalf("read of a host-made name: %q %v", b[:n], err)
	}
	fl.Close()
	if err := f.fs.Rename(ctx, bad, "fixed.txt"); err != nil {
		t.Fatalf("rename of a host-made name to a UTF-8 name: %v", err)
	}
	if err := f.fs.Rename(ctx, "dir-\xff", "dir-fixed"); err != nil {
		t.Fatalf("rename of a host-made directory to a UTF-8 name: %v", err)
	}
	if err := f.fs.Remove(ctx, "fixed.txt", false); err != nil {
		t.Fatalf("remove: %v", err)
	}
	f.checkOutside(t)
}

// errOr keeps KindOf from seeing nil.
func errOr(err error) error {
	if err == nil {
		return errors.New("no error")
	}
	return err
}
