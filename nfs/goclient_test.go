package nfs_test

import (
	"bytes"
	"io"
	"sort"
	"testing"
	"time"

	nfsc "github.com/willscott/go-nfs-client/nfs"
	"github.com/willscott/go-nfs-client/nfs/rpc"
)

// TestGoClient drives the server with github.com/willscott/go-nfs-client, an
// independent NFSv3 implementation: mount, mkdir, create, write (FILE_SYNC) and
// close (COMMIT), read, list, setattr, symlink, rename, remove, rmdir; the core
// sees the creator.
func TestGoClient(t *testing.T) {
	e := newEnv(t)
	if err := e.reg.Register(4242, "agent"); err != nil {
		t.Fatal(err)
	}
	mount := func(path string, uid uint32) *nfsc.Target {
		t.Helper()
		cl, err := nfsc.DialServiceAtPort("127.0.0.1", e.port)
		if err != nil {
			t.Fatal(err)
		}
		m := &nfsc.Mount{Client: cl}
		v, err := m.Mount(path, rpc.NewAuthUnix("semfs-test", uid, uid).Auth())
		if err != nil {
			t.Fatalf("mount %s: %v", path, err)
		}
		t.Cleanup(func() { m.Unmount(); cl.Close() })
		return v
	}
	v := mount("/@notes", 0)

	if _, err := v.Mkdir("docs", 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := v.OpenFile("docs/plan.txt", 0o644)
	if err != nil {
		t.Fatal(err)
	}
	payload := bytes.Repeat([]byte("semfs over nfs\n"), 10000)
	if _, err := f.Write(payload); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if e.read("docs/plan.txt") != string(payload) {
		t.Fatal("on-disk contents differ")
	}
	if app, _ := e.created("docs/plan.txt"); app != "notes" {
		t.Fatalf("created_by %q", app)
	}

	r, err := v.Open("docs/plan.txt")
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(r)
	if err != nil || !bytes.Equal(got, payload) {
		t.Fatalf("read back %d bytes, %v", len(got), err)
	}

	if err := v.Symlink("plan.txt", "docs/latest"); err != nil {
		t.Fatal(err)
	}
	mt := uint32(time.Now().Add(-time.Hour).Unix())
	if err := v.Setattr("docs/plan.txt", nfsc.Sattr3{
		Mode:  nfsc.SetMode{SetIt: true, Mode: 0o640},
		Mtime: nfsc.SetTime{SetIt: 2, Time: nfsc.NFS3Time{Seconds: mt}},
	}); err != nil {
		t.Fatal(err)
	}
	a, err := v.Getattr("docs/plan.txt")
	if err != nil || a.Mode().Perm() != 0o640 || a.Mtime.Seconds != mt {
		t.Fatalf("getattr after setattr: %+v %v", a, err)
	}

	ents, err := v.ReadDirPlus("docs")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, en := range ents {
		names = append(names, en.Name())
	}
	sort.Strings(names)
	if len(names) < 2 || names[len(names)-2] != "latest" || names[len(names)-1] != "plan.txt" {
		t.Fatalf("readdirplus: %v", names)
	}

	if err := v.Rename("docs/plan.txt", "plan-moved.txt"); err != nil {
		t.Fatal(err)
	}
	if !e.hasChange(3, "docs/plan.txt", "plan-moved.txt") {
		t.Fatal("rename not in the change stream")
	}
	if err := v.Remove("docs/latest"); err != nil {
		t.Fatal(err)
	}
	if err := v.RmDir("docs"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := v.Lookup("docs"); err == nil {
		t.Fatal("docs still there")
	}

	// Attribution by AUTH_UNIX uid on an anonymous mount.
	w := mount("/", 4242)
	if _, err := w.Create("by-agent", 0o644); err != nil {
		t.Fatal(err)
	}
	if app, _ := e.created("by-agent"); app != "agent" {
		t.Fatalf("created_by by uid %q", app)
	}
}
