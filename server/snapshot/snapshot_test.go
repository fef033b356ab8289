package snapshot_test

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/server"
	"github.com/semfs/semfs/server/snapshot"
)

var quiet = slog.New(slog.DiscardHandler)

// source is a backing directory with one of each kind of entry, its core, an
// index that knows every file (one tagged) and a registry with one binding.
type source struct {
	data string
	fs   *server.FS
	idx  *index.Index
	reg  *server.Registry
}

func newSource(t *testing.T) *source {
	t.Helper()
	base := t.TempDir()
	s := &source{data: filepath.Join(base, "data")}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(s.data, "notes/deep"), 0o755))
	must(os.WriteFile(filepath.Join(s.data, "notes/a.md"), []byte("alpha"), 0o640))
	must(os.WriteFile(filepath.Join(s.data, "notes/deep/b.bin"), bytes.Repeat([]byte{0, 1, 2, 255}, 4096), 0o600))
	must(os.WriteFile(filepath.Join(s.data, "run.sh"), []byte("#!/bin/sh\n"), 0o755))
	must(os.Symlink("notes/a.md", filepath.Join(s.data, "link")))
	must(os.Symlink("../../nowhere", filepath.Join(s.data, "notes/dangling")))
	must(os.Link(filepath.Join(s.data, "notes/a.md"), filepath.Join(s.data, "hard.md")))
	must(syscall.Mkfifo(filepath.Join(s.data, "pipe"), 0o620))
	old := time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)
	must(os.Chtimes(filepath.Join(s.data, "notes/a.md"), old, old))
	must(os.Chmod(filepath.Join(s.data, "notes/deep"), 0o750))
	var err error
	s.reg, err = server.OpenRegistry(filepath.Join(base, "registry.json"))
	must(err)
	must(s.reg.Register(1234, "editor"))
	s.idx, err = index.Open(filepath.Join(base, "index"), index.Options{Logger: quiet})
	must(err)
	t.Cleanup(func() { s.idx.Close() })
	s.fs, err = server.New(s.data, server.Options{Logger: quiet, BackingCheck: -1})
	must(err)
	t.Cleanup(func() { s.fs.Close() })
	var files []index.FileState
	must(s.fs.Walk(context.Background(), "", func(p string, a server.Attr) error {
		if a.Mode.IsRegular() || a.IsSymlink() {
			files = append(files, index.FileState{Path: p, Ino: a.FileID(), Size: a.Size, ModTime: a.Mtime})
		}
		return nil
	}))
	_, err = s.idx.Reconcile(files)
	must(err)
	_, err = s.idx.Tag(context.Background(), "notes/deep/b.bin", "quarterly figures", []string{"sheet"}, nil)
	must(err)
	return s
}

// entry is what a restore must reproduce of one path.
type entry struct {
	Mode   fs.FileMode
	Data   string // file content or symlink target
	Mtime  int64  // regular files only (a directory's changes with its children)
	LinkTo string // for the second name of a hard link: the first
}

