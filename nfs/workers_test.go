package nfs_test

import (
	"bytes"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// TestReadDoesNotHoldTheConnection: while one READ is held mid-way (a slow
// disk, a 1 MiB pread), the other calls on the same connection (other
// processes sharing the mount) are still answered, and the READ's reply
// follows with its data once it is released.
func TestReadDoesNotHoldTheConnection(t *testing.T) {
	e := newEnv(t)
	data := bytes.Repeat([]byte("held read "), 10000) // a READ large enough for a worker (handOffSize)
	if err := os.WriteFile(filepath.Join(e.dir, "f"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	c, root := e.client("/")
	st, fh, _ := c.lookup(root, "f")
	if st != sOK {
		t.Fatalf("lookup: %d", st)
	}
	reading, release := make(chan struct{}, 1), make(chan struct{})
	var once sync.Once
	open := func() { once.Do(func() { close(release) }) }
	defer open() // before the server closes (Cleanup): it waits for the READ
	e.srv.SetHold(func(op string) {
		if op != "read" {
			return
		}
		select {
		case reading <- struct{}{}:
		default:
		}
		<-release
	})
	readXID := c.send(progNFS, 3, pRead, (&enc{}).opaque(fh).u64(0).u32(uint32(len(data))).b)
	select {
	case <-reading:
	case <-time.After(time.Minute): // failure bound only
		t.Fatal("the READ never reached the file")
	}
	getattrXID := c.send(progNFS, 3, pGetattr, (&enc{}).opaque(fh).b)
	if xid := peekXID(t, c); xid != getattrXID {
		t.Fatalf("first reply is for xid %d, want the GETATTR's %d (READ is %d): the READ held the connection", xid, getattrXID, readXID)
	}
	if d := c.recv(getattrXID); d.u32() != sOK {
		t.Fatal("getattr failed")
	}
	// Another READ while the first is held: a second worker answers it.
	e.srv.SetHold(nil)
	if st, got, eof := c.read(fh, 5, 5); st != sOK || string(got) != "read " || eof {
		t.Fatalf("second read: %d %q eof=%v", st, got, eof)
	}
	open()
	d := c.recv(readXID)
	if st := d.u32(); st != sOK {
		t.Fatalf("held read: %d", st)
	}
	d.postOp()
	if n := d.u32(); n != uint32(len(data)) {
		t.Fatalf("held read: %d bytes, want %d", n, len(data))
	}
	if eof := d.u32(); eof != 1 {
		t.Fatal("held read: no eof")
	}
	if got := d.opaque(); !bytes.Equal(got, data) {
		t.Fatal("held read: wrong data")
	}
}
