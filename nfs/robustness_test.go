package nfs_test

import (
	"bytes"
	"encoding/binary"
	"testing"
)

// TestDisconnectMidWrite: a client that vanishes halfway through sending a WRITE
// loses nothing it was told was written, and the half-sent WRITE changes nothing.
func TestDisconnectMidWrite(t *testing.T) {
	e := newEnv(t)
	c, root := e.client("/@notes")
	_, f := c.create(root, "big", 0, 0)
	block := bytes.Repeat([]byte("0123456789abcdef"), 4096) // 64 KiB
	var want []byte
	for i := 0; i < 4; i++ {
		b := bytes.ToUpper(block)
		b[0] = byte('A' + i)
		st, n, _, _ := c.write(f, uint64(len(want)), b, 0) // UNSTABLE, acknowledged
		if st != sOK || int(n) != len(b) {
			t.Fatalf("write %d: %d %d", i, st, n)
		}
		want = append(want, b...)
	}
	// Half of a fifth WRITE record, then the connection drops.
	args := (&enc{}).opaque(f).u64(uint64(len(want))).u32(uint32(len(block))).u32(0).opaque(block).b
	e2 := &enc{}
	e2.u32(99).u32(0).u32(2).u32(progNFS).u32(3).u32(pWrite).u32(0).u32(0).u32(0).u32(0)
	rec := append(binary.BigEndian.AppendUint32(nil, uint32(len(e2.b)+len(args))|1<<31), e2.b...)
	rec = append(rec, args[:len(args)/2]...)
	c.c.Write(rec)
	c.c.Close()

	c2 := dialRaw(t, e.addr)
	if st, _ := c2.commit(f); st != sOK {
		t.Fatalf("commit after reconnect: %d", st)
	}
	st, a := c2.getattr(f)
	if st != sOK || a.size != uint64(len(want)) {
		t.Fatalf("size after disconnect: %d %d, want %d", st, a.size, len(want))
	}
	var got []byte
	for off := 0; off < len(want); off += 32768 {
		_, data, _ := c2.read(f, uint64(off), 32768)
		got = append(got, data...)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("acknowledged data lost or changed")
	}
	if on := e.read("big"); on != string(want) {
		t.Fatalf("on disk differs")
	}
}

// TestPanicContained: a panic inside the adapter answers that call with
// SERVERFAULT; the connection and the server go on.
func TestPanicContained(t *testing.T) {
	e := newEnv(t)
	c, root := e.client("/@notes")
	_, f := c.create(root, "f", 0, 0)
	c.write(f, 0, []byte("data"), 2)
	st, d := c.call(pSymlink, (&enc{}).dirop(root, "l").sattr(-1).str("f"))
	if st != sOK {
		t.Fatal(st)
	}
	d.u32()
	link := d.opaque()
	for _, op := range []string{"getattr", "readlink", "resolve", "write", "read"} {
		e.srv.SetPanic(op)
		var st uint32
		switch op {
		case "write":
			st, _, _, _ = c.write(f, 0, []byte("x"), 0)
		case "read":
			st, _, _ = c.read(f, 0, 1)
		case "readlink":
			st, _ = c.call(pReadlink, (&enc{}).opaque(link))
		default:
			st, _ = c.getattr(f)
		}
		e.srv.SetPanic("")
		if st != sServerFault {
			t.Errorf("%s panic: status %d, want SERVERFAULT", op, st)
		}
		if st, _ := c.getattr(f); st != sOK {
			t.Fatalf("after %s panic: %d", op, st)
		}
	}
	c2 := dialRaw(t, e.addr)
	if st, _ := c2.getattr(root); st != sOK {
		t.Fatalf("new connection after panics: %d", st)
	}
}
