package server

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
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
			o.skipOwn(b, nil, o.chmoddedSinceCreate(f, b), stale)
			if len(b.dirty) != 0 {
				t.Fatalf("the create's own IN_CREATE was followed")
			}
			if err := c.host(); err != nil {
				t.Fatal(err)
			}
			b = batchOf(pathEvents{attrib: true})
			o.skipOwn(b, nil, o.chmoddedSinceCreate(f, b), stale)
			if got := len(b.dirty) != 0; got != c.followed {
				t.Errorf("its IN_ATTRIB in the next batch: followed %v, want %v", got, c.followed)
			}
			os.Remove(filepath.Join(dir, "a"))
		})
	}
}
