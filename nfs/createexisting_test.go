package nfs_test

import (
	"fmt"
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

// TestCreateReplyAttrsAreTheFiles: the attributes a CREATE's reply gives for
// the new file and its directory equal a GETATTR's right after, whether its
// sattr3 matches what the create made (mode 0644: the reply keeps the
// attributes read from the new file's descriptor) or changes it (mode, times,
// size: the reply reads them again), and as the host sees the file.
func TestCreateReplyAttrsAreTheFiles(t *testing.T) {
	dir := t.TempDir()
	e := newEnvAt(t, dir)
	c, root := e.client("/@create")
	c.as(0, 0)
	for i, sattr := range []func(*enc) *enc{
		func(e *enc) *enc { return e.sattr(0o644) }, // what the create makes
		func(e *enc) *enc { return e.sattr(0o600) }, // a mode
		func(e *enc) *enc { return e.sattr(-1) },    // nothing
		// mode 0644, size 0, mtime set by the client
		func(e *enc) *enc {
			return e.u32(1).u32(0o644).u32(0).u32(0).u32(1).u64(0).u32(0).u32(2).u32(1_000_000).u32(7)
		},
	} {
		for _, how := range []uint32{0, 1} { // UNCHECKED, GUARDED
			name := fmt.Sprintf("f%d-%d", i, how)
			st, d := c.call(pCreate, sattr((&enc{}).dirop(root, name).u32(how)))
			if st != sOK {
				t.Fatalf("create %s: %d", name, st)
			}
			if d.u32() != 1 {
				t.Fatalf("create %s: no handle", name)
			}
			fh := d.opaque()
			got, ok := d.postOp()
			if !ok {
				t.Fatalf("create %s: no attributes", name)
			}
			if d.u32() == 1 { // dir_wcc's pre-op attributes
				d.skip(24)
			}
			gotDir, okDir := d.postOp()
			st, want := c.getattr(fh)
			if st != sOK {
				t.Fatalf("getattr %s: %d", name, st)
			}
			if got != want {
				t.Errorf("create %s: reply's attributes %+v, GETATTR's %+v", name, got, want)
			}
			if _, wantDir := c.getattr(root); !okDir || gotDir != wantDir {
				t.Errorf("create %s: reply's directory attributes %+v (%v), GETATTR's %+v", name, gotDir, okDir, wantDir)
			}
			fi, err := os.Lstat(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			if uint32(fi.Mode().Perm()) != got.mode&0o777 || uint64(fi.ModTime().Unix()) != got.mtime>>32 {
				t.Errorf("create %s: the host sees mode %v mtime %d, the reply %o %d", name, fi.Mode().Perm(), fi.ModTime().Unix(), got.mode, got.mtime>>32)
			}
		}
	}
}
