package nfs_test

import "testing"

// TestLookupEmptyName: no entry has the empty name, so LOOKUP of "" is
// NOENT (as nfs-ganesha answers; differential finding N7), not the
// directory itself.
func TestLookupEmptyName(t *testing.T) {
	e := newEnv(t)
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
}
