package nfs_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/semfs/semfs/server"
)

// TestHandleSurvivesRestart: handles taken before a restart of the FS and the NFS
// server (same directories, new process state) work on a new connection without
// a new MOUNT, including one for a file renamed before the restart.
func TestHandleSurvivesRestart(t *testing.T) {
	e := newEnv(t)
	c, root := e.client("/@notes")
	_, dir := c.mkdir(root, "dir")
	_, f := c.create(dir, "f", 0, 0)
	_, _, _, verf1 := c.write(f, 0, []byte("kept"), 2)
	_, g := c.create(dir, "g", 0, 0)
	if st, _ := c.call(pRename, (&enc{}).dirop(dir, "g").dirop(root, "g2")); st != sOK {
		t.Fatal(st)
	}
	// rename the directory itself: f's handle must follow its parent
	if st, _ := c.call(pRename, (&enc{}).dirop(root, "dir").dirop(root, "dir2")); st != sOK {
		t.Fatal(st)
	}

	e.restart()

	// A new connection as another caller: root, whom a root daemon lets
	// write in the anonymous caller's (nobody's) directory.
	c2 := dialRaw(t, e.addr).as(0, 1)
	for name, fh := range map[string][]byte{"root": root, "dir": dir, "f": f, "g": g} {
		if st, _ := c2.getattr(fh); st != sOK {
			t.Errorf("%s: getattr after restart: %d", name, st)
		}
	}
	if st, data, _ := c2.read(f, 0, 10); st != sOK || string(data) != "kept" {
		t.Errorf("read after restart: %d %q", st, data)
	}
	// A new write verifier tells clients to resend UNSTABLE data not yet committed.
	if _, _, _, verf2 := c2.write(f, 4, []byte("!"), 0); verf2 == verf1 {
		t.Errorf("write verifier unchanged across a restart")
	}
	if st, _ := c2.create(dir, "new", 0, 0); st != sOK {
		t.Errorf("create in old dir handle: %d", st)
	}
	if app, _ := e.created("dir2/new"); app != "notes" {
		t.Errorf("app from a pre-restart handle: %q", app)
	}
}

// TestTenThousand: a handle held while 10,000 other files are created (over NFS)
// and listed still works, and READDIRPLUS and READDIR list all 10,000 exactly once.
func TestTenThousand(t *testing.T) {
	if testing.Short() {
		t.Skip("10,000 creates")
	}
	e := newEnv(t)
	c, root := e.client("/@notes")
	_, held := c.create(root, "held", 0, 0)
	c.write(held, 0, []byte("still here"), 2)
	_, big := c.mkdir(root, "big")
	const n = 10000
	for i := 0; i < n; i++ {
		// pipelined: send all, then read all, to keep the test quick
		c.send(progNFS, 3, pCreate, (&enc{}).dirop(big, fmt.Sprintf("f%05d", i)).u32(0).sattr(0o644).b)
		if i%64 == 63 || i == n-1 {
			for j := i - i%64; j <= i; j++ {
				d := c.recv(c.xid - uint32(i-j))
				if st := d.u32(); st != sOK {
					t.Fatalf("create %d: %d", j, st)
				}
			}
		}
	}
	names, fhs := c.readdirplus(big, 32768)
	if len(names) != n+2 {
		t.Fatalf("readdirplus listed %d entries, want %d", len(names), n+2)
	}
	seen := map[string]bool{}
	for _, nm := range names {
		if seen[nm] {
			t.Fatalf("readdirplus listed %q twice", nm)
		}
		seen[nm] = true
	}
	if len(fhs) != n {
		t.Fatalf("readdirplus gave %d handles", len(fhs))
	}
	if got := c.readdir(big, 8192); len(got) != n+2 {
		t.Fatalf("readdir listed %d", len(got))
	}
	if st, data, _ := c.read(held, 0, 100); st != sOK || string(data) != "still here" {
		t.Fatalf("held handle after 10,000 files: %d %q", st, data)
	}
	if st, _ := c.getattr(fhs["f04321"]); st != sOK {
		t.Fatalf("handle from the listing: %d", st)
	}
}

