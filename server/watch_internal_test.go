package server

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestScopeList(t *testing.T) {
	got := scopeList(map[string]bool{"a": true, "a b": true, "a/x": true, "a/x/y": true, "b/c": true, "ab": true, "b/c d": true})
	want := []string{"a", "a b", "ab", "b/c", "b/c d"}
	if !slices.Equal(got, want) {
		t.Errorf("scopeList = %q, want %q", got, want)
	}
	// The root ("") covers every other path.
	if got := scopeList(map[string]bool{"": true, "a": true, "b/c": true}); !slices.Equal(got, []string{""}) {
		t.Errorf("scopeList with the root = %q, want only the root", got)
	}
}

// quietFS is a core over dir that logs nothing and skips the backing check,
// closed when the test ends.
func quietFS(t *testing.T, dir string) *FS {
	t.Helper()
	f, err := New(dir, Options{Logger: slog.New(slog.DiscardHandler), BackingCheck: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// A queue overflow makes the next batch a full rescan: the kernel dropped
// events, so any path may have changed. (A real overflow needs more events
// than fs.inotify.max_queued_events, a system-wide setting; the event is
// handed to the loop's handler as the kernel would deliver it.)
func TestOverflowRescansEverything(t *testing.T) {
	dir := t.TempDir()
	f := quietFS(t, dir)
	got := make(chan []string, 1)
	w, err := f.Watch(WatchOptions{Logger: slog.New(slog.DiscardHandler)}, func(_ context.Context, s []string) error {
		got <- s
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	b := newBatch()
	w.handle(b, inotifyEvent{wd: w.paths[""], mask: unix.IN_CREATE, name: "a"})
	w.handle(b, inotifyEvent{wd: -1, mask: unix.IN_Q_OVERFLOW})
	w.fire(b)
	if s := <-got; !slices.Equal(s, []string{""}) {
		t.Errorf("after an overflow: scopes %q, want the whole directory", s)
	}
	if st := w.Stats(); st.Overflows != 1 || st.Rescans != 1 {
		t.Errorf("stats %+v", st)
	}
	if !b.empty() {
		t.Errorf("the batch was not reset after a successful call")
	}
}

// underAny (dropUnder's walk up a path) answers as a test of Within against
// every scope, on generated paths and scope sets.
func TestUnderAnyIsWithinOfAny(t *testing.T) {
	names := []string{"a", "b", "ab", "a.b", "a b"}
	rng := rand.New(rand.NewPCG(1, 2))
	gen := func() string {
		parts := make([]string, 1+rng.IntN(4))
		for i := range parts {
			parts[i] = names[rng.IntN(len(names))]
		}
		return strings.Join(parts, "/")
	}
	for range 2000 {
		var scopes []string
		set := map[string]bool{}
		for range rng.IntN(5) {
			s := gen()
			if rng.IntN(20) == 0 {
				s = ""
			}
			scopes = append(scopes, s)
			set[s] = true
		}
		p := gen()
		want := slices.ContainsFunc(scopes, func(s string) bool { return Within(p, s) })
		if got := underAny(set, p); got != want {
			t.Fatalf("underAny(%q, %q) = %v, Within of any says %v", scopes, p, got, want)
		}
	}
}

// The IN_ATTRIB of the core's create (its durable record, its chown) may
// come in the batch after its IN_CREATE: a batch reads its events, then
// waits for the namespace lock the create holds, so the create's later
// events fall into the next batch (seen under load in
// TestChangesTenThousandCreatesInPages: one batch of 10,000 own creates was
// followed). It is still the core's own while the file's mode and ctime are
// as the create left them, and is followed once a host changed either.
func TestOwnCreateAttribInALaterBatch(t *testing.T) {
	dir := t.TempDir()
	f := quietFS(t, dir)
	ctx := context.Background()
	batchOf := func(e pathEvents) *batch {
		b := newBatch()
		b.dirty["a"], b.events["a"] = true, e
		return b
	}
	for _, c := range []struct {
		name     string
		host     func() error // after the create's batch
		followed bool
	}{
		{"nothing", func() error { return nil }, false},
		{"chmod", func() error { return os.Chmod(filepath.Join(dir, "a"), 0o600) }, true},
		{"touch", func() error {
			return os.Chtimes(filepath.Join(dir, "a"), time.Unix(1, 0), time.Unix(1, 0))
		}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := os.WriteFile(filepath.Join(dir, "a"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			a, err := f.Lstat(ctx, "a")
			if err != nil {
				t.Fatal(err)
			}
			o := newOwnChanges()
			o.add("a")
			o.created("a", UnixPerm(a.Mode), a.Ctime)
			stale := time.Now().Add(-ownTTL)
			b := batchOf(pathEvents{creates: 1})
			same, chmodded := o.look(f, b)
			o.skipOwn(b, same, chmodded, stale)
			if len(b.dirty) != 0 {
				t.Fatalf("the create's own IN_CREATE was followed")
			}
			if err := c.host(); err != nil {
				t.Fatal(err)
			}
			b = batchOf(pathEvents{attrib: true})
			same, chmodded = o.look(f, b)
			o.skipOwn(b, same, chmodded, stale)
			if got := len(b.dirty) != 0; got != c.followed {
				t.Errorf("its IN_ATTRIB in the next batch: followed %v, want %v", got, c.followed)
			}
			os.Remove(filepath.Join(dir, "a"))
		})
	}
}

// A write burst's ChangeWrite carries the size the close after its last write
// found (the stat the close makes for the Watcher), so that the change feed
// need not stat the file again; a write between that stat and the burst's
// send leaves the size unknown, and without a Watcher no close looks.
func TestChangeWriteSizedByClose(t *testing.T) {
	ctx := context.Background()
	for _, watched := range []bool{true, false} {
		dir := t.TempDir()
		var mu sync.Mutex
		var writes []Change
		f, err := New(dir, Options{Logger: slog.New(slog.DiscardHandler), BackingCheck: -1, WriteQuiet: time.Hour,
			Sink: SinkFunc(func(_ context.Context, c Change) error {
				if c.Op == ChangeWrite {
					mu.Lock()
					writes = append(writes, c)
					mu.Unlock()
				}
				return nil
			})})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		if watched {
			w, err := f.Watch(WatchOptions{Logger: slog.New(slog.DiscardHandler)}, func(context.Context, []string) error { return nil })
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(w.Close)
		}
		last := func() Change {
			mu.Lock()
			defer mu.Unlock()
			if len(writes) == 0 {
				t.Fatal("no ChangeWrite")
			}
			return writes[len(writes)-1]
		}
		write := func(fl *File, b string, off int64) {
			if _, err := fl.WriteAt([]byte(b), off); err != nil {
				t.Fatal(err)
			}
		}

		// Close: one handle.
		a, _, err := f.Create(ctx, "a", 0o644, false)
		if err != nil {
			t.Fatal(err)
		}
		write(a, "hello", 0)
		if err := a.Close(); err != nil {
			t.Fatal(err)
		}
		if c := last(); c.Path != "a" || c.Sized != watched || watched && c.Size != 5 {
			t.Errorf("watched %v: Close's %+v, want sized %v size 5", watched, c, watched)
		}

		// TryClose, after a second handle's write the first one's close sees.
		b, _, err := f.Create(ctx, "b", 0o644, false)
		if err != nil {
			t.Fatal(err)
		}
		b2, err := f.Open(ctx, "b", os.O_RDWR)
		if err != nil {
			t.Fatal(err)
		}
		write(b, "abc", 0)
		write(b2, "0123456789", 100)
		if ok, err := b.TryClose(); !ok || err != nil {
			t.Fatalf("TryClose: %v %v", ok, err)
		}
		if c := last(); c.Path != "b" || c.Sized != watched || watched && c.Size != 110 {
			t.Errorf("watched %v: TryClose's %+v, want sized %v size 110", watched, c, watched)
		}
		if err := b2.Close(); err != nil { // nothing written since: no burst
			t.Fatal(err)
		}
	}

	// A write after the close's stat, before the send: not sized.
	q := newTouchQueue(time.Hour, func(string, touch) {})
	defer q.close()
	q.add("p", "app")
	m := q.mark("p")
	q.add("p", "app")
	q.sized("p", m, 3)
	if t1 := q.take(func(k string, _ time.Time) bool { return k == "p" })["p"]; t1.sized {
		t.Errorf("a size stat'ed before the burst's last write was kept: %+v", t1)
	}
	q.add("p", "app")
	q.sized("p", q.mark("p"), 4)
	if t2 := q.take(func(k string, _ time.Time) bool { return k == "p" })["p"]; !t2.sized || t2.size != 4 {
		t.Errorf("the size stat'ed after the last write: %+v", t2)
	}
	q.sized("gone", 0, 1) // nothing pending: nothing to note
}
