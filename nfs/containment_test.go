package nfs_test

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestContainment attacks the export from inside: symlinks to a file and a
// directory outside, then READ, WRITE, SETATTR, CREATE, REMOVE and RENAME through
// them, and names with "..", "/", NUL or nothing. Every attack must fail (or act
// on the link itself) and the outside must keep its bytes, mode and mtime.
func TestContainment(t *testing.T) {
	e := newEnv(t)
	outside := filepath.Join(filepath.Dir(e.dir), "outside")
	os.Mkdir(outside, 0o755)
	secret := filepath.Join(outside, "passwd")
	os.WriteFile(secret, []byte("root:x:0:0\n"), 0o644)
	old := time.Unix(1_500_000_000, 0)
	os.Chtimes(secret, old, old)
	os.Chtimes(outside, old, old)
	check := func(t *testing.T) {
		t.Helper()
		fi, err := os.Stat(secret)
		if err != nil || fi.Size() != 11 || !fi.ModTime().Equal(old) || fi.Mode().Perm() != 0o644 {
			t.Fatalf("outside file changed: %v %v", fi, err)
		}
		if b, _ := os.ReadFile(secret); string(b) != "root:x:0:0\n" {
			t.Fatalf("outside bytes changed: %q", b)
		}
		ents, _ := os.ReadDir(outside)
		dfi, _ := os.Stat(outside)
		if len(ents) != 1 || !dfi.ModTime().Equal(old) {
			t.Fatalf("outside directory changed: %d entries, mtime %v", len(ents), dfi.ModTime())
		}
	}

	c, root := e.client("/@notes")
	symlink := func(name, target string) []byte {
		st, d := c.call(pSymlink, (&enc{}).dirop(root, name).sattr(-1).str(target))
		if st != sOK {
			t.Fatalf("symlink %s: %d", name, st)
		}
		d.u32()
		return d.opaque()
	}
	fileLink := symlink("pw", secret)
	relLink := symlink("pw-rel", "../outside/passwd")
	dirLink := symlink("out", outside)

	t.Run("READ WRITE COMMIT through symlinks", func(t *testing.T) {
		for _, fh := range [][]byte{fileLink, relLink} {
			if st, data, _ := c.read(fh, 0, 100); st == sOK {
				t.Errorf("READ through symlink returned %q", data)
			}
			if st, _, _, _ := c.write(fh, 0, []byte("pwned"), 2); st == sOK {
				t.Errorf("WRITE through symlink succeeded")
			}
			c.commit(fh)
		}
		check(t)
	})

	t.Run("SETATTR through symlinks", func(t *testing.T) {
		for _, fh := range [][]byte{fileLink, dirLink} {
			// size
			c.call(pSetattr, (&enc{}).opaque(fh).u32(0).u32(0).u32(0).u32(1).u64(0).u32(0).u32(0).u32(0))
			// mode
			c.call(pSetattr, (&enc{}).opaque(fh).u32(1).u32(0o777).u32(0).u32(0).u32(0).u32(0).u32(0).u32(0))
			// times (act on the link itself, if anything)
			c.call(pSetattr, (&enc{}).opaque(fh).u32(0).u32(0).u32(0).u32(0).u32(1).u32(1).u32(0))
			// owner
			c.call(pSetattr, (&enc{}).opaque(fh).u32(0).u32(1).u32(12345).u32(0).u32(0).u32(0).u32(0).u32(0))
		}
		check(t)
	})

	t.Run("directory operations through a symlinked directory", func(t *testing.T) {
		if st, _ := c.create(dirLink, "planted", 0, 0); st == sOK {
			t.Errorf("CREATE in symlinked dir succeeded")
		}
		if st, _ := c.mkdir(dirLink, "planted"); st == sOK {
			t.Errorf("MKDIR in symlinked dir succeeded")
		}
		if st, _, _ := c.lookup(dirLink, "passwd"); st == sOK {
			t.Errorf("LOOKUP in symlinked dir succeeded")
		}
		if st, _ := c.call(pRemove, (&enc{}).dirop(dirLink, "passwd")); st == sOK {
			t.Errorf("REMOVE in symlinked dir succeeded")
		}
		if st, _ := c.call(pRename, (&enc{}).dirop(dirLink, "passwd").dirop(root, "stolen")); st == sOK {
			t.Errorf("RENAME out of symlinked dir succeeded")
		}
		_, victim := c.create(root, "victim", 0, 0)
		_ = victim
		if st, _ := c.call(pRename, (&enc{}).dirop(root, "victim").dirop(dirLink, "passwd")); st == sOK {
			t.Errorf("RENAME into symlinked dir succeeded")
		}
		if st, _ := c.call(pLink, (&enc{}).opaque(victim).dirop(dirLink, "hard")); st == sOK {
			t.Errorf("LINK into symlinked dir succeeded")
		}
		if st, _ := c.call(pReaddir, (&enc{}).opaque(dirLink).u64(0).u64(0).u32(4096)); st == sOK {
			t.Errorf("READDIR of symlinked dir succeeded")
		}
		check(t)
	})

	t.Run("RENAME onto a symlink replaces the link only", func(t *testing.T) {
		_, f := c.create(root, "payload", 0, 0)
		c.write(f, 0, []byte("payload"), 2)
		if st, _ := c.call(pRename, (&enc{}).dirop(root, "payload").dirop(root, "pw")); st != sOK {
			t.Fatalf("rename onto symlink: %d", st)
		}
		fi, err := os.Lstat(filepath.Join(e.dir, "pw"))
		if err != nil || !fi.Mode().IsRegular() {
			t.Fatalf("pw is not the renamed file: %v %v", fi, err)
		}
		if st, _ := c.call(pRemove, (&enc{}).dirop(root, "pw-rel")); st != sOK {
			t.Fatalf("removing a symlink: %d", st)
		}
		check(t)
	})

	t.Run("bad names", func(t *testing.T) {
		_, sub := c.mkdir(root, "sub")
		c.create(sub, "inner", 0, 0)
		names := []string{"..", "../outside", "a/b", "sub/inner", "", "x\x00y", "/etc/passwd", "."}
		for _, n := range names {
			if st, _ := c.create(root, n, 0, 0); st == sOK {
				t.Errorf("CREATE %q succeeded", n)
			}
			if st, _ := c.mkdir(root, n); st == sOK {
				t.Errorf("MKDIR %q succeeded", n)
			}
			if st, _ := c.call(pRemove, (&enc{}).dirop(root, n)); st == sOK {
				t.Errorf("REMOVE %q succeeded", n)
			}
			if st, _ := c.call(pRmdir, (&enc{}).dirop(root, n)); st == sOK {
				t.Errorf("RMDIR %q succeeded", n)
			}
			if st, _ := c.call(pRename, (&enc{}).dirop(root, "sub").dirop(root, n)); st == sOK {
				t.Errorf("RENAME to %q succeeded", n)
			}
			if n != "." && n != ".." {
				if st, _, _ := c.lookup(root, n); st == sOK {
					t.Errorf("LOOKUP %q succeeded", n)
				}
			}
		}
		if st, _, _ := c.lookup(root, ".."); st == sOK {
			t.Errorf("LOOKUP .. at the root succeeded")
		}
		if _, err := os.Stat(filepath.Join(e.dir, "sub", "inner")); err != nil {
			t.Errorf("sub/inner damaged: %v", err)
		}
		check(t)
	})

	t.Run("handles cannot be crafted to point outside", func(t *testing.T) {
		fi, _ := os.Stat(secret)
		fh := append([]byte(nil), root...)
		binary.BigEndian.PutUint64(fh[5:], fileIno(fi))
		if st, _ := c.getattr(fh); st == sOK {
			t.Errorf("crafted handle accepted")
		}
		if bytes.Equal(fh, root) {
			t.Fatal("test bug")
		}
		check(t)
	})
}
