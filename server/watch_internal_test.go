package server

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

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

// A queue overflow makes the next batch a full rescan: the kernel dropped
// events, so any path may have changed. (A real overflow needs more events
// than fs.inotify.max_queued_events, a system-wide setting; the event is
// handed to the loop's handler as the kernel would deliver it.)
func TestOverflowRescansEverything(t *testing.T) {
	dir := t.TempDir()
	f, err := New(dir, Options{Logger: slog.New(slog.DiscardHandler), BackingCheck: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
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
