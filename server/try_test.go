package server_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/semfs/semfs/server"
)

// gatedSink is a ReadySink whose readiness the test sets, and whose Apply of a
// rename can be held (so that the namespace lock is held meanwhile).
type gatedSink struct {
	recorder
	mu        sync.Mutex
	notReady  bool
	holdMoves chan struct{} // non-nil: Apply of a ChangeRename waits for it to close
	inMove    chan struct{} // closed when such an Apply has started
}

func (g *gatedSink) Ready() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return !g.notReady
}

func (g *gatedSink) setReady(ok bool) {
	g.mu.Lock()
	g.notReady = !ok
	g.mu.Unlock()
}

func (g *gatedSink) Apply(ctx context.Context, c server.Change) error {
	g.mu.Lock()
	hold, in := g.holdMoves, g.inMove
	g.mu.Unlock()
	if c.Op == server.ChangeRename && hold != nil {
		close(in)
		<-hold
	}
	return g.recorder.Apply(ctx, c)
}

func newGated(t *testing.T) (*server.FS, *gatedSink, string) {
	t.Helper()
	dir := t.TempDir()
	sink := &gatedSink{}
	fsys, err := server.New(dir, server.Options{Sink: sink, WriteQuiet: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fsys.Close() })
	return fsys, sink, dir
}

// TestTryCreateAndTryClose: the variants a protocol front end calls from its
// connection's only reader do nothing and say so whenever the real call would
// wait (the sink has no room, a snapshot holds the FS, another namespace change
// is under way), and otherwise do exactly what Create and Close do.
func TestTryCreateAndTryClose(t *testing.T) {
	fsys, sink, dir := newGated(t)
	ctx := as("notes")

	sink.setReady(false)
	if fl, _, ok, err := fsys.TryCreate(ctx, "a", 0o644, true); ok || fl != nil || err != nil {
		t.Fatalf("TryCreate with a full sink: ok=%v file=%v err=%v, want nothing done", ok, fl, err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "a")); !os.IsNotExist(err) {
		t.Fatalf("TryCreate that did not happen left a file: %v", err)
	}
	if n := len(sink.all()); n != 0 {
		t.Fatalf("%d changes sent by a TryCreate that did not happen", n)
	}

	sink.setReady(true)
	fl, created, ok, err := fsys.TryCreate(ctx, "a", 0o644, true)
	if !ok || !created || err != nil {
		t.Fatalf("TryCreate: ok=%v created=%v err=%v", ok, created, err)
	}
	if c, found := sink.find(server.ChangeCreate, "a"); !found || c.App != "notes" {
		t.Fatalf("ChangeCreate for a: %+v found=%v", c, found)
	}
	if _, _, ok, err := fsys.TryCreate(ctx, "a", 0o644, true); !ok || server.KindOf(err) != server.KindExists {
		t.Fatalf("exclusive TryCreate of an existing file: ok=%v err=%v, want KindExists", ok, err)
	}

	// A written file whose update has no room stays open and usable.
	if _, err := fl.WriteAt([]byte("hello"), 0); err != nil {
		t.Fatal(err)
	}
	sink.setReady(false)
	if ok, err := fl.TryClose(); ok || err != nil {
		t.Fatalf("TryClose of a written file with a full sink: ok=%v err=%v", ok, err)
	}
	if _, err := fl.WriteAt([]byte("!"), 5); err != nil {
		t.Fatalf("write after a TryClose that did not happen: %v", err)
	}
	if _, found := sink.find(server.ChangeWrite, "a"); found {
		t.Fatal("ChangeWrite sent by a TryClose that did not happen")
	}
	sink.setReady(true)
	if ok, err := fl.TryClose(); !ok || err != nil {
		t.Fatalf("TryClose: ok=%v err=%v", ok, err)
	}
	if _, found := sink.find(server.ChangeWrite, "a"); !found {
		t.Fatal("TryClose of a written file sent no ChangeWrite")
	}
	if b, err := os.ReadFile(filepath.Join(dir, "a")); err != nil || string(b) != "hello!" {
		t.Fatalf("a = %q, %v", b, err)
	}

	// A file not written has nothing to send: it closes whatever the sink.
	sink.setReady(false)
	ro, err := fsys.Open(ctx, "a", os.O_RDONLY)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := ro.TryClose(); !ok || err != nil {
		t.Fatalf("TryClose of an unwritten file with a full sink: ok=%v err=%v", ok, err)
	}
	sink.setReady(true)

	// A snapshot holds the FS.
	entered, release := make(chan struct{}), make(chan struct{})
	frozen := make(chan error, 1)
	go func() {
		frozen <- fsys.Freeze(context.Background(), func() error { close(entered); <-release; return nil })
	}()
	<-entered
	_, _, ok, err = fsys.TryCreate(ctx, "b", 0o644, true)
	close(release)
	if err := <-frozen; err != nil {
		t.Fatal(err)
	}
	if ok || err != nil {
		t.Fatalf("TryCreate during a snapshot: ok=%v err=%v, want nothing done", ok, err)
	}

	// Another namespace change is under way (its sink call is held).
	w, _, err := fsys.Create(ctx, "c", 0o644, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.WriteAt([]byte("c"), 0); err != nil {
		t.Fatal(err)
	}
	hold, in := make(chan struct{}), make(chan struct{})
	sink.mu.Lock()
	sink.holdMoves, sink.inMove = hold, in
	sink.mu.Unlock()
	moved := make(chan error, 1)
	go func() { moved <- fsys.Rename(ctx, "a", "a2") }()
	<-in
	_, _, okCreate, errCreate := fsys.TryCreate(ctx, "b", 0o644, true)
	okClose, errClose := w.TryClose()
	close(hold)
	if err := <-moved; err != nil {
		t.Fatal(err)
	}
	if okCreate || errCreate != nil || okClose || errClose != nil {
		t.Fatalf("during a rename: TryCreate ok=%v err=%v, TryClose ok=%v err=%v; want nothing done",
			okCreate, errCreate, okClose, errClose)
	}
	if _, err := os.Lstat(filepath.Join(dir, "b")); !os.IsNotExist(err) {
		t.Fatalf("b exists after TryCreates that did not happen: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestBatcherReady: a Batcher says it would wait exactly when its queue is full.
func TestBatcherReady(t *testing.T) {
	block := make(chan struct{})
	started := make(chan struct{}, 1)
	b := server.NewBatcher(func(context.Context, []server.Change) error {
		select {
		case started <- struct{}{}:
		default:
		}
		<-block
		return nil
	}, 2, nil)
	defer b.Close()
	defer close(block)
	ctx := context.Background()
	if !b.Ready() {
		t.Fatal("an empty Batcher is not ready")
	}
	if err := b.Apply(ctx, server.Change{Path: "x"}); err != nil {
		t.Fatal(err)
	}
	<-started // the first change is being applied: the queue is empty again
	for i := range 2 {
		if !b.Ready() {
			t.Fatalf("not ready with %d of 2 queued", i)
		}
		if err := b.Apply(ctx, server.Change{Path: "y"}); err != nil {
			t.Fatal(err)
		}
	}
	if b.Ready() {
		t.Fatal("ready with a full queue")
	}
}
