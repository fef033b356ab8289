package nfs_test

import (
	"os"
	"path/filepath"
	"testing"
)

// TestUncheckedCreateOfExistingFileSetsOnlySize: an UNCHECKED CREATE of a
// file that exists applies only the size its attributes ask, as Linux's
// nfsd does (and nfs-ganesha: differential finding N5); the mode is the
// existing file's. A new file gets every attribute its sattr3 sets.
func TestUncheckedCreateOfExistingFileSetsOnlySize(t *testing.T) {
	dir := t.TempDir()
	e := newEnvAt(t, dir)
	c, root := e.client("/@create")
	c.as(0, 0)
	if st, _ := c.create(root, "a", 0, 0); st != sOK { // mode 0644
		t.Fatalf("create a: %d", st)
	}
	if err := os.WriteFile(filepath.Join(dir, "a"), []byte("data"), 0o644); err != nil {
		t.Fatal(err)
	}
	// UNCHECKED again, mode 0755: the file stays as it is.
	if st, _ := c.call(pCreate, (&enc{}).dirop(root, "a").u32(0).sattr(0o755)); st != sOK {
		t.Fatalf("create a again: %d", st)
	}
	fi, err := os.Lstat(filepath.Join(dir, "a"))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o644 || fi.Size() != 4 {
		t.Fatalf("after an UNCHECKED create of an existing file: mode %v size %d, want 0644 and 4", fi.Mode().Perm(), fi.Size())
	}
	// A size is applied: mode 0700 and size 0.
	args := (&enc{}).dirop(root, "a").u32(0).u32(1).u32(0o700).u32(0).u32(0).u32(1).u64(0).u32(0).u32(0)
	if st, _ := c.call(pCreate, args); st != sOK {
		t.Fatalf("create a with size 0: %d", st)
	}
	if fi, err = os.Lstat(filepath.Join(dir, "a")); err != nil || fi.Mode().Perm() != 0o644 || fi.Size() != 0 {
		t.Fatalf("after an UNCHECKED create with size 0: %v, want mode 0644 size 0 (%v)", fi, err)
	}
	// A new file still gets its mode.
	if st, _ := c.call(pCreate, (&enc{}).dirop(root, "b").u32(0).sattr(0o750)); st != sOK {
		t.Fatalf("create b: %d", st)
	}
	if fi, err = os.Lstat(filepath.Join(dir, "b")); err != nil || fi.Mode().Perm() != 0o750 {
		t.Fatalf("new file b: %v (%v), want mode 0750", fi, err)
	}
}
