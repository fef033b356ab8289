package nfs_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TestWriteKeepsSetuidForRoot: NFS shares one open file between every
// caller (the descriptor cache), so whether a WRITE clears setuid is the
// writer's to decide, not the opener's. A file another caller's UNCHECKED
// CREATE opened (and the cache kept) stays setuid when root writes to it,
// as a write by a holder of CAP_FSETID leaves it (Linux's file_remove_privs,
// nfsd, ganesha; differential seed 40190), and loses it when that caller
// writes.
func TestWriteKeepsSetuidForRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("root mode needs a daemon running as root")
	}
	dir := t.TempDir()
	e := newEnvAt(t, dir)
	rc, root := e.client("/")
	rc.as(0, 0)
	x := filepath.Join(dir, "x")
	if err := os.WriteFile(x, []byte("program"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(x, 1, 1); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(x, 0o755|fs.ModeSetuid); err != nil {
		t.Fatal(err)
	}
	mode := func() fs.FileMode {
		t.Helper()
		fi, err := os.Lstat(x)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid)
	}
	u := dialRaw(t, e.addr).as(1, 1)
	st, fh := u.create(root, "x", 0, 0) // UNCHECKED, the file exists: opened as uid 1
	if st != sOK {
		t.Fatalf("uid 1: create x: %d", st)
	}
	if m := mode(); m != 0o755|fs.ModeSetuid {
		t.Fatalf("after uid 1's create: %v, want 4755", m)
	}
	if st, _, _, _ := rc.write(fh, 0, []byte("P"), 2); st != sOK {
		t.Fatalf("root: write x: %d", st)
	}
	if m := mode(); m != 0o755|fs.ModeSetuid {
		t.Errorf("after root's write: %v, want setuid kept (4755)", m)
	}
	if st, _, _, _ := u.write(fh, 1, []byte("r"), 2); st != sOK {
		t.Fatalf("uid 1: write x: %d", st)
	}
	if m := mode(); m != 0o755 {
		t.Errorf("after uid 1's write: %v, want setuid cleared (0755)", m)
	}
}
