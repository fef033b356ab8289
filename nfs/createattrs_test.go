package nfs_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

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
