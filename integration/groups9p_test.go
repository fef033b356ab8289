package integration

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/hugelgupf/p9/linux"
	"github.com/hugelgupf/p9/p9"
	"github.com/semfs/semfs/integration/semfstest"
	"github.com/semfs/semfs/ninep/v9fsconn"
)

// TestChgrpVouchedByAKernelMount9P: through the real daemon in root mode, a
// 9P connection that attached as root first, as a kernel mount does, gets a
// caller's chgrp to a group the host's databases do not give it (the client
// kernel checked it: docs/posix.md); a connection that never attached as root
// gets EPERM, and the file keeps its group.
func TestChgrpVouchedByAKernelMount9P(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("acting as other users needs a daemon running as root (root mode)")
	}
	const nobody, foreign = 65534, 65533 // foreign: a group the databases do not give nobody
	d := semfstest.Start(t, semfstest.Options{ModelDir: "off"})
	for _, n := range []string{"user-only", "kernel"} {
		p := filepath.Join(d.Data, n)
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(p, nobody, nobody); err != nil {
			t.Fatal(err)
		}
	}
	chgrp := func(root p9.File, name string) error {
		_, f, err := root.Walk([]string{name})
		if err != nil {
			t.Fatalf("walk %s: %v", name, err)
		}
		defer f.Close()
		return f.SetAttr(p9.SetAttrMask{GID: true}, p9.SetAttr{UID: p9.NoUID, GID: p9.GID(foreign)})
	}
	gidOf := func(name string) uint32 {
		fi, err := os.Lstat(filepath.Join(d.Data, name))
		if err != nil {
			t.Fatal(err)
		}
		return fi.Sys().(*syscall.Stat_t).Gid
	}

	if err := chgrp(d.Attach9P(t, "/", nobody), "user-only"); !errors.Is(err, linux.EPERM) {
		t.Errorf("chgrp on a connection that only attached as nobody: %v, want EPERM", err)
	}
	if g := gidOf("user-only"); g != nobody {
		t.Errorf("refused chgrp left gid %d", g)
	}

	// One connection, root's attach and then nobody's, as v9fs makes them.
	nc, err := net.Dial("tcp", d.NineP)
	if err != nil {
		t.Fatal(err)
	}
	var uid atomic.Uint32 // 0: root first
	cl, err := p9.NewClient(v9fsconn.WrapAs(nc, &uid), p9.WithMessageSize(1<<20))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if _, err := cl.Attach("/"); err != nil {
		t.Fatalf("attach as root: %v", err)
	}
	uid.Store(nobody)
	root, err := cl.Attach("/")
	if err != nil {
		t.Fatalf("attach as nobody: %v", err)
	}
	if err := chgrp(root, "kernel"); err != nil {
		t.Fatalf("chgrp on a connection root attached on: %v", err)
	}
	if g := gidOf("kernel"); g != foreign {
		t.Errorf("vouched chgrp left gid %d, want %d", g, foreign)
	}
}
