package server_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/semfs/semfs/server"
)

// A batch tells its FollowFunc which paths' attributes changed
// (server.AttribOf): a directory a host chmodded, with no scope of its own
// (no walk of it), and a file the core created that a host chmodded before
// the watcher read the create's events (the kernel merged them), which is
// followed rather than left out as the core's own create.
func TestWatchHandsOverAttribChanges(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"d", "e"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	fsys, err := server.New(dir, server.Options{Logger: slog.New(slog.DiscardHandler), BackingCheck: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fsys.Close() })
	type batch struct {
		scopes []string
		attrib server.FollowAttrib
	}
	batches := make(chan batch, 64)
	w, err := fsys.Watch(server.WatchOptions{Quiet: 10 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)},
		func(ctx context.Context, scopes []string) error {
			batches <- batch{slices.Clone(scopes), server.AttribOf(ctx)}
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	ctx := context.Background()
	for _, p := range []string{"d/own", "d/chmodded"} {
		file, created, err := fsys.Create(ctx, p, 0o644, true)
		if err != nil || !created {
			t.Fatalf("create %s: %v (created %v)", p, err, created)
		}
		t.Cleanup(func() { file.Close() }) // open, as the NFS descriptor cache holds it: no close event
	}
	if err := os.Chmod(filepath.Join(dir, "d", "chmodded"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(dir, "e"), 0o700); err != nil {
		t.Fatal(err)
	}
	w.Run() // the events were queued unread: the kernel merged what it could

	var got []batch
	bound := time.After(10 * time.Second)
	done := func() bool {
		var file, d bool
		for _, b := range got {
			file = file || b.attrib.Files["d/chmodded"] && slices.Contains(b.scopes, "d/chmodded")
			d = d || slices.Contains(b.attrib.Dirs, "e")
		}
		return file && d
	}
	for !done() {
		select {
		case b := <-batches:
			got = append(got, b)
		case <-bound:
			t.Fatalf("no batch handed over d/chmodded and e within 10s: %+v", got)
		}
	}
	for _, b := range got {
		if slices.Contains(b.scopes, "d/own") || slices.Contains(b.scopes, "e") {
			t.Errorf("a batch followed the core's own create, or walked a directory whose mode alone changed: %+v", b)
		}
	}
}
