package ninep_test

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/hugelgupf/p9/linux"
	"github.com/semfs/semfs/ninep"
	"github.com/semfs/semfs/server"
)

// TestProtocol checks, with hand-built messages, what the connection shim does
// and what p9's client cannot send.
func TestProtocol(t *testing.T) {
	e := newEnv(t)
	if err := os.WriteFile(filepath.Join(e.export, "f"), []byte("data"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := dialRaw(t, "tcp", e.tcp)

	t.Run("version-msize-capped", func(t *testing.T) {
		if got := r.version(8 << 20); got != 1<<20 {
			t.Fatalf("msize %d, want 1 MiB", got)
		}
	})
	t.Run("auth-enoent", func(t *testing.T) {
		_, err := r.call(msg(tAuth, 1, uint32(9), "", "/", uint32(0)))
		wantErrno(t, "Tauth", err, linux.ENOENT)
	})
	if err := r.attach(2, 1, "/", 0); err != nil {
		t.Fatalf("attach: %v", err)
	}
	if err := r.walk(1, 2, "f"); err != nil {
		t.Fatal(err)
	}
	t.Run("xattr-eopnotsupp", func(t *testing.T) {
		_, err := r.call(msg(tXattrwalk, 3, uint32(2), uint32(3), "security.capability"))
		wantErrno(t, "Txattrwalk", err, linux.EOPNOTSUPP)
		_, err = r.call(msg(tXattrwalk, 3, uint32(2), uint32(3), ""))
		wantErrno(t, "Txattrwalk (list)", err, linux.EOPNOTSUPP)
		_, err = r.call(msg(tXattrcreate, 3, uint32(2), "user.x", uint64(1), uint32(0)))
		wantErrno(t, "Txattrcreate", err, linux.EOPNOTSUPP)
		// The fid is still usable and no xattr fid appeared.
		if _, err := r.call(msg(tGetattr, 3, uint32(2), uint64(0x7ff))); err != nil {
			t.Fatalf("getattr after xattr: %v", err)
		}
		_, err = r.call(msg(tClunk, 3, uint32(3)))
		wantErrno(t, "clunk of the refused xattr fid", err, linux.EBADF)
	})
	t.Run("flush", func(t *testing.T) {
		// Flush of a finished tag and of an unknown one both get Rflush.
		if _, err := r.call(msg(tFlush, 5, uint16(3))); err != nil {
			t.Fatal(err)
		}
		if _, err := r.call(msg(tFlush, 5, uint16(999))); err != nil {
			t.Fatal(err)
		}
		// A request followed at once by a flush of it: the request's reply (if any)
		// comes before the Rflush.
		r.send(msg(tGetattr, 6, uint32(2), uint64(0x7ff)))
		r.send(msg(tFlush, 7, uint16(6)))
		seen := map[uint16]uint8{}
		var order []uint16
		for len(seen) < 2 {
			typ, tag, _ := r.recv()
			seen[tag] = typ
			order = append(order, tag)
		}
		if order[1] != 7 {
			t.Fatalf("reply order %v", order)
		}
	})
	t.Run("malformed-closes-only-that-connection", func(t *testing.T) {
		bad := dialRaw(t, "tcp", e.tcp)
		bad.version(64 << 10)
		bad.send([]byte{3, 0, 0, 0, 104, 0, 0}) // size 3 < header
		buf := make([]byte, 1)
		if n, err := bad.c.Read(buf); err == nil {
			t.Fatalf("connection still open after a malformed message (%d bytes)", n)
		}
		if _, err := r.call(msg(tGetattr, 8, uint32(2), uint64(0x7ff))); err != nil {
			t.Fatalf("other connection broken: %v", err)
		}
	})
}

// TestAttachIdentity checks the aname and n_uname rules: each attach's identity,
// even for attaches pipelined on one connection, reaches the change stream.
func TestAttachIdentity(t *testing.T) {
	e := newEnv(t)
	if err := e.reg.Register(1001, "writer"); err != nil {
		t.Fatal(err)
	}
	r := dialRaw(t, "unix", e.unix)
	r.version(64 << 10)

	type att struct {
		aname  string
		nuname uint32
		want   string
	}
	atts := []att{
		{"@notes", noFid, "notes"},
		{"/@editor", 1001, "editor"}, // the aname's app wins over a registered uid
		{"/", 1001, "writer"},
		{"", 1002, ""}, // unregistered uid: unattributed
		{"/", noFid, ""},
		{"@notes/", 0, "notes"},
	}
	// Send every Tattach before reading any reply.
	for i, a := range atts {
		r.send(msg(tAttach, uint16(10+i), uint32(10+i), uint32(noFid), "someone", a.aname, a.nuname))
	}
	for range atts {
		typ, tag, body := r.recv()
		if typ != tAttach+1 {
			t.Fatalf("attach tag %d: type %d errno %d", tag, typ, binary.LittleEndian.Uint32(body))
		}
	}
	for i, a := range atts {
		name := "by" + string(rune('a'+i))
		fid := uint32(10 + i)
		if err := r.walk(fid, 100+fid); err != nil {
			t.Fatal(err)
		}
		if _, err := r.call(msg(tLcreate, 1, 100+fid, name, uint32(2), uint32(0o644), uint32(0))); err != nil {
			t.Fatalf("create %s: %v", name, err)
		}
		if c := e.rec.find(t, server.ChangeCreate, name); c.App != a.want {
			t.Errorf("aname %q n_uname %d: created_by %q, want %q", a.aname, a.nuname, c.App, a.want)
		}
	}

	for _, aname := range []string{"sub", "@", "@bad name", "../x", "/etc", "@notes/sub", "semfs-attach:0:1:x"} {
		err := r.attach(20, 30, aname, 0)
		wantErrno(t, "attach "+aname, err, linux.EACCES)
	}
	if !strings.Contains(e.logs.String(), `attach refused`) || !strings.Contains(e.logs.String(), `aname="@bad name"`) {
		t.Fatalf("refused attaches not logged with their aname:\n%s", e.logs.String())
	}
}

// TestConcurrentAttachAttribution runs many connections, each with several users
// attaching at once, and checks every creation is attributed to its own attach.
func TestConcurrentAttachAttribution(t *testing.T) {
	e := newEnv(t)
	for uid := uint32(2000); uid < 2004; uid++ {
		if err := e.reg.Register(uid, "app"+string(rune('0'+uid-2000))); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for c := 0; c < 4; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var inner sync.WaitGroup
			for u := uint32(0); u < 4; u++ {
				inner.Add(1)
				go func() {
					defer inner.Done()
					nc := client(t, "tcp", e.tcp, 2000+u, 64<<10)
					root, err := nc.Attach("/")
					if err != nil {
						t.Error(err)
						return
					}
					for i := 0; i < 5; i++ {
						_, d, _ := root.Walk(nil)
						name := "c" + string(rune('0'+c)) + "u" + string(rune('0'+u)) + "i" + string(rune('0'+i))
						f, _, _, err := d.Create(name, 2, 0o644, 0xFFFFFFFF, 0xFFFFFFFF)
						if err != nil {
							t.Error(err)
							return
						}
						f.Close()
					}
				}()
			}
			inner.Wait()
		}()
	}
	wg.Wait()
	n := 0
	for _, ch := range e.rec.all() {
		if ch.Op != server.ChangeCreate {
			continue
		}
		n++
		u := ch.Path[3]
		if want := "app" + string(u); ch.App != want {
			t.Errorf("%s: created_by %q, want %q", ch.Path, ch.App, want)
		}
	}
	if n != 80 {
		t.Fatalf("%d creates recorded, want 80", n)
	}
}

// TestErrnoOfEveryKind walks every core kind through the one mapping.
func TestErrnoOfEveryKind(t *testing.T) {
	seen := map[linux.Errno]server.Kind{}
	for _, k := range server.Kinds() {
		e := ninep.ErrnoOf(k)
		if e == 0 {
			t.Fatalf("%v maps to 0", k)
		}
		if prev, dup := seen[e]; dup {
			t.Errorf("%v and %v both map to %v", prev, k, e)
		}
		seen[e] = k
		if got := linux.ExtractErrno(e); got != e {
			t.Errorf("%v: p9 would send %v instead of %v", k, got, e)
		}
	}
	for k, want := range map[server.Kind]linux.Errno{
		server.KindNotFound: linux.ENOENT, server.KindNotSupported: linux.EOPNOTSUPP,
		server.KindPermission: linux.EACCES, server.KindNotPermitted: linux.EPERM,
		server.KindLoop: linux.ELOOP, server.KindCrossDevice: linux.EXDEV,
		server.KindTooManyLinks: linux.EMLINK, server.KindQuota: linux.EDQUOT,
		server.KindNoSpace: linux.ENOSPC, server.KindBadFile: linux.EBADF,
	} {
		if got := ninep.ErrnoOf(k); got != want {
			t.Errorf("%v: %v, want %v", k, got, want)
		}
	}
	defer func() {
		if recover() == nil {
			t.Fatal("an unknown kind did not panic")
		}
	}()
	ninep.ErrnoOf(server.Kind(len(server.Kinds())))
}
