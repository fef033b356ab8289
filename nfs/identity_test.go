package nfs_test

import (
	"bytes"
	"syscall"
	"testing"
	"time"

	"github.com/semfs/semfs/nfs"
	"github.com/semfs/semfs/server"
)

// TestKindMapping walks every core Kind: each maps to an errno that classifies
// back to the same Kind and to a distinct, non-OK NFS status, except the two
// NFSv3 has no word for (a loop answers INVAL as Linux's nfsd does, a bad
// server descriptor IO), and the kinds issue 14 added carry their own status.
func TestKindMapping(t *testing.T) {
	shares := map[server.Kind]server.Kind{server.KindLoop: server.KindInvalid, server.KindBadFile: server.KindIO}
	seen := map[uint32]server.Kind{}
	for _, k := range server.Kinds() {
		errno, status := nfs.ToNFS(k)
		if status == 0 {
			t.Errorf("%v maps to NFS3_OK", k)
		}
		if to, ok := shares[k]; ok {
			if _, st := nfs.ToNFS(to); st != status {
				t.Errorf("%v maps to %d, want %v's %d", k, status, to, st)
			}
		} else {
			if other, dup := seen[status]; dup {
				t.Errorf("%v and %v both map to status %d", k, other, status)
			}
			seen[status] = k
		}
		if back := server.KindOf(syscall.Errno(errno)); back != k {
			t.Errorf("%v -> errno %v -> %v", k, syscall.Errno(errno), back)
		}
	}
	for k, want := range map[server.Kind]uint32{
		server.KindPermission: 13, server.KindNotPermitted: 1, server.KindCrossDevice: 18,
		server.KindTooManyLinks: 31, server.KindQuota: 69, server.KindNoSpace: 28, server.KindLoop: 22,
	} {
		if _, st := nfs.ToNFS(k); st != want {
			t.Errorf("%v: NFS status %d, want %d (RFC 1813)", k, st, want)
		}
	}
}

// TestAttribution: the mount path names the app (carried in handles, so it holds
// on a data connection other than the MOUNT one), and on an anonymous mount the
// AUTH_UNIX uid of each call picks the registered app.
func TestAttribution(t *testing.T) {
	e := newEnv(t)
	if err := e.reg.Register(4242, "agent"); err != nil {
		t.Fatal(err)
	}
	mountConn := dialRaw(t, e.addr)
	_, notesRoot := mountConn.mount("/@notes")
	_, editorRoot := mountConn.mount("/@editor")
	_, anonRoot := mountConn.mount("/")

	data := dialRaw(t, e.addr).as(4242, 100) // one data connection, uid registered to "agent"
	for _, tc := range []struct {
		root []byte
		name string
		want string
	}{
		{notesRoot, "by-notes", "notes"}, // mount app wins over the uid
		{editorRoot, "by-editor", "editor"},
		{anonRoot, "by-uid", "agent"},
	} {
		if st, _ := data.create(tc.root, tc.name, 0, 0); st != sOK {
			t.Fatalf("create %s: %d", tc.name, st)
		}
		if app, _ := e.created(tc.name); app != tc.want {
			t.Errorf("%s created_by %q, want %q", tc.name, app, tc.want)
		}
	}
	// The uid is read per call: the same connection with another uid is unattributed.
	other := dialRaw(t, e.addr).as(777, 100)
	if st, _ := other.create(anonRoot, "by-nobody", 0, 0); st != sOK {
		t.Fatal(st)
	}
	if app, ok := e.created("by-nobody"); !ok || app != "" {
		t.Errorf("unregistered uid: created_by %q (%v)", app, ok)
	}
	// Mixed credentials on one connection, call by call.
	mixed := dialRaw(t, e.addr)
	mixed.as(4242, 1)
	mixed.create(anonRoot, "m1", 0, 0)
	mixed.as(999, 1)
	mixed.create(anonRoot, "m2", 0, 0)
	mixed.unix = false
	mixed.create(anonRoot, "m3", 0, 0)
	for name, want := range map[string]string{"m1": "agent", "m2": "", "m3": ""} {
		if app, _ := e.created(name); app != want {
			t.Errorf("%s created_by %q, want %q", name, app, want)
		}
	}
	// The same file has handles differing only by app; both work.
	_, h1, _ := data.lookup(notesRoot, "by-uid")
	_, h2, _ := data.lookup(editorRoot, "by-uid")
	if bytes.Equal(h1, h2) {
		t.Errorf("handles of two mounts are equal: the app is not in the handle")
	}
	if st, _ := data.getattr(h1); st != sOK {
		t.Errorf("getattr via notes handle: %d", st)
	}
}

// TestChangeStream: NFS writes reach the core's change stream: a create with its
// creator at once, data writes as one debounced ChangeWrite, renames and removes.
func TestChangeStream(t *testing.T) {
	e := newEnv(t)
	c, root := e.client("/@notes")
	_, f := c.create(root, "doc", 0, 0)
	if app, ok := e.created("doc"); !ok || app != "notes" {
		t.Fatalf("create: %q %v", app, ok)
	}
	for i := 0; i < 20; i++ {
		c.write(f, uint64(i*10), []byte("0123456789"), 0)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !e.hasChange(server.ChangeWrite, "doc", "") {
		if time.Now().After(deadline) {
			t.Fatal("no ChangeWrite after WRITEs")
		}
		time.Sleep(20 * time.Millisecond)
	}
	e.mu.Lock()
	writes := 0
	for _, ch := range e.changes {
		if ch.Op == server.ChangeWrite {
			writes++
		}
	}
	e.mu.Unlock()
	if writes > 3 {
		t.Errorf("%d ChangeWrites for 20 WRITEs: not debounced", writes)
	}
	c.call(pRename, (&enc{}).dirop(root, "doc").dirop(root, "doc2"))
	c.call(pRemove, (&enc{}).dirop(root, "doc2"))
	if !e.hasChange(server.ChangeRename, "doc", "doc2") || !e.hasChange(server.ChangeRemove, "doc2", "") {
		t.Errorf("rename/remove not in the change stream")
	}
}
