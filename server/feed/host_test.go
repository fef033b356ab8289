package feed_test

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

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

// A directory's permission bits, as the core's changes and the looks left
// them, make a setattr when a look or a look at the directory alone
// (Attrib) finds them otherwise; a directory made or moved in the same look
// makes none; the bits survive a Save and Load.
func TestHostDirsModes(t *testing.T) {
	h := feed.NewHostDirs()
	h.Events(feed.HostLook{Scopes: []string{""}, Dirs: map[string]uint64{"a": 1, "b": 2}, Modes: map[string]uint32{"a": 0o755, "b": 0o755}})
	h.Apply(server.Change{Op: server.ChangeMkdir, Path: "c", Mode: 0o700}, 3)
	h.Apply(server.Change{Op: server.ChangeSetMode, Path: "b", IsDir: true, Mode: 0o711}, 0)
	if evs := h.Events(feed.HostLook{Scopes: []string{""}, Dirs: map[string]uint64{"a": 1, "b": 2, "c": 3},
		Modes: map[string]uint32{"a": 0o700, "b": 0o711, "c": 0o700}}); lines(evs) != "setattr a" || evs[0].Type != server.TypeDir {
		t.Errorf("a host's chmod of a, the core's of b and c: %s", lines(evs))
	}
	if _, ok := h.Attrib("b", 2, 0o711, time.Time{}); ok {
		t.Error("Attrib of a mode the list knows made an event")
	}
	if e, ok := h.Attrib("b", 2, 0o750, time.Time{}); !ok || lines([]feed.Event{e}) != "setattr b" {
		t.Errorf("Attrib of a changed mode: %v %s", ok, lines([]feed.Event{e}))
	}
	if _, ok := h.Attrib("b", 9, 0o700, time.Time{}); ok {
		t.Error("Attrib of another directory at b made an event")
	}
	if _, ok := h.Attrib("unknown", 5, 0o700, time.Time{}); ok {
		t.Error("Attrib of a directory not in the list made an event")
	}
	file := filepath.Join(t.TempDir(), feed.DirsFileName)
	if err := h.Save(file); err != nil {
		t.Fatal(err)
	}
	h2 := feed.NewHostDirs()
	if err := h2.Load(file); err != nil {
		t.Fatal(err)
	}
	if got := lines(h2.Events(feed.HostLook{Scopes: []string{""}, Dirs: map[string]uint64{"a": 1, "b": 2, "d": 4},
		Modes: map[string]uint32{"a": 0o700, "b": 0o755, "d": 0o700}})); got != "mkdir d, setattr b, remove c" {
		t.Errorf("after a restart: %s", got)
	}
}

// Sizes keeps a client's last size of a file through renames, forgets it
// at a removal or a host's change, and stays bounded.
func TestSizes(t *testing.T) {
	s := feed.NewSizes()
	s.Note(feed.Event{Op: feed.OpWrite, Path: "a", Type: server.TypeFile, App: "editor", Size: 19})
	s.Note(feed.Event{Op: feed.OpRename, Path: "b", From: "a", Type: server.TypeFile, App: "editor"})
	if n, ok := s.Size("b"); !ok || n != 19 {
		t.Errorf("after a rename: %d %v", n, ok)
	}
	if _, ok := s.Size("a"); ok {
		t.Error("the old name kept its size")
	}
	s.Note(feed.Event{Op: feed.OpTruncate, Path: "b", Type: server.TypeFile, App: feed.AppHost, Size: 4})
	if _, ok := s.Size("b"); ok {
		t.Error("a host's change kept the client's size")
	}
	for i := range 3 << 16 {
		s.Note(feed.Event{Op: feed.OpCreate, Path: "f" + strconv.Itoa(i), Type: server.TypeFile, App: "bulk", Size: int64(i)})
	}
	if n, ok := s.Size("f196607"); !ok || n != 196607 {
		t.Errorf("the newest: %d %v", n, ok)
	}
	if _, ok := s.Size("f0"); ok {
		t.Error("unbounded: the oldest is kept")
	}
}
