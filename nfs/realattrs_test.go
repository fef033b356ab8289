package nfs_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// fullAttr is fattr3 with the fields go-nfs fakes.
type fullAttr struct {
	used, fsid, fileid  uint64
	atime, mtime, ctime uint64 // seconds<<32 | nseconds
}

func (d *dec) fullFattr() fullAttr {
	var a fullAttr
	d.skip(20) // type, mode, nlink, uid, gid
	d.u64()    // size
	a.used = d.u64()
	d.skip(8) // rdev
	a.fsid = d.u64()
	a.fileid = d.u64()
	a.atime, a.mtime, a.ctime = d.u64(), d.u64(), d.u64()
	return a
}

func nfsTime(ts syscall.Timespec) uint64 { return uint64(ts.Sec)<<32 | uint64(ts.Nsec) }

// TestRealAttributes: atime, ctime, space used and fsid come from the file
// system in the adapter's answers (GETATTR, LOOKUP, READDIRPLUS, SETATTR,
// READ) and in go-nfs's, whose own replies say atime = ctime = mtime, used =
// size, fsid 0 (MKDIR).
func TestRealAttributes(t *testing.T) {
	e := newEnv(t)
	p := filepath.Join(e.dir, "f")
	if err := os.WriteFile(p, make([]byte, 10000), 0o644); err != nil {
		t.Fatal(err)
	}
	at, mt := time.Date(2001, 1, 1, 0, 0, 1, 5000, time.UTC), time.Date(2002, 2, 2, 0, 0, 2, 7000, time.UTC)
	if err := os.Chtimes(p, at, mt); err != nil {
		t.Fatal(err)
	}
	var st, root syscall.Stat_t
	if err := syscall.Lstat(p, &st); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Lstat(e.dir, &root); err != nil {
		t.Fatal(err)
	}
	check := func(t *testing.T, what string, a fullAttr, want syscall.Stat_t) {
		t.Helper()
		if a.atime != nfsTime(want.Atim) || a.mtime != nfsTime(want.Mtim) || a.ctime != nfsTime(want.Ctim) {
			t.Errorf("%s: times %x %x %x, want %x %x %x", what, a.atime, a.mtime, a.ctime, nfsTime(want.Atim), nfsTime(want.Mtim), nfsTime(want.Ctim))
		}
		if a.used != uint64(want.Blocks)*512 {
			t.Errorf("%s: used %d, want %d", what, a.used, want.Blocks*512)
		}
		if a.fsid != root.Dev || a.fsid == 0 {
			t.Errorf("%s: fsid %d, want %d", what, a.fsid, root.Dev)
		}
	}
	{
		{
			c := dialRaw(t, e.addr).as(0, 0)
			_, rootFH := c.mount("/")
			s, d := c.call(pLookup, (&enc{}).dirop(rootFH, "f"))
			if s != sOK {
				t.Fatalf("lookup: %d", s)
			}
			fh := append([]byte(nil), d.opaque()...)
			d.u32()
			check(t, "LOOKUP", d.fullFattr(), st)
			if s, d = c.call(pGetattr, (&enc{}).opaque(fh)); s != sOK {
				t.Fatalf("getattr: %d", s)
			}
			check(t, "GETATTR", d.fullFattr(), st)
			if s, d = c.call(pReaddirplus, (&enc{}).opaque(rootFH).u64(0).u64(0).u32(8192).u32(65536)); s != sOK {
				t.Fatalf("readdirplus: %d", s)
			}
			d.postOp()
			d.u64()
			for d.u32() == 1 {
				d.u64()
				name := string(d.opaque())
				d.u64()
				if d.u32() == 1 {
					if a := d.fullFattr(); name == "f" {
						check(t, "READDIRPLUS entry", a, st)
					}
				}
				if d.u32() == 1 {
					d.opaque()
				}
			}
			// A chmod (SETATTR) moves ctime only: the reply says so.
			if s, d = c.call(pSetattr, (&enc{}).opaque(fh).sattr(0o640).u32(0)); s != sOK {
				t.Fatalf("setattr: %d", s)
			}
			if err := syscall.Lstat(p, &st); err != nil {
				t.Fatal(err)
			}
			if d.u32() == 1 {
				d.skip(24)
			}
			if d.u32() != 1 {
				t.Fatal("SETATTR: no post-op attributes")
			}
			check(t, "SETATTR", d.fullFattr(), st)
			if s, d = c.call(pRead, (&enc{}).opaque(fh).u64(0).u32(100)); s != sOK {
				t.Fatalf("read: %d", s)
			}
			if d.u32() != 1 {
				t.Fatal("READ: no attributes")
			}
			a := d.fullFattr()
			if a.used != uint64(st.Blocks)*512 || a.ctime != nfsTime(st.Ctim) || a.fsid != root.Dev {
				t.Errorf("READ: %+v", a)
			}
			// MKDIR's new directory.
			if s, d = c.call(pMkdir, (&enc{}).dirop(rootFH, "m").sattr(0o755)); s != sOK {
				t.Fatalf("mkdir: %d", s)
			}
			var mst syscall.Stat_t
			if err := syscall.Lstat(filepath.Join(e.dir, "m"), &mst); err != nil {
				t.Fatal(err)
			}
			if d.u32() != 1 {
				t.Fatal("MKDIR: no handle")
			}
			d.opaque()
			if d.u32() != 1 {
				t.Fatal("MKDIR: no attributes")
			}
			check(t, "MKDIR", d.fullFattr(), mst)
		}
	}
}
