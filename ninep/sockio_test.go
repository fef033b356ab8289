package ninep

import (
	"bytes"
	"io"
	"net"
	"os"
	"testing"

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
// as end of file.
func TestSockIO(t *testing.T) {
	a, b := socketPair(t)
	wa, rb := newSockIO(a), newSockIO(b)
	if wa == nil || rb == nil {
		t.Fatal("no descriptor behind a socketpair conn")
	}
	bufs := [][]byte{bytes.Repeat([]byte("h"), 7), nil, make([]byte, 3<<20), bytes.Repeat([]byte("tail"), 1000)}
	for i := range bufs[2] {
		bufs[2][i] = byte(i * 7)
	}
	want := bytes.Join(bufs, nil)
	errc := make(chan error, 1)
	go func() {
		err := wa.writev(bufs...)
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
	if err := wa.writev([]byte("x")); err == nil {
		t.Fatal("write to a closed connection succeeded")
	}
}
