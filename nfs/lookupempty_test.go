package nfs_test

import (
	"testing"

	"github.com/semfs/semfs/nfs"
)

// TestLookupEmptyName: no entry has the empty name, so LOOKUP of "" is
// NOENT (as nfs-ganesha answers; differential finding N7), on the fast path
// and through go-nfs, which would otherwise have joined "" into the
// directory's own path and answered with the directory.
func TestLookupEmptyName(t *testing.T) {
	for _, fast := range []bool{true, false} {
		name := map[bool]string{true: "fast path", false: "go-nfs"}[fast]
		t.Run(name, func(t *testing.T) {
			e := newEnvWith(t, t.TempDir(), func(o *nfs.Options) { o.NoFastPath = !fast })
			c, root := e.client("/@names")
			c.as(0, 0)
			st, dir := c.mkdir(root, "a")
			if st != sOK {
				t.Fatalf("mkdir a: %d", st)
			}
			for what, fh := range map[string][]byte{"the root": root, "a directory": dir} {
				if st, fh, _ := c.lookup(fh, ""); st != sNoEnt {
					t.Errorf("LOOKUP of \"\" in %s: status %d (handle %x), want NOENT", what, st, fh)
				}
			}
			// The call changed nothing: the connection still answers.
			if st, _, _ := c.lookup(root, "a"); st != sOK {
				t.Fatalf("lookup a after: %d", st)
			}
		})
	}
}
