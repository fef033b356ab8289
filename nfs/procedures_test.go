package nfs_test

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func TestMountPaths(t *testing.T) {
	e := newEnv(t)
	c := dialRaw(t, e.addr)
	for _, tc := range []struct {
		path string
		ok   bool
	}{
		{"/", true}, {"", true}, {"/@notes", true}, {"/@editor/", true},
		{"/nope", false}, {"/@", false}, {"/@bad app", false}, {"/@notes/sub", false},
	} {
		st, fh := c.mount(tc.path)
		if got := st == 0; got != tc.ok {
			t.Errorf("mount %q: status %d, want ok=%v", tc.path, st, tc.ok)
		}
		if tc.ok && len(fh) == 0 || len(fh) > 64 || len(fh)%4 != 0 {
			t.Errorf("mount %q: handle of %d bytes", tc.path, len(fh))
		}
	}
	// EXPORT, which go-nfs lacks, lists "/".
	d := c.recv(c.send(progMount, 3, 5, nil))
	if d.u32() != 1 || string(d.opaque()) != "/" || d.u32() != 0 || d.u32() != 0 {
		t.Errorf("EXPORT reply malformed")
	}
	// DUMP and UMNTALL answer, and the connection goes on.
	if d := c.recv(c.send(progMount, 3, 2, nil)); d.u32() != 0 {
		t.Errorf("DUMP not empty")
	}
	c.recv(c.send(progMount, 3, 4, nil))
	if st, _ := c.mount("/"); st != 0 {
		t.Errorf("mount after EXPORT: %d", st)
	}
}