func tree(t *testing.T, dir string) map[string]entry {
	t.Helper()
	out := map[string]entry{}
	inodes := map[uint64]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		e := entry{Mode: fi.Mode()}
		switch {
		case fi.Mode().IsRegular():
			b, _ := os.ReadFile(p)
			e.Data, e.Mtime = string(b), fi.ModTime().UnixNano()
			ino := fi.Sys().(*syscall.Stat_t).Ino
			if first, ok := inodes[ino]; ok {
				e.LinkTo = first
			} else {
				inodes[ino] = rel
			}
		case fi.Mode()&fs.ModeSymlink != 0:
			e.Data, _ = os.Readlink(p)
		}
		out[rel] = e
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestRoundTrip: Write then Restore gives back every entry (kind, mode,
// content, symlink target, hard link, file times), the index's records and
// tags, and the registrations.
func TestRoundTrip(t *testing.T) {
	s := newSource(t)
	var buf bytes.Buffer
	if err := snapshot.Write(context.Background(), &buf, s.fs, s.idx, s.reg); err != nil {
		t.Fatal(err)
	}
	dst := t.TempDir()
	data, idxDir := filepath.Join(dst, "data"), filepath.Join(dst, "index")
	if err := snapshot.Restore(bytes.NewReader(buf.Bytes()), data, idxDir, index.Options{Logger: quiet}); err != nil {
		t.Fatal(err)
	}
	want, got := tree(t, s.data), tree(t, data)
	if len(got) != len(want) {
		t.Errorf("restored %d entries, want %d:\n%v\n%v", len(got), len(want), got, want)
	}
	for p, w := range want {
		if g, ok := got[p]; !ok || g != w {
			t.Errorf("%s: restored %+v (present %v), want %+v", p, g, ok, w)
		}
	}
	idx, err := index.Open(idxDir, index.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	r, err := idx.Get("notes/deep/b.bin")
	if err != nil || r.Task != "quarterly figures" || len(r.RelatedApps) != 1 || r.RelatedApps[0] != "sheet" {
		t.Errorf("restored record: %+v %v", r, err)
	}
	var before, after bytes.Buffer
	s.idx.Dump(&before)
	idx.Dump(&after)
	if before.String() != after.String() {
		t.Errorf("the restored index differs from the archived one")
	}
	reg, err := server.OpenRegistry(filepath.Join(idxDir, "registry.json"))
	if err != nil || reg.All()[1234] != "editor" {
		t.Errorf("restored registry: %v %v", reg.All(), err)
	}
	// Never over something: a second restore into the same place is refused.
	if err := snapshot.Restore(bytes.NewReader(buf.Bytes()), data, filepath.Join(dst, "other"), index.Options{Logger: quiet}); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("restore into a non-empty directory: %v", err)
	}
}

// hostileTar builds an archive: a valid manifest (unless the first header
// is named so already), then the given entries.
func hostileTar(t *testing.T, manifest bool, hdrs ...*tar.Header) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	add := func(h *tar.Header, body []byte) {
		h.Size = int64(len(body))
		if h.Typeflag == tar.TypeSymlink || h.Typeflag == tar.TypeLink || h.Typeflag == tar.TypeDir || h.Typeflag == tar.TypeChar {
			h.Size = 0
			body = nil
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		tw.Write(body)
	}
	if manifest {
		b, _ := json.Marshal(map[string]any{"format": 1, "createdAt": time.Now()})
		add(&tar.Header{Name: "semfs-snapshot.json", Mode: 0o644, Typeflag: tar.TypeReg}, b)
	}
	for _, h := range hdrs {
		add(h, []byte("payload"))
	}
	tw.Close()
	return buf.Bytes()
}

// TestRestoreRefusesHostileArchives: an archive that would write outside the
// backing directory, through a symlink it planted, or anything but a semfs
// snapshot is refused, and nothing appears outside the target.
func TestRestoreRefusesHostileArchives(t *testing.T) {
	reg := func(name string) *tar.Header { return &tar.Header{Name: name, Mode: 0o644, Typeflag: tar.TypeReg} }
	cases := []struct {
		name     string
		manifest bool
		hdrs     []*tar.Header
		want     string
	}{
		{"dot-dot escape", true, []*tar.Header{reg("data/../escaped")}, "refusing archive entry"},
		{"deep dot-dot", true, []*tar.Header{reg("data/a/../../escaped")}, "refusing archive entry"},
		{"absolute inside data", true, []*tar.Header{reg("data//abs")}, "refusing archive entry"},
		{"absolute name", true, []*tar.Header{reg("/escaped")}, "unexpected archive entry"},
		{"unknown top-level entry", true, []*tar.Header{reg("evil")}, "unexpected archive entry"},
		{"no manifest", false, []*tar.Header{reg("data/a")}, "no manifest"},
		{"future format", false, []*tar.Header{reg("semfs-snapshot.json")}, "bad manifest"},
		{"file through a planted symlink", true, []*tar.Header{
			{Name: "data/l", Typeflag: tar.TypeSymlink, Linkname: "OUTSIDE"},
			reg("data/l/escaped"),
		}, ""},
		{"hard link out of the tree", true, []*tar.Header{
			{Name: "data/h", Typeflag: tar.TypeLink, Linkname: "data/../../OUTSIDE/victim"},
		}, "outside the backing directory"},
		{"device node", true, []*tar.Header{{Name: "data/dev", Typeflag: tar.TypeChar, Mode: 0o666, Devmajor: 1, Devminor: 3}}, "unsupported entry type"},
		{"no index records", true, []*tar.Header{reg("data/a")}, "incomplete"},
	}
	t.Run("format 2", func(t *testing.T) {
		var buf bytes.Buffer
		tw := tar.NewWriter(&buf)
		b := []byte(`{"format":2}`)
		tw.WriteHeader(&tar.Header{Name: "semfs-snapshot.json", Mode: 0o644, Typeflag: tar.TypeReg, Size: int64(len(b))})
		tw.Write(b)
		tw.Close()
		base := t.TempDir()
		err := snapshot.Restore(&buf, filepath.Join(base, "data"), filepath.Join(base, "index"), index.Options{Logger: quiet})
		if err == nil || !strings.Contains(err.Error(), "format 2 is not supported") {
			t.Errorf("restore of a format 2 archive: %v", err)
		}
	})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			base := t.TempDir()
			outside := filepath.Join(base, "outside")
			if err := os.Mkdir(outside, 0o755); err != nil {
				t.Fatal(err)
			}
			os.WriteFile(filepath.Join(outside, "victim"), []byte("mine"), 0o644)
			for _, h := range c.hdrs {
				h.Linkname = strings.ReplaceAll(h.Linkname, "OUTSIDE", outside)
			}
			data, idxDir := filepath.Join(base, "d", "data"), filepath.Join(base, "d", "index")
			err := snapshot.Restore(bytes.NewReader(hostileTar(t, c.manifest, c.hdrs...)), data, idxDir, index.Options{Logger: quiet})
			if err == nil || c.want != "" && !strings.Contains(err.Error(), c.want) {
				t.Errorf("restore: %v, want an error saying %q", err, c.want)
			}
			ents, _ := os.ReadDir(outside)
			if len(ents) != 1 {
				t.Errorf("the archive wrote outside the backing directory: %v", ents)
			}
			for _, p := range []string{filepath.Join(base, "escaped"), filepath.Join(base, "d", "escaped"), "/escaped"} {
				if _, err := os.Lstat(p); err == nil {
					t.Errorf("%s was created", p)
				}
			}
			if b, _ := os.ReadFile(filepath.Join(outside, "victim")); string(b) != "mine" {
				t.Errorf("a file outside was changed: %q", b)
			}
		})
	}
}
