package feed_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/semfs/semfs/server"
	"github.com/semfs/semfs/server/feed"
)

func lines(evs []feed.Event) string {
	var out []string
	for _, e := range evs {
		s := e.Op + " " + e.Path
		if e.From != "" {
			s += " <- " + e.From
		}
		out = append(out, s)
	}
	return strings.Join(out, ", ")
}

// HostDirs turns what looks at the backing directory found into directory
// events: a directory moved with its parent is the parent's one rename,
// removals come children first, and a list not yet known makes none.
func TestHostDirsEvents(t *testing.T) {
	h := feed.NewHostDirs()
	tree := map[string]uint64{"a": 1, "a/b": 2, "a/b/c": 3, "x": 4}
	if evs := h.Events(feed.HostLook{Scopes: []string{"a"}, Dirs: tree}); len(evs) != 0 {
		t.Fatalf("a list not yet known made events: %s", lines(evs))
	}
	if evs := h.Events(feed.HostLook{Scopes: []string{""}, Dirs: tree}); len(evs) != 0 {
		t.Fatalf("the first whole look made events: %s", lines(evs))
	}
	for _, c := range []struct {
		name   string
		scopes []string
		dirs   map[string]uint64
		look   feed.HostLook
		want   string
	}{
		{"mkdir -p", []string{"n"}, map[string]uint64{"n": 5, "n/m": 6}, feed.HostLook{}, "mkdir n, mkdir n/m"},
		{"mv a z, with its files", []string{"a", "z"}, map[string]uint64{"z": 1, "z/b": 2, "z/b/c": 3},
			feed.HostLook{Renamed: []feed.Move{{From: "a/b/f", To: "z/b/f"}, {From: "a/g", To: "q/g"}}},
			"rename z <- a, rename q/g <- a/g"},
		{"rm -r z", []string{"z"}, nil, feed.HostLook{Removed: []string{"z/b/f", "z/f2"}},
			"remove z/f2, remove z/b/f, remove z/b/c, remove z/b, remove z"},
		{"the same path, another directory", []string{"x"}, map[string]uint64{"x": 9}, feed.HostLook{Removed: []string{"x/f"}}, "remove x/f, remove x, mkdir x"},
		{"files", []string{""}, map[string]uint64{"n": 5, "n/m": 6, "x": 9},
			feed.HostLook{Created: []feed.HostFile{{Path: "l", Link: true}, {Path: "s", Type: server.TypeSymlink}, {Path: "f"}},
				Updated: []feed.HostFile{{Path: "w"}, {Path: "t", Trunc: true}, {Path: "o"}}, Over: []feed.Move{{From: "d", To: "o"}},
				Removed: []string{"d"}, Chmod: []feed.HostFile{{Path: "m"}}},
			"rename o <- d, link l, symlink s, create f, write w, truncate t, setattr m"},
	} {
		c.look.Scopes, c.look.Dirs = c.scopes, c.dirs
		if got := lines(h.Events(c.look)); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}

	// The core's changes keep the list in step: no event for what the core
	// did, once a look finds it so.
	h.Apply(server.Change{Op: server.ChangeMkdir, Path: "k"}, 10)
	h.Apply(server.Change{Op: server.ChangeMkdir, Path: "k/j"}, 11)
	h.Apply(server.Change{Op: server.ChangeRename, Path: "k", NewPath: "r", IsDir: true}, 0)
	h.Apply(server.Change{Op: server.ChangeRemove, Path: "n/m", IsDir: true}, 0)
	if evs := h.Events(feed.HostLook{Scopes: []string{""}, Dirs: map[string]uint64{"n": 5, "x": 9, "r": 10, "r/j": 11}}); len(evs) != 0 {
		t.Fatalf("the core's own changes made events: %s", lines(evs))
	}

	// Saved at a stop and loaded at the next start, the list tells what
	// changed meanwhile; a second load finds nothing (Load removes it).
	file := filepath.Join(t.TempDir(), feed.DirsFileName)
	if err := h.Save(file); err != nil {
		t.Fatal(err)
	}
	h2 := feed.NewHostDirs()
	if err := h2.Load(file); err != nil {
		t.Fatal(err)
	}
	if got := lines(h2.Events(feed.HostLook{Scopes: []string{""}, Dirs: map[string]uint64{"n": 5, "r2": 10, "r2/j": 11, "new \"dir\"\n": 12}})); got != "mkdir new \"dir\"\n, rename r2 <- r, remove x" {
		t.Errorf("after a restart: %s", got)
	}
	if err := feed.NewHostDirs().Load(file); err == nil {
		t.Error("a list loaded twice")
	}
}
