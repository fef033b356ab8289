package nfs_test

import (
	"testing"
)

// TestFastPathStatuses: the calls the adapter answers itself (GETATTR, READ,
// WRITE, READDIRPLUS) fail with the same statuses go-nfs's path gives.
func TestFastPathStatuses(t *testing.T) {
	e := newEnv(t)
	c, root := e.client("/")
	_, dir := c.mkdir(root, "dir")
	_, f := c.create(dir, "f", 0, 0)
	c.write(f, 0, []byte("0123456789"), 2)
	st, d := c.call(pSymlink, (&enc{}).dirop(root, "l").sattr(-1).str("dir/f"))
	if st != sOK {
		t.Fatal(st)
	}
	d.u32()
	link := d.opaque()
	_, gone := c.create(root, "gone", 0, 0)
	c.call(pRemove, (&enc{}).dirop(root, "gone"))

	readdirplus := func(fh []byte, dircount, maxcount uint32) uint32 {
		st, _ := c.call(pReaddirplus, (&enc{}).opaque(fh).u64(0).u64(0).u32(dircount).u32(maxcount))
		return st
	}
	for _, tc := range []struct {
		name string
		got  func() uint32
		want uint32
	}{
		{"GETATTR removed file", func() uint32 { st, _ := c.getattr(gone); return st }, sStale},
		{"GETATTR garbage handle", func() uint32 { st, _ := c.getattr(make([]byte, 32)); return st }, 10001},
		{"READ directory", func() uint32 { st, _, _ := c.read(dir, 0, 10); return st }, sIsDir},
		{"READ symlink", func() uint32 { st, _, _ := c.read(link, 0, 10); return st }, sInval},
		{"READ removed", func() uint32 { st, _, _ := c.read(gone, 0, 10); return st }, sStale},
		{"WRITE directory", func() uint32 { st, _, _, _ := c.write(dir, 0, []byte("x"), 0); return st }, sIsDir},
		{"WRITE symlink", func() uint32 { st, _, _, _ := c.write(link, 0, []byte("x"), 0); return st }, sInval},
		{"READDIRPLUS file", func() uint32 { return readdirplus(f, 4096, 8192) }, sNotDir},
		{"READDIRPLUS too small", func() uint32 { return readdirplus(dir, 100, 100) }, 10005}, // NFS3ERR_TOOSMALL, never JUKEBOX
	} {
		if got := tc.got(); got != tc.want {
			t.Errorf("%s: status %d, want %d", tc.name, got, tc.want)
		}
	}
	// READ at and past EOF: no data, eof set.
	for _, off := range []uint64{10, 1000} {
		st, data, eof := c.read(f, off, 10)
		if st != sOK || len(data) != 0 || !eof {
			t.Errorf("READ at %d: %d %q eof=%v", off, st, data, eof)
		}
	}
	// A short read at the end says eof; a read inside does not.
	if _, data, eof := c.read(f, 8, 10); string(data) != "89" || !eof {
		t.Errorf("READ at 8: %q eof=%v", data, eof)
	}
	if _, data, eof := c.read(f, 0, 5); string(data) != "01234" || eof {
		t.Errorf("READ at 0: %q eof=%v", data, eof)
	}
	// WRITE past the end extends with zeros.
	if st, n, _, _ := c.write(f, 20, []byte("end"), 2); st != sOK || n != 3 {
		t.Fatalf("WRITE past end: %d %d", st, n)
	}
	if got := e.read("dir/f"); got != "0123456789\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00end" {
		t.Errorf("after write past end: %q", got)
	}
}

// TestListingAfterRestart: a READDIRPLUS listing interrupted by a restart goes
// on with its old verifier and cookie (the snapshot is rebuilt) instead of failing.
func TestListingAfterRestart(t *testing.T) {
	e := newEnv(t)
	c, root := e.client("/")
	_, d := c.mkdir(root, "d")
	for i := 0; i < 100; i++ {
		c.create(d, string(rune('a'+i/26))+string(rune('a'+i%26)), 0, 0)
	}
	st, dd := c.call(pReaddirplus, (&enc{}).opaque(d).u64(0).u64(0).u32(1024).u32(4096))
	if st != sOK {
		t.Fatal(st)
	}
	dd.postOp()
	verf := dd.u64()
	var cookie uint64
	n := 0
	for dd.u32() == 1 {
		dd.u64()
		dd.opaque()
		cookie = dd.u64()
		dd.postOp()
		if dd.u32() == 1 {
			dd.opaque()
		}
		n++
	}
	e.restart()
	c2 := dialRaw(t, e.addr)
	for {
		st, dd := c2.call(pReaddirplus, (&enc{}).opaque(d).u64(cookie).u64(verf).u32(1024).u32(4096))
		if st != sOK {
			t.Fatalf("continuing after restart: %d", st)
		}
		dd.postOp()
		dd.u64()
		for dd.u32() == 1 {
			dd.u64()
			dd.opaque()
			cookie = dd.u64()
			dd.postOp()
			if dd.u32() == 1 {
				dd.opaque()
			}
			n++
		}
		if dd.u32() == 1 {
			break
		}
	}
	if n != 102 {
		t.Fatalf("listed %d entries across the restart, want 102", n)
	}
}