// TestCookiesAcrossChanges: a listing continues with its verifier and cookie while
// files are created and removed, in other directories and in the listed one.
func TestCookiesAcrossChanges(t *testing.T) {
	e := newEnv(t)
	c, root := e.client("/")
	_, d := c.mkdir(root, "d")
	for i := 0; i < 300; i++ {
		c.create(d, fmt.Sprintf("e%03d", i), 0, 0)
	}
	// first page
	st, dd := c.call(pReaddirplus, (&enc{}).opaque(d).u64(0).u64(0).u32(2048).u32(4096))
	if st != sOK {
		t.Fatal(st)
	}
	dd.postOp()
	verf := dd.u64()
	var cookie uint64
	var names []string
	for dd.u32() == 1 {
		dd.u64()
		names = append(names, string(dd.opaque()))
		cookie = dd.u64()
		dd.postOp()
		if dd.u32() == 1 {
			dd.opaque()
		}
	}
	if dd.u32() == 1 {
		t.Fatalf("first page was the whole listing (%d names); make pages smaller", len(names))
	}
	// unrelated and related changes
	c.create(root, "elsewhere", 0, 0)
	c.create(d, "a-new-first-entry", 0, 0)
	c.call(pRemove, (&enc{}).dirop(d, "e299"))
	for {
		st, dd := c.call(pReaddirplus, (&enc{}).opaque(d).u64(cookie).u64(verf).u32(2048).u32(4096))
		if st != sOK {
			t.Fatalf("continuing listing: status %d (BADCOOKIE is 10003)", st)
		}
		dd.postOp()
		if v := dd.u64(); v != verf {
			t.Fatalf("verifier changed mid-listing")
		}
		for dd.u32() == 1 {
			dd.u64()
			names = append(names, string(dd.opaque()))
			cookie = dd.u64()
			dd.postOp()
			if dd.u32() == 1 {
				dd.opaque()
			}
		}
		if dd.u32() == 1 {
			break
		}
	}
	if len(names) != 302 { // the snapshot: ".", "..", 300 entries
		t.Fatalf("listed %d names, want 302 (one consistent snapshot)", len(names))
	}
}

// TestRenamedElsewhere: files renamed or removed by another front end (here the
// core directly, as 9P does) keep correct handles: same-directory renames are
// found by the fallback scan, cross-directory ones through Server.Apply (the
// change stream), and removed files are STALE.
func TestRenamedElsewhere(t *testing.T) {
	e := newEnv(t)
	c, root := e.client("/")
	_, a := c.mkdir(root, "a")
	c.mkdir(root, "b")
	_, f1 := c.create(a, "one", 0, 0)
	_, f2 := c.create(a, "two", 0, 0)
	_, f3 := c.create(a, "three", 0, 0)
	ctx := context.Background()
	if err := e.fsys.Rename(ctx, "a/one", "a/uno"); err != nil {
		t.Fatal(err)
	}
	if st, _ := c.getattr(f1); st != sOK {
		t.Errorf("renamed in place by another front end: %d", st)
	}
	if err := e.fsys.Rename(ctx, "a/two", "b/dos"); err != nil {
		t.Fatal(err)
	}
	e.srv.Apply(ctx, server.Change{Op: server.ChangeRename, Path: "a/two", NewPath: "b/dos"})
	if st, _ := c.getattr(f2); st != sOK {
		t.Errorf("renamed across directories, reported by the change stream: %d", st)
	}
	if err := e.fsys.Remove(ctx, "a/three", false); err != nil {
		t.Fatal(err)
	}
	if st, _ := c.getattr(f3); st != sStale {
		t.Errorf("removed by another front end: %d, want STALE", st)
	}
	// An inode number reused by a new file must not revive the old handle: the
	// generation (birth time) differs.
	for i := 0; i < 50; i++ {
		p := filepath.Join(e.dir, "a", fmt.Sprintf("re%d", i))
		os.WriteFile(p, nil, 0o644)
	}
	if st, _ := c.getattr(f3); st != sStale {
		t.Errorf("after inode reuse: %d, want STALE", st)
	}
}

// TestHandleOfReplacedFile: connection A holds the handle of d/f; a host
// process renames d away and makes a new d/f. A's handle names its own file
// (found again, or STALE), never the new one: handles carry the inode and birth
// time, not the name.
func TestHandleOfReplacedFile(t *testing.T) {
	e := newEnv(t)
	for i, addr := range []string{e.addr} {
		d := fmt.Sprintf("d%d", i)
		if err := os.Mkdir(filepath.Join(e.dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(e.dir, d, "f"), []byte("own file"), 0o644); err != nil {
			t.Fatal(err)
		}
		c := dialRaw(t, addr).as(0, 0)
		_, root := c.mount("/")
		_, dh, _ := c.lookup(root, d)
		_, fh, _ := c.lookup(dh, "f")
		if err := os.Rename(filepath.Join(e.dir, d), filepath.Join(e.dir, d+"-old")); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(filepath.Join(e.dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(e.dir, d, "f"), []byte("THE OTHER FILE"), 0o644); err != nil {
			t.Fatal(err)
		}
		st, data, _ := c.read(fh, 0, 100)
		if st != sStale && (st != sOK || string(data) != "own file") {
			t.Errorf("%s: READ of the replaced file's handle: %d %q, want its own data or STALE", addr, st, data)
		}
		if st, a := c.getattr(fh); st != sStale && (st != sOK || a.size != 8) {
			t.Errorf("%s: GETATTR of the replaced file's handle: %d %+v", addr, st, a)
		}
		if st, _, _, _ := c.write(fh, 0, []byte("X"), 2); st == sOK {
			if b, _ := os.ReadFile(filepath.Join(e.dir, d, "f")); string(b) != "THE OTHER FILE" {
				t.Errorf("%s: WRITE through the replaced file's handle reached the new file: %q", addr, b)
			}
		}
	}
}
