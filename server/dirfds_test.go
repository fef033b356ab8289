package server_test

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

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

// TestLstatInShowsTheDirectoryAsItIs: LstatIn's directory attributes are the
// directory's as it is at the call, whichever way its lookup found it: the
// root, a directory one level down whose descriptor is kept (its first use
// opens and keeps it, later ones check it; the attributes come from those
// reads, not from a statx more), or a deeper one opened each time. Between
// calls the host changes the directory's mode and contents, and finally puts
// another directory in its place; each answer must equal os.Lstat's.
func TestLstatInShowsTheDirectoryAsItIs(t *testing.T) {
	root := t.TempDir()
	fsys, err := server.New(root, server.Options{BackingCheck: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close()
	ctx := context.Background()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	check := func(dir, p, step string) {
		t.Helper()
		got, a, err := fsys.LstatIn(ctx, p, false)
		must(err)
		gotInline, aInline, err := fsys.LstatIn(ctx, p, true)
		must(err)
		var st syscall.Stat_t
		must(syscall.Lstat(filepath.Join(root, dir), &st))
		if got.Ino != st.Ino || uint32(got.Mode.Perm()) != st.Mode&0o777 || uint64(got.Nlink) != uint64(st.Nlink) ||
			got.Mtime.UnixNano() != time.Unix(st.Mtim.Unix()).UnixNano() || got.Ctime.UnixNano() != time.Unix(st.Ctim.Unix()).UnixNano() {
			t.Errorf("%s, %s: directory ino %d mode %v nlink %d mtime %v ctime %v; os.Lstat: ino %d mode %o nlink %d mtime %v ctime %v",
				step, p, got.Ino, got.Mode, got.Nlink, got.Mtime, got.Ctime,
				st.Ino, st.Mode&0o777, st.Nlink, time.Unix(st.Mtim.Unix()), time.Unix(st.Ctim.Unix()))
		}
		if gotInline != got || aInline != a {
			t.Errorf("%s, %s: inline %+v %+v, not inline %+v %+v", step, p, gotInline, aInline, got, a)
		}
	}
	for _, dir := range []string{"", "top", "top/deep"} {
		join := func(name string) string {
			if dir == "" {
				return name
			}
			return dir + "/" + name
		}
		must(os.MkdirAll(filepath.Join(root, dir), 0o755))
		must(os.WriteFile(filepath.Join(root, dir, "f"), nil, 0o644))
		check(dir, join("f"), "first use")
		check(dir, join("f"), "second use")
		must(os.Chmod(filepath.Join(root, dir), 0o711))
		must(os.Mkdir(filepath.Join(root, dir, "sub"), 0o755)) // nlink, mtime and ctime move
		check(dir, join("f"), "after chmod and mkdir")
		if dir == "" {
			continue
		}
		must(os.Chmod(filepath.Join(root, dir), 0o755))
		other := filepath.Join(root, "other")
		must(os.Mkdir(other, 0o700))
		must(os.WriteFile(filepath.Join(other, "f"), nil, 0o644))
		must(os.RemoveAll(filepath.Join(root, dir)))
		must(os.Rename(other, filepath.Join(root, dir)))
		check(dir, join("f"), "after another directory took its place")
	}
}
