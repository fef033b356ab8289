package ninep_test

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/hugelgupf/p9/linux"
	"github.com/hugelgupf/p9/p9"
	"github.com/semfs/semfs/ninep/v9fsconn"
)

// kernelAttacher is one 9P connection that attaches as the uids asked for, one
// after another, as v9fs does: first uid first (0, root's, for a kernel mount),
// then one attach per caller. It returns the attach function.
func kernelAttacher(t testing.TB, addr string, first uint32) func(uid uint32) p9.File {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	var uid atomic.Uint32
	cl, err := p9.NewClient(v9fsconn.WrapAs(nc, &uid), p9.WithMessageSize(256<<10))
	if err != nil {
		t.Fatalf("version: %v", err)
	}
	t.Cleanup(func() { cl.Close() })
	var mu sync.Mutex
	attach := func(u uint32) p9.File {
		mu.Lock()
		defer mu.Unlock()
		uid.Store(u)
		f, err := cl.Attach("/")
		if err != nil {
			t.Fatalf("attach as %d: %v", u, err)
		}
		return f
	}
	attach(first)
	return attach
}

// The uids and the group of these tests: nobody (on every Debian host, in
// group nogroup only) and a group the host's databases give nobody.
const (
	nobody    = 65534
	foreignGp = 65533
)

// chgrp sends Tsetattr changing name's group, as v9fs sends chown(name, -1, gid).
func chgrp(t *testing.T, root p9.File, name string, gid uint32) error {
	t.Helper()
	f := walk(t, root, name)
	defer f.Close()
	return f.SetAttr(p9.SetAttrMask{GID: true}, p9.SetAttr{UID: p9.NoUID, GID: p9.GID(gid)})
}

func hostGID(t *testing.T, p string) uint32 {
	t.Helper()
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t).Gid
}

// TestVouchedGroups: on a connection where root attached (a kernel mount), a
// caller's chgrp to a group the host's databases do not give it, and a
// create's group, are taken on the client's word (server/vouch.go); on any
// other connection, and for a fid attached before root's, they are not.
func TestVouchedGroups(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("acting as other users needs a daemon running as root (root mode)")
	}
	e := newEnv(t)
	for _, n := range []string{"plain", "vouched", "early"} {
		p := filepath.Join(e.export, n)
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(p, nobody, nobody); err != nil {
			t.Fatal(err)
		}
	}

	_, plain := dial(t, "tcp", e.tcp, "/", nobody, 256<<10)
	if err := chgrp(t, plain, "plain", foreignGp); !errors.Is(err, linux.EPERM) {
		t.Errorf("chgrp to a group outside the databases' on a connection root never attached on: %v, want EPERM", err)
	}
	if g := hostGID(t, filepath.Join(e.export, "plain")); g != nobody {
		t.Errorf("refused chgrp left gid %d", g)
	}

	// nobody attaches first, then root, then nobody again: only the later
	// attach is vouched for.
	attach := kernelAttacher(t, e.tcp, nobody)
	early := attach(nobody)
	attach(0)
	late := attach(nobody)
	if err := chgrp(t, early, "early", foreignGp); !errors.Is(err, linux.EPERM) {
		t.Errorf("chgrp through a fid attached before root's: %v, want EPERM", err)
	}
	if err := chgrp(t, late, "vouched", foreignGp); err != nil {
		t.Fatalf("chgrp on a connection root attached on: %v", err)
	}
	if g := hostGID(t, filepath.Join(e.export, "vouched")); g != foreignGp {
		t.Errorf("vouched chgrp left gid %d, want %d", g, foreignGp)
	}
	// The group is all that is vouched for: giving the file away stays EPERM.
	f := walk(t, late, "vouched")
	err := f.SetAttr(p9.SetAttrMask{UID: true}, p9.SetAttr{UID: p9.UID(foreignGp), GID: p9.NoGID})
	f.Close()
	if !errors.Is(err, linux.EPERM) {
		t.Errorf("chown to another uid on a vouching connection: %v, want EPERM", err)
	}

	// A create's gid (Tlcreate, Tmkdir) is the new file's group where vouched.
	// Sent raw: p9's client sends NoGID in plain 9P2000.L.
	for _, c := range []struct {
		name string
		root bool // attach as root first on the connection
		want uint32
	}{{"plain-new", false, nobody}, {"vouched-new", true, foreignGp}} {
		r := dialRaw(t, "tcp", e.tcp)
		r.version(256 << 10)
		if c.root {
			if err := r.attach(1, 1, "/", 0); err != nil {
				t.Fatal(err)
			}
		}
		if err := r.attach(2, 2, "/", nobody); err != nil {
			t.Fatal(err)
		}
		if err := r.walk(2, 3); err != nil {
			t.Fatal(err)
		}
		if _, err := r.call(msg(tLcreate, 10, uint32(3), c.name, oRdwr, uint32(0o644), uint32(foreignGp))); err != nil {
			t.Fatalf("Tlcreate %s: %v", c.name, err)
		}
		if _, err := r.call(msg(tMkdir, 11, uint32(2), c.name+".d", uint32(0o755), uint32(foreignGp))); err != nil {
			t.Fatalf("Tmkdir %s.d: %v", c.name, err)
		}
		r.c.Close()
		for _, n := range []string{c.name, c.name + ".d"} {
			if g := hostGID(t, filepath.Join(e.export, n)); g != c.want {
				t.Errorf("%s created with gid %d asked: gid %d on disk, want %d", n, foreignGp, g, c.want)
			}
		}
	}
}

// tMkdir is Tmkdir's type: size[4] Tmkdir tag[2] dfid[4] name[s] mode[4] gid[4].
const tMkdir = 72
