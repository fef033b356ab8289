package server_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/semfs/semfs/server"
)

// TestKeptDirectoryNeverLeadsOut: the core keeps descriptors of the directories
// one level below the root (server/dirfds.go), and a host process may move such
// a directory anywhere, put another directory or a symlink in its place, or
// remove it. Whatever it does after the core used the directory, a path
// through that name reaches only what is at the name now, beneath the root, as
// a fresh resolution would: nothing outside is looked at, read, created or
// removed. Each case uses the directory first (so its descriptor is kept),
// then changes it behind the core's back, then resolves through the name with
// every kind of call that resolves a parent (the inline stat as well).
func TestKeptDirectoryNeverLeadsOut(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "root")
	outside := filepath.Join(base, "outside")
	for _, d := range []string{root, outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	fsys, err := server.New(root, server.Options{BackingCheck: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close()
	ctx := context.Background()
	write := func(p, s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// use resolves through dir so that its descriptor is kept.
	use := func(dir string) {
		t.Helper()
		write(filepath.Join(root, dir, "f"), "inside")
		if _, err := fsys.Lstat(ctx, dir+"/f"); err != nil {
			t.Fatal(err)
		}
		if _, err := fsys.LstatInline(ctx, dir+"/f"); err != nil {
			t.Fatal(err)
		}
	}
	// away moves root/dir to outside/<dir> (with its file f, and a secret
	// only the outside copy has).
	away := func(dir string) string {
		t.Helper()
		to := filepath.Join(outside, dir)
		if err := os.Rename(filepath.Join(root, dir), to); err != nil {
			t.Fatal(err)
		}
		write(filepath.Join(to, "secret"), "outside")
		return to
	}
	// noneOutside checks that dir/<name> cannot be reached through the core,
	// by any call, and that nothing was made or removed in to.
	noneOutside := func(dir, to string) {
		t.Helper()
		for _, name := range []string{"f", "secret"} {
			p := dir + "/" + name
			if a, err := fsys.Lstat(ctx, p); err == nil {
				t.Errorf("Lstat %s: found %+v, which is outside the root", p, a)
			}
			if a, err := fsys.LstatInline(ctx, p); err == nil {
				t.Errorf("LstatInline %s: found %+v, which is outside the root", p, a)
			}
			if f, err := fsys.Open(ctx, p, os.O_RDONLY); err == nil {
				f.Close()
				t.Errorf("Open %s succeeded: the file is outside the root", p)
			}
		}
		if f, _, err := fsys.Create(ctx, dir+"/made", 0o644, true); err == nil {
			f.Close()
		}
		if _, err := os.Lstat(filepath.Join(to, "made")); err == nil {
			t.Errorf("Create %s/made made a file outside the root", dir)
		}
		_ = fsys.Remove(ctx, dir+"/secret", false)
		if _, err := os.Lstat(filepath.Join(to, "secret")); err != nil {
			t.Errorf("Remove %s/secret removed a file outside the root: %v", dir, err)
		}
	}

	t.Run("moved out", func(t *testing.T) {
		use("a")
		noneOutside("a", away("a"))
	})
	t.Run("moved out, symlink to it in its place", func(t *testing.T) {
		use("b")
		to := away("b")
		if err := os.Symlink(to, filepath.Join(root, "b")); err != nil {
			t.Fatal(err)
		}
		noneOutside("b", to)
	})
	t.Run("moved out, another directory in its place", func(t *testing.T) {
		use("c")
		to := away("c")
		write(filepath.Join(root, "c", "new"), "the new one")
		noneOutside("c", to)
		// The new directory is served, and a create lands in it.
		if _, err := fsys.Lstat(ctx, "c/new"); err != nil {
			t.Errorf("the directory now at c: %v", err)
		}
		if _, err := os.Lstat(filepath.Join(root, "c", "made")); err != nil {
			t.Errorf("a create in the directory now at c: %v", err)
		}
	})
	t.Run("renamed inside the root", func(t *testing.T) {
		use("d")
		if err := os.Rename(filepath.Join(root, "d"), filepath.Join(root, "e")); err != nil {
			t.Fatal(err)
		}
		if _, err := fsys.Lstat(ctx, "d/f"); server.KindOf(err) != server.KindNotFound {
			t.Errorf("Lstat d/f after d was renamed to e: %v, want not found", err)
		}
		if _, err := fsys.Lstat(ctx, "e/f"); err != nil {
			t.Errorf("Lstat e/f: %v", err)
		}
	})
	t.Run("removed, a file in its place", func(t *testing.T) {
		use("g")
		if err := os.RemoveAll(filepath.Join(root, "g")); err != nil {
			t.Fatal(err)
		}
		write(filepath.Join(root, "g"), "a file")
		if _, err := fsys.Lstat(ctx, "g/f"); server.KindOf(err) != server.KindNotDir {
			t.Errorf("Lstat g/f with g a file: %v, want not a directory", err)
		}
	})
}
