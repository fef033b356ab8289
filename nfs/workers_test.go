package nfs_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/semfs/semfs/integration/require"
	"github.com/semfs/semfs/nfs"
	"github.com/semfs/semfs/server/servertest"
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
	// Read from the disk: data in the page cache is read inline instead
	// (TestCachedReadIsAnsweredInline).
	if !servertest.Evict(t, filepath.Join(e.dir, "f")) {
		require.Environment(t, "the file's pages could not be dropped from the page cache")
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
		if op == "read inline" {
			// Evict again right before the inline page-cache read: pages
			// brought back since the eviction above (failed once in the full
			// suite) would have the READ answered inline, never held.
			servertest.Evict(t, filepath.Join(e.dir, "f"))
			return
		}
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

// TestCachedReadIsAnsweredInline: on a connection with nothing else in
// progress, a large READ whose data is in the page cache is answered by the
// connection's reading goroutine (no hand-off to a worker, see workers.go);
// once the file's pages are dropped, the same READ goes to a worker, which may
// wait for the disk. Both answers carry the same data. A cached READ of
// sendFileMin or more goes out by sendfile ("read sent"), a smaller one and
// one from the disk are copied.
func TestCachedReadIsAnsweredInline(t *testing.T) {
	e := newEnv(t)
	data := make([]byte, 3<<20)
	for i := range data {
		data[i] = byte(i * 7 / 5)
	}
	p := filepath.Join(e.dir, "f")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	c, root := e.client("/")
	st, fh, _ := c.lookup(root, "f")
	if st != sOK {
		t.Fatalf("lookup: %d", st)
	}
	var inline, handed, sent atomic.Int32
	e.srv.SetHold(func(op string) {
		switch op {
		case "read inline":
			inline.Add(1)
		case "read":
			handed.Add(1)
		case "read sent":
			sent.Add(1)
		}
	})
	const either = -1
	// try makes one READ and says what differs from the expected route ("" if
	// nothing); the data must be right whatever the route.
	try := func(what string, off uint64, n uint32, wantInline bool, wantSent int32) string {
		t.Helper()
		inline.Store(0)
		handed.Store(0)
		sent.Store(0)
		st, got, eof := c.read(fh, off, n)
		end := min(int(off)+int(n), len(data))
		if st != sOK || !bytes.Equal(got, data[off:end]) || eof != (end == len(data)) {
			t.Fatalf("%s: status %d, %d bytes (want %d), equal %v, eof %v", what, st, len(got), end-int(off), bytes.Equal(got, data[off:end]), eof)
		}
		if i, h := inline.Load(), handed.Load(); wantInline && (i != 1 || h != 0) || !wantInline && h != 1 {
			return fmt.Sprintf("%s: read inline %d times, by a worker %d times; want inline %v", what, i, h, wantInline)
		}
		if s := sent.Load(); wantSent != either && s != wantSent {
			return fmt.Sprintf("%s: sent by sendfile %d times; want %d", what, s, wantSent)
		}
		return ""
	}
	// A cached READ needs the file's pages in the page cache, which the
	// kernel may reclaim at any moment (this VM runs DAMON's reclaim): each
	// try reads the file first, and a route that differs is tried again, at
	// most three times, so a broken route fails every time.
	check := func(what string, off uint64, n uint32, wantInline bool, wantSent int32) {
		t.Helper()
		var msg string
		for range 3 {
			if wantInline {
				if _, err := os.ReadFile(p); err != nil {
					t.Fatal(err)
				}
			}
			if msg = try(what, off, n, wantInline, wantSent); msg == "" {
				return
			}
			t.Logf("%s (trying again: the pages may have been reclaimed)", msg)
		}
		t.Fatal(msg)
	}
	check("cached 1 MiB READ", 0, 1<<20, true, 1)
	check("cached READ to the end (count not a multiple of 4)", 2<<20+12345, 1<<20, true, 1)
	check("cached READ just below SendFileMin", 4096, nfs.SendFileMin-1, true, 0)
	check("cached READ of SendFileMin", 4097, nfs.SendFileMin, true, 1)
	if !servertest.Evict(t, p) {
		require.Environment(t, "the file's pages could not be dropped from the page cache")
	}
	// The inline try's RWF_NOWAIT read starts the kernel's readahead, so the
	// worker may find the pages cached and send them.
	if msg := try("1 MiB READ from the disk", 1<<20, 1<<20, false, either); msg != "" {
		t.Fatal(msg)
	}
}
