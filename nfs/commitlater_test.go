package nfs_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/semfs/semfs/nfs"
	"github.com/semfs/semfs/server"
)

// gateSink is the core's change stream held at Flush until open is closed: it
// stands in for an index whose sync to disk is slow.
type gateSink struct {
	open    chan struct{}
	waiting chan struct{} // receives once per Flush that starts waiting
	once    sync.Once
}

func (g *gateSink) Apply(context.Context, server.Change) error { return nil }

func (g *gateSink) Flush(ctx context.Context) error {
	select {
	case g.waiting <- struct{}{}:
	default:
	}
	select {
	case <-g.open:
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

// TestCommitDoesNotHoldTheConnection: while one COMMIT waits on the disk, the
// other calls on the same connection (other processes sharing the mount) are
// still answered, and the COMMIT's reply follows once the sync is done, with
// its status and verifier.
func TestCommitDoesNotHoldTheConnection(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "export")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777); err != nil { // the raw client is nobody
		t.Fatal(err)
	}
	gate := &gateSink{open: make(chan struct{}), waiting: make(chan struct{}, 1)}
	release := func() { gate.once.Do(func() { close(gate.open) }) }
	defer release()
	fsys, err := server.New(dir, server.Options{Sink: gate})
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close()
	srv, err := nfs.NewServer(fsys, nfs.Options{StateDir: filepath.Join(t.TempDir(), "state"), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	defer srv.Close()
	defer release() // Close waits for the COMMIT

	c := dialRaw(t, ln.Addr().String())
	st, root := c.mount("/")
	if st != sOK {
		t.Fatalf("mount: %d", st)
	}
	st, fh := c.create(root, "f", 0, 0)
	if st != sOK {
		t.Fatalf("create: %d", st)
	}
	if st, _, _, _ := c.write(fh, 0, []byte("data"), 0); st != sOK {
		t.Fatalf("write: %d", st)
	}
	commitXID := c.send(progNFS, 3, pCommit, (&enc{}).opaque(fh).u64(0).u32(0).b)
	select {
	case <-gate.waiting:
	case <-time.After(time.Minute): // failure bound only
		t.Fatal("the COMMIT never flushed the change stream")
	}
	getattrXID := c.send(progNFS, 3, pGetattr, (&enc{}).opaque(fh).b)
	// The GETATTR's reply must come while the COMMIT still waits; recv fails
	// the test (deadline) if nothing arrives.
	if xid := peekXID(t, c); xid != getattrXID {
		t.Fatalf("first reply is for xid %d, want the GETATTR's %d (COMMIT is %d): the COMMIT held the connection", xid, getattrXID, commitXID)
	}
	d := c.recv(getattrXID)
	if st := d.u32(); st != sOK {
		t.Fatalf("getattr: %d", st)
	}
	release()
	d = c.recv(commitXID)
	if st := d.u32(); st != sOK {
		t.Fatalf("commit: %d", st)
	}
	d.wcc()
	_ = d.u64() // verifier
}

// peekXID waits (bounded) for the next reply record and returns its xid without
// consuming it: the rawClient then reads the same record.
func peekXID(t *testing.T, c *rawClient) uint32 {
	t.Helper()
	pc := &peekConn{Conn: c.c}
	c.c = pc
	pc.SetReadDeadline(time.Now().Add(20 * time.Second))
	var head [8]byte
	if _, err := io.ReadFull(pc.Conn, head[:]); err != nil {
		t.Fatalf("no reply while another call is held: %v", err)
	}
	pc.buf = append(pc.buf, head[:]...)
	return binary.BigEndian.Uint32(head[4:])
}

// peekConn hands back bytes read ahead before reading the connection again.
type peekConn struct {
	net.Conn
	buf []byte
}

func (p *peekConn) Read(b []byte) (int, error) {
	if len(p.buf) > 0 {
		n := copy(b, p.buf)
		p.buf = p.buf[n:]
		return n, nil
	}
	return p.Conn.Read(b)
}

// TestCommitInlineOnlyOnASequentialConnection: a connection whose client has
// sent each call after the reply to the one before, for SequentialCalls calls,
// has its COMMITs answered on the reading goroutine; once it sends a call
// before the reply to the last (two processes sharing the mount), its COMMITs
// go off that goroutine again, so that they cannot hold the other calls
// (TestCommitDoesNotHoldTheConnection).
func TestCommitInlineOnlyOnASequentialConnection(t *testing.T) {
	e := newEnv(t)
	c, root := e.client("/")
	st, fh := c.create(root, "f", 0, 0)
	if st != sOK {
		t.Fatalf("create: %d", st)
	}
	commit := func() {
		t.Helper()
		if st, _, _, _ := c.write(fh, 0, []byte("data"), 0); st != sOK {
			t.Fatalf("write: %d", st)
		}
		if st, _ := c.commit(fh); st != sOK {
			t.Fatalf("commit: %d", st)
		}
	}
	// commitLater marks each COMMIT it takes off the reading goroutine.
	var commitsLater atomic.Uint64
	e.srv.SetHold(func(op string) {
		if op == "commit later" {
			commitsLater.Add(1)
		}
	})
	defer e.srv.SetHold(nil)
	// A new connection has shown nothing yet: COMMIT goes off the goroutine.
	before := commitsLater.Load()
	commit()
	if got := commitsLater.Load(); got != before+1 {
		t.Fatalf("first COMMIT of a new connection: answered later %d times, want 1", got-before)
	}
	for range nfs.SequentialCalls {
		if st, _ := c.getattr(fh); st != sOK {
			t.Fatalf("getattr: %d", st)
		}
	}
	before = commitsLater.Load()
	commit()
	if got := commitsLater.Load(); got != before {
		t.Fatalf("COMMIT after %d sequential calls: answered later %d times, want inline", nfs.SequentialCalls, got-before)
	}
	// The inline reply is commitLater's, byte for byte (which the differential
	// test holds to go-nfs's): one more COMMIT each way, nothing written
	// between, xids aside.
	rawCommit := func() []byte {
		t.Helper()
		x := c.send(progNFS, 3, pCommit, (&enc{}).opaque(fh).u64(0).u32(0).b)
		b := c.recvRaw()
		if got := binary.BigEndian.Uint32(b[4:]); got != x {
			t.Fatalf("reply xid %d, want %d", got, x)
		}
		return b[8:]
	}
	inline := rawCommit()
	// Two GETATTRs in flight at once, sent in one write so that the server
	// reads them together: the connection is concurrent again.
	conn := c.c
	held := &heldWrites{Conn: conn}
	c.c = held
	x1 := c.send(progNFS, 3, pGetattr, (&enc{}).opaque(fh).b)
	x2 := c.send(progNFS, 3, pGetattr, (&enc{}).opaque(fh).b)
	c.c = conn
	if _, err := conn.Write(held.b); err != nil {
		t.Fatal(err)
	}
	for _, x := range []uint32{x1, x2} {
		if d := c.recv(x); d.u32() != sOK {
			t.Fatal("pipelined getattr failed")
		}
	}
	before = commitsLater.Load()
	later := rawCommit()
	if got := commitsLater.Load(); got != before+1 {
		t.Fatalf("COMMIT after calls in flight at once: answered later %d times, want 1", got-before)
	}
	if !bytes.Equal(inline, later) {
		t.Fatalf("inline COMMIT reply differs from commitLater's:\n%x\n%x", inline, later)
	}
	commit()
}

// heldWrites keeps what is written to it, to be sent in one write later.
type heldWrites struct {
	net.Conn
	b []byte
}

func (h *heldWrites) Write(b []byte) (int, error) {
	h.b = append(h.b, b...)
	return len(b), nil
}
