package nfs_test

import (
	"testing"

	"github.com/semfs/semfs/server"
)

// A SETATTR of times alone is a touch the change stream reports
// (server.ChangeSetTimes, the feed's setattr); the times a CREATE sets on
// the file it makes (its sattr3's, an EXCLUSIVE create's verifier) are part
// of the create and make none.
func TestTouchIsReportedButCreatesTimesAreNot(t *testing.T) {
	e := newEnv(t)
	c, root := e.client("/@notes")
	// CREATE UNCHECKED with mode 0644 and both times SET_TO_SERVER_TIME.
	st, d := c.call(pCreate, (&enc{}).dirop(root, "u").u32(0).u32(1).u32(0o644).u32(0).u32(0).u32(0).u32(1).u32(1))
	if st != sOK || d.u32() != 1 {
		t.Fatalf("create with times: %d", st)
	}
	u := d.opaque()
	if st, _ := c.create(root, "x", 2, 0x1122334455667788); st != sOK {
		t.Fatalf("create exclusive: %d", st)
	}
	count := func(p string) int {
		e.mu.Lock()
		defer e.mu.Unlock()
		n := 0
		for _, ch := range e.changes {
			if ch.Op == server.ChangeSetTimes && ch.Path == p {
				n++
			}
		}
		return n
	}
	if n, m := count("u"), count("x"); n+m != 0 {
		t.Fatalf("creates' own times reported as touches: u %d, x %d", n, m)
	}
	// SETATTR: no mode, uid, gid or size; both times SET_TO_SERVER_TIME; no guard.
	if st, _ := c.call(pSetattr, (&enc{}).opaque(u).u32(0).u32(0).u32(0).u32(0).u32(1).u32(1).u32(0)); st != sOK {
		t.Fatalf("setattr times: %d", st)
	}
	if n := count("u"); n != 1 {
		t.Fatalf("a SETATTR of times made %d ChangeSetTimes, want 1", n)
	}
}
