package sockio

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"

	"github.com/semfs/semfs/server/servertest"
	"golang.org/x/sys/unix"
)

// socketPair returns two connected stream sockets as net.Conns (Go's poller
// holds both), the first with a small send buffer so that big writes come back
// short and EAGAIN.
func socketPair(t *testing.T) (net.Conn, net.Conn) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.SetsockoptInt(fds[0], unix.SOL_SOCKET, unix.SO_SNDBUF, 4096); err != nil {
		t.Fatal(err)
	}
	var cs [2]net.Conn
	for i, fd := range fds {
		f := os.NewFile(uintptr(fd), "socketpair")
		c, err := net.FileConn(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		cs[i] = c
	}
	return cs[0], cs[1]
}

// TestSockIO: raw writes of several buffers arrive whole and in order through
// short writes and a full socket, raw reads see them, and a closed peer reads
// as end of file. A connection without a descriptor (net.Pipe) behaves alike
// through its own methods.
func TestSockIO(t *testing.T) {
	t.Run("socketpair", func(t *testing.T) {
		a, b := socketPair(t)
		wa, rb := New(a), New(b)
		if wa.rc == nil || rb.rc == nil {
			t.Fatal("no descriptor behind a socketpair conn")
		}
		testTransfer(t, a, b, wa, rb)
	})
	t.Run("pipe", func(t *testing.T) {
		a, b := net.Pipe()
		t.Cleanup(func() { a.Close(); b.Close() })
		wa, rb := New(a), New(b)
		if wa.rc != nil || rb.rc != nil {
			t.Fatal("a descriptor behind a net.Pipe conn")
		}
		testTransfer(t, a, b, wa, rb)
	})
}

// testTransfer writes through wa (over a) and reads through rb (over b).
func testTransfer(t *testing.T, a, b net.Conn, wa, rb *Conn) {
	t.Helper()
	bufs := [][]byte{bytes.Repeat([]byte("h"), 7), nil, make([]byte, 3<<20), bytes.Repeat([]byte("tail"), 1000)}
	for i := range bufs[2] {
		bufs[2][i] = byte(i * 7)
	}
	want := bytes.Join(bufs, nil)
	errc := make(chan error, 1)
	go func() {
		err := wa.Writev(bufs...)
		if err == nil {
			_, err = wa.Write([]byte("!"))
		}
		a.Close()
		errc <- err
	}()
	got, err := io.ReadAll(rb)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err != nil {
		t.Fatalf("writev: %v", err)
	}
	if !bytes.Equal(got, append(want, '!')) {
		t.Fatalf("read %d bytes, want %d; equal prefix %v", len(got), len(want)+1, bytes.HasPrefix(want, got))
	}
	if n, err := rb.Read(make([]byte, 10)); n != 0 || err != io.EOF {
		t.Fatalf("read after the peer closed: %d, %v; want 0, EOF", n, err)
	}
	b.Close()
	if err := wa.Writev([]byte("x")); err == nil {
		t.Fatal("write to a closed connection succeeded")
	}
}

// TestSockIODeadlinesAndClose: the raw calls wait in Go's poller, so the
// connection's read and write deadlines end a wait with the poller's timeout
// error, as they end net.Conn's, and a Close from another goroutine ends a
// blocked read with net.ErrClosed (the NFS record stream's idle and body
// limits and its shutdown rely on all three).
func TestSockIODeadlinesAndClose(t *testing.T) {
	a, _ := socketPair(t) // the peer stays open and never reads
	ra, wa := New(a), New(a)
	if err := a.SetReadDeadline(time.Now().Add(20 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if n, err := ra.Read(make([]byte, 8)); n != 0 || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read past its deadline: %d, %v; want 0, os.ErrDeadlineExceeded", n, err)
	}
	// Nobody reads the peer: a's small send buffer fills and the write waits.
	if err := a.SetWriteDeadline(time.Now().Add(20 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if err := wa.Writev(make([]byte, 16<<20)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("write into a full socket past its deadline: %v; want os.ErrDeadlineExceeded", err)
	}
	if err := a.SetReadDeadline(time.Time{}); err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	returned := make(chan struct{})
	go func() {
		defer close(returned)
		_, err := ra.Read(make([]byte, 8))
		errc <- err
	}()
	// Close once the read waits in the poller: a Close before it would test
	// a read of a closed connection, not the end of a blocked one.
	servertest.WaitParked(t, "sockio.(*Conn).Read(", returned)
	a.Close()
	select {
	case err := <-errc:
		if !errors.Is(err, net.ErrClosed) {
			t.Fatalf("read ended by Close: %v; want net.ErrClosed", err)
		}
	case <-time.After(time.Minute): // failure bound only
		t.Fatal("Close did not end a blocked raw read")
	}
}
