package nfs_test

import (
	"os"
	"path/filepath"
	"testing"
)

// TestExistHiddenFromNonSearchers: CREATE (UNCHECKED, GUARDED, EXCLUSIVE),
// MKDIR, SYMLINK and LINK of a name that exists in a directory the caller may
// not search answer NFS3ERR_ACCES, as Linux's nfsd and ganesha do, not
// NFS3ERR_EXIST, which would tell the caller the name is there. Where the
// caller may search but not write, the name's existence is its to know
// (EXIST), and a new name is refused (ACCES). Nothing changes.
func TestExistHiddenFromNonSearchers(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("root mode needs a daemon running as root")
	}
	e := newEnv(t)
	permsTree(t, e.dir) // private/ root 0700 holding f; pub/ root 0755 holding f
	rc, root := e.client("/")
	rc.as(0, 0)
	fh := map[string][]byte{}
	for _, n := range []string{"private", "pub", "mine"} {
		st, h, _ := rc.lookup(root, n)
		if st != sOK {
			t.Fatalf("root: lookup %s: %d", n, st)
		}
		fh[n] = h
	}
	u := dialRaw(t, e.addr).as(1000, 1000)
	calls := map[string]func(dir []byte, name string) uint32{
		"create unchecked": func(d []byte, n string) uint32 { st, _ := u.create(d, n, 0, 0); return st },
		"create guarded":   func(d []byte, n string) uint32 { st, _ := u.create(d, n, 1, 0); return st },
		"create exclusive": func(d []byte, n string) uint32 { st, _ := u.create(d, n, 2, 7); return st },
		"mkdir":            func(d []byte, n string) uint32 { st, _ := u.mkdir(d, n); return st },
		"symlink": func(d []byte, n string) uint32 {
			st, _ := u.call(pSymlink, (&enc{}).dirop(d, n).sattr(-1).str("t"))
			return st
		},
		"link": func(d []byte, n string) uint32 {
			st, _ := u.call(pLink, (&enc{}).opaque(fh["mine"]).dirop(d, n))
			return st
		},
	}
	for what, call := range calls {
		if st := call(fh["private"], "f"); st != sAcces {
			t.Errorf("%s of an existing name in a 0700 directory: %d, want ACCES", what, st)
		}
		if st := call(fh["private"], "new"); st != sAcces {
			t.Errorf("%s of a new name in a 0700 directory: %d, want ACCES", what, st)
		}
		want := uint32(sExist)
		if what == "create unchecked" {
			want = sAcces // opens the file, which the caller may not write
		}
		if st := call(fh["pub"], "f"); st != want {
			t.Errorf("%s of an existing name in a 0755 directory: %d, want %d", what, st, want)
		}
	}
	for _, p := range []string{"private/new", "pub/new"} {
		if _, err := os.Lstat(filepath.Join(e.dir, p)); !os.IsNotExist(err) {
			t.Errorf("%s exists after a refused call: %v", p, err)
		}
	}
	if fi, err := os.Lstat(filepath.Join(e.dir, "private/f")); err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o644 {
		t.Errorf("private/f changed: %v %v", fi, err)
	}
}