// TestProcedures drives every NFSv3 procedure a Linux or macOS client uses over a
// real socket and checks results and the status codes of the failures.
func TestProcedures(t *testing.T) {
	e := newEnv(t)
	c, root := e.client("/@notes")

	t.Run("NULL and GETATTR root", func(t *testing.T) {
		c.recv(c.send(progNFS, 3, pNull, nil))
		st, a := c.getattr(root)
		if st != sOK || a.typ != 2 || a.nlink < 2 {
			t.Fatalf("getattr root: status %d attr %+v (want dir, nlink>=2)", st, a)
		}
	})

	var dir, f []byte
	t.Run("MKDIR", func(t *testing.T) {
		var st uint32
		st, dir = c.mkdir(root, "d")
		if st != sOK {
			t.Fatalf("mkdir: %d", st)
		}
		if st, _ := c.mkdir(root, "d"); st != sExist {
			t.Fatalf("mkdir existing: %d, want EXIST", st)
		}
		if _, a := c.getattr(dir); a.nlink < 2 || a.mode&0o777 != 0o755 {
			t.Fatalf("new dir attrs %+v", a)
		}
	})

	t.Run("CREATE modes", func(t *testing.T) {
		var st uint32
		st, f = c.create(dir, "f", 0, 0)
		if st != sOK {
			t.Fatalf("create unchecked: %d", st)
		}
		if st, _ := c.create(dir, "f", 0, 0); st != sOK {
			t.Fatalf("create unchecked over existing: %d", st)
		}
		if st, _ := c.create(dir, "f", 1, 0); st != sExist {
			t.Fatalf("create guarded over existing: %d, want EXIST", st)
		}
		st, x1 := c.create(dir, "x", 2, 0x1122334455667788)
		if st != sOK {
			t.Fatalf("create exclusive: %d", st)
		}
		st, x2 := c.create(dir, "x", 2, 0x1122334455667788)
		if st != sOK || !bytes.Equal(x1, x2) {
			t.Fatalf("create exclusive retransmitted: %d, same handle %v", st, bytes.Equal(x1, x2))
		}
		if st, _ := c.create(dir, "x", 2, 0x99); st != sExist {
			t.Fatalf("create exclusive, other verifier: %d, want EXIST", st)
		}
		if app, ok := e.created("d/f"); !ok || app != "notes" {
			t.Fatalf("created_by of d/f = %q, %v", app, ok)
		}
	})

	var verf uint64
	t.Run("WRITE stability and COMMIT", func(t *testing.T) {
		st, n, committed, v := c.write(f, 0, []byte("hello "), 0)
		if st != sOK || n != 6 || committed != 0 {
			t.Fatalf("unstable write: status %d count %d committed %d (want UNSTABLE)", st, n, committed)
		}
		verf = v
		st, n, committed, v = c.write(f, 6, []byte("world"), 2)
		if st != sOK || n != 5 || committed != 2 || v != verf {
			t.Fatalf("file_sync write: status %d count %d committed %d verf %x/%x", st, n, committed, v, verf)
		}
		st, v = c.commit(f)
		if st != sOK || v != verf {
			t.Fatalf("commit: %d verf %x want %x", st, v, verf)
		}
		if got := e.read("d/f"); got != "hello world" {
			t.Fatalf("on disk: %q", got)
		}
	})

	t.Run("READ", func(t *testing.T) {
		st, data, eof := c.read(f, 0, 100)
		if st != sOK || string(data) != "hello world" || !eof {
			t.Fatalf("read: %d %q eof=%v", st, data, eof)
		}
		st, data, _ = c.read(f, 6, 3)
		if st != sOK || string(data) != "wor" {
			t.Fatalf("read at 6: %d %q", st, data)
		}
		if st, _, _ := c.read(dir, 0, 10); st == sOK {
			t.Fatalf("read of a directory succeeded")
		}
	})

	t.Run("LOOKUP and ACCESS", func(t *testing.T) {
		st, fh, a := c.lookup(dir, "f")
		if st != sOK || !bytes.Equal(fh, f) || a.size != 11 {
			t.Fatalf("lookup: %d same=%v %+v", st, bytes.Equal(fh, f), a)
		}
		if st, _, _ := c.lookup(dir, "missing"); st != sNoEnt {
			t.Fatalf("lookup missing: %d", st)
		}
		if st, _, _ := c.lookup(f, "x"); st != sNotDir {
			t.Fatalf("lookup in a file: %d", st)
		}
		st, d := c.call(pAccess, (&enc{}).opaque(f).u32(0x3f))
		if st != sOK {
			t.Fatalf("access: %d", st)
		}
		d.postOp()
		if d.u32() == 0 {
			t.Fatalf("access granted nothing")
		}
	})

	t.Run("SETATTR", func(t *testing.T) {
		// mode, size and a client mtime; atime untouched.
		before, _ := os.Lstat(filepath.Join(e.dir, "d/f"))
		e1 := (&enc{}).opaque(f).u32(1).u32(0o600).u32(0).u32(0).u32(1).u64(5).u32(0).u32(2).u32(1_000_000_000).u32(0).u32(0)
		if st, _ := c.call(pSetattr, e1); st != sOK {
			t.Fatalf("setattr: %d", st)
		}
		fi, _ := os.Lstat(filepath.Join(e.dir, "d/f"))
		if fi.Mode().Perm() != 0o600 || fi.Size() != 5 || fi.ModTime().Unix() != 1_000_000_000 {
			t.Fatalf("after setattr: %v %d %v", fi.Mode(), fi.Size(), fi.ModTime())
		}
		_ = before
		// SET_TO_SERVER_TIME for mtime.
		e2 := (&enc{}).opaque(f).u32(0).u32(0).u32(0).u32(0).u32(0).u32(1).u32(0)
		if st, _ := c.call(pSetattr, e2); st != sOK {
			t.Fatalf("setattr server time: %d", st)
		}
		fi, _ = os.Lstat(filepath.Join(e.dir, "d/f"))
		if d := time.Since(fi.ModTime()); d < 0 || d > time.Minute {
			t.Fatalf("mtime after SET_TO_SERVER_TIME: %v", fi.ModTime())
		}
		// size on a directory
		e3 := (&enc{}).opaque(dir).u32(0).u32(0).u32(0).u32(1).u64(0).u32(0).u32(0).u32(0)
		if st, _ := c.call(pSetattr, e3); st == sOK {
			t.Fatalf("truncating a directory succeeded")
		}
	})

	var link []byte
	t.Run("SYMLINK and READLINK", func(t *testing.T) {
		target := "../../not/followed//x"
		st, d := c.call(pSymlink, (&enc{}).dirop(dir, "l").sattr(-1).str(target))
		if st != sOK {
			t.Fatalf("symlink: %d", st)
		}
		d.u32()
		link = d.opaque()
		got, err := os.Readlink(filepath.Join(e.dir, "d/l"))
		if err != nil || got != target {
			t.Fatalf("on disk link %q %v", got, err)
		}
		st, d = c.call(pReadlink, (&enc{}).opaque(link))
		if st != sOK {
			t.Fatalf("readlink: %d", st)
		}
		d.postOp()
		if got := string(d.opaque()); got != target {
			t.Fatalf("readlink %q", got)
		}
		if st, _ := c.call(pReadlink, (&enc{}).opaque(f)); st != sInval {
			t.Fatalf("readlink of a file: %d, want INVAL", st)
		}
	})

	t.Run("LINK", func(t *testing.T) {
		st, d := c.call(pLink, (&enc{}).opaque(f).dirop(root, "hard"))
		if st != sOK {
			t.Fatalf("link: %d", st)
		}
		a, ok := d.postOp()
		if !ok || a.nlink != 2 {
			t.Fatalf("link file attrs %+v %v", a, ok)
		}
		d.wcc()
		if d.rest() != 0 {
			t.Fatalf("LINK3resok has %d extra bytes", d.rest())
		}
		fi1, _ := os.Stat(filepath.Join(e.dir, "hard"))
		fi2, _ := os.Stat(filepath.Join(e.dir, "d/f"))
		if !os.SameFile(fi1, fi2) {
			t.Fatalf("hard link is another file")
		}
		st, d = c.call(pLink, (&enc{}).opaque(f).dirop(root, "hard"))
		if st != sExist {
			t.Fatalf("link over existing: %d", st)
		}
		d.postOp()
		d.wcc()
		if d.rest() != 0 {
			t.Fatalf("LINK3resfail has %d extra bytes", d.rest())
		}
		if st, _ := c.call(pLink, (&enc{}).opaque(dir).dirop(root, "dirlink")); st == sOK {
			t.Fatalf("hard link of a directory succeeded")
		}
		if app, _ := e.created("hard"); app != "notes" {
			t.Fatalf("created_by of hard link %q", app)
		}
	})

	t.Run("READDIR and READDIRPLUS", func(t *testing.T) {
		want := []string{".", "..", "f", "l", "x"}
		if got := c.readdir(dir, 4096); !slices.Equal(got, want) {
			t.Fatalf("readdir %v", got)
		}
		got, fhs := c.readdirplus(dir, 8192)
		if !slices.Equal(got, want) || !bytes.Equal(fhs["f"], f) || !bytes.Equal(fhs["l"], link) {
			t.Fatalf("readdirplus %v", got)
		}
	})

	t.Run("RENAME", func(t *testing.T) {
		// across directories, then over an existing target.
		st, d := c.call(pRename, (&enc{}).dirop(dir, "f").dirop(root, "moved"))
		if st != sOK {
			t.Fatalf("rename across dirs: %d", st)
		}
		d.wcc()
		d.wcc()
		if st, a := c.getattr(f); st != sOK || a.size != 5 {
			t.Fatalf("handle after rename: %d %+v", st, a)
		}
		if st, _ := c.call(pRename, (&enc{}).dirop(dir, "x").dirop(root, "moved")); st != sOK {
			t.Fatalf("rename over existing: %d", st)
		}
		// The replaced file lives on as "hard" (LINK above): its handle follows.
		if st, a := c.getattr(f); st != sOK || a.nlink != 1 {
			t.Fatalf("replaced but still linked file's handle: %d %+v", st, a)
		}
		if st, _ := c.call(pRemove, (&enc{}).dirop(root, "hard")); st != sOK {
			t.Fatalf("remove hard: %d", st)
		}
		if st, _ := c.getattr(f); st != sStale {
			t.Fatalf("removed file's handle: %d, want STALE", st)
		}
		if !e.hasChange(2+1, "d/f", "moved") { // ChangeRename
			t.Fatalf("no rename change")
		}
		if st, _ := c.call(pRename, (&enc{}).dirop(dir, "nothing").dirop(root, "y")); st != sNoEnt {
			t.Fatalf("rename missing: %d", st)
		}
	})

	t.Run("REMOVE and RMDIR", func(t *testing.T) {
		if st, _ := c.call(pRmdir, (&enc{}).dirop(root, "d")); st != sNotEmpty {
			t.Fatalf("rmdir non-empty: %d", st)
		}
		if st, _ := c.call(pRemove, (&enc{}).dirop(root, "d")); st != sIsDir {
			t.Fatalf("remove of a dir: %d", st)
		}
		if st, _ := c.call(pRemove, (&enc{}).dirop(dir, "l")); st != sOK {
			t.Fatalf("remove link: %d", st)
		}
		if st, _ := c.call(pRmdir, (&enc{}).dirop(root, "d")); st != sOK {
			t.Fatalf("rmdir: %d", st)
		}
		if st, _ := c.getattr(dir); st != sStale {
			t.Fatalf("removed dir's handle: %d", st)
		}
		if st, _ := c.call(pRemove, (&enc{}).dirop(root, "d")); st != sNoEnt {
			t.Fatalf("remove missing: %d", st)
		}
	})

	t.Run("FSSTAT FSINFO PATHCONF", func(t *testing.T) {
		st, d := c.call(pFsstat, (&enc{}).opaque(root))
		if st != sOK {
			t.Fatalf("fsstat: %d", st)
		}
		d.postOp()
		if total := d.u64(); total == 0 || total == 1<<62 {
			t.Fatalf("fsstat total bytes %d (defaults?)", total)
		}
		st, d = c.call(pFsinfo, (&enc{}).opaque(root))
		if st != sOK {
			t.Fatalf("fsinfo: %d", st)
		}
		d.postOp()
		if rtmax, rtpref, _, wtmax := d.u32(), d.u32(), d.u32(), d.u32(); rtmax != 1<<20 || rtpref != 1<<20 || wtmax != 1<<20 {
			t.Fatalf("fsinfo rtmax %d rtpref %d wtmax %d, want 1 MiB", rtmax, rtpref, wtmax)
		}
		if st, _ := c.call(pPathconf, (&enc{}).opaque(root)); st != sOK {
			t.Fatalf("pathconf: %d", st)
		}
	})

	t.Run("MKNOD fifo", func(t *testing.T) {
		st, _ := c.call(pMknod, (&enc{}).dirop(root, "fifo").u32(7).sattr(0o600))
		if st != sOK {
			t.Fatalf("mknod fifo: %d", st)
		}
		fi, err := os.Lstat(filepath.Join(e.dir, "fifo"))
		if err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
			t.Fatalf("fifo on disk: %v %v", fi, err)
		}
		// A socket node is made (what bind(2) leaves), with a handle that
		// resolves to it (go-nfs answered every MKNOD with an empty handle,
		// which Linux's client rejects with E2BIG).
		st, d := c.call(pMknod, (&enc{}).dirop(root, "sock").u32(6).sattr(0o600))
		if st != sOK {
			t.Fatalf("mknod sock: %d", st)
		}
		if d.u32() != 1 {
			t.Fatal("mknod sock: no handle")
		}
		fh := d.opaque()
		if st, a := c.getattr(fh); st != sOK || a.typ != 6 || a.mode&0o7777 != 0o600 {
			t.Fatalf("mknod sock: getattr of its handle: %d %+v", st, a)
		}
		if fi, err := os.Lstat(filepath.Join(e.dir, "sock")); err != nil || fi.Mode().Type() != os.ModeSocket {
			t.Fatalf("socket on disk: %v %v", fi, err)
		}
		// Devices are refused with PERM (EPERM, as mknod(2) without
		// CAP_MKNOD), the types MKNOD is not for with BADTYPE (RFC 1813);
		// nothing appears.
		for _, tc := range []struct {
			name string
			args *enc
			want uint32
		}{
			{"blk", (&enc{}).dirop(root, "blk").u32(3).sattr(0o600).u32(8).u32(0), 1},
			{"chr", (&enc{}).dirop(root, "chr").u32(4).sattr(0o600).u32(1).u32(3), 1},
			{"reg", (&enc{}).dirop(root, "reg").u32(1), 10007},
			{"dir", (&enc{}).dirop(root, "dir").u32(2), 10007},
		} {
			st, d := c.call(pMknod, tc.args)
			if st != tc.want {
				t.Errorf("mknod %s: status %d, want %d", tc.name, st, tc.want)
				continue
			}
			d.wcc()
			if d.rest() != 0 {
				t.Errorf("mknod %s: %d bytes after wcc_data", tc.name, d.rest())
			}
			if _, err := os.Lstat(filepath.Join(e.dir, tc.name)); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("mknod %s: %v on disk", tc.name, err)
			}
		}
	})

	t.Run("bad handles", func(t *testing.T) {
		if st, _ := c.getattr([]byte("short")); st != 10001 {
			t.Fatalf("malformed handle: %d, want BADHANDLE", st)
		}
		forged := append([]byte(nil), root...)
		forged[2] ^= 1 // another app id
		if st, _ := c.getattr(forged); st != sStale {
			t.Fatalf("forged handle: %d, want STALE", st)
		}
	})
}
