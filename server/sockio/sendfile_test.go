package sockio

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// tcpPair returns the two ends of a loopback TCP connection, as NFS clients
// connect.
func tcpPair(t *testing.T) (net.Conn, net.Conn) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	acc := make(chan net.Conn, 1)
	go func() {
		c, _ := l.Accept()
		acc <- c
	}()
	b, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	a := <-acc
	if a == nil {
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { a.Close(); b.Close() })
	return a, b
}

// dataFile writes n bytes of a pattern to a new file and returns it open
// read-only, with its contents.
func dataFile(t *testing.T, n int) (*os.File, []byte) {
	t.Helper()
	data := make([]byte, n)
	for i := range data {
		data[i] = byte(i*31 + i>>10)
	}
	p := filepath.Join(t.TempDir(), "data")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f, data
}

// TestSendFile: header, file range and trailer arrive as one stream, in order
// and whole, over TCP and a Unix socket with a small send buffer (short
// sends and EAGAIN waits in the poller), from an offset and in the copy mode
// sendfile's refusal falls back on; a file that ends early is completed with
// zeros and reported short; the file's own offset is not moved.
func TestSendFile(t *testing.T) {
	const size = 3<<20 + 123
	f, data := dataFile(t, size)
	pairs := map[string]func(*testing.T) (net.Conn, net.Conn){"tcp": tcpPair, "unix": socketPair}
	cases := []struct {
		name      string
		off, n    int
		copy      bool
		wantShort bool
	}{
		{"whole file", 0, size, false, false},
		{"from an offset", 4097, 1 << 20, false, false},
		{"copy mode", 13, size - 13, true, false},
		{"past the end", size - 1000, 5000, false, true},
		{"past the end, copy mode", size - 1000, 70000, true, true},
		{"wholly past the end", size + 10, 100, false, true},
	}
	for pname, pair := range pairs {
		for _, tc := range cases {
			t.Run(pname+"/"+tc.name, func(t *testing.T) {
				a, b := pair(t)
				s := New(a)
				s.copyOnly = tc.copy
				hdr := []byte("HEADER--")
				trailer := []byte{0, 0, 0}
				type res struct {
					short bool
					err   error
				}
				done := make(chan res, 1)
				go func() {
					short, err := s.SendFile(hdr, int(f.Fd()), int64(tc.off), tc.n, trailer)
					done <- res{short, err}
				}()
				got := make([]byte, len(hdr)+tc.n+len(trailer))
				_ = b.SetReadDeadline(time.Now().Add(time.Minute)) // failure bound only
				if _, err := io.ReadFull(b, got); err != nil {
					t.Fatalf("reading what SendFile sent: %v", err)
				}
				r := <-done
				if r.err != nil {
					t.Fatalf("SendFile: %v", r.err)
				}
				if r.short != tc.wantShort {
					t.Fatalf("short = %v, want %v", r.short, tc.wantShort)
				}
				want := append([]byte(nil), hdr...)
				if tc.off < size {
					want = append(want, data[tc.off:min(size, tc.off+tc.n)]...)
				}
				want = append(want, make([]byte, len(got)-len(want))...) // zeros, then the trailer
				if !bytes.Equal(got, want) {
					i := 0
					for i < len(got) && got[i] == want[i] {
						i++
					}
					t.Fatalf("stream differs from byte %d of %d", i, len(got))
				}
				// Nothing more was sent after the trailer.
				a.Close()
				if n, err := b.Read(make([]byte, 1)); n != 0 || err != io.EOF {
					t.Fatalf("after the record: %d bytes, %v; want end of stream", n, err)
				}
			})
		}
	}
	if pos, err := f.Seek(0, io.SeekCurrent); err != nil || pos != 0 {
		t.Fatalf("file offset after the sends: %d, %v; want 0", pos, err)
	}
}

// TestSendFileFailures: a connection without a descriptor sends nothing and
// says so (the caller then writes a copy); a send into a socket nobody reads
// ends at the write deadline; a closed peer fails the send.
func TestSendFileFailures(t *testing.T) {
	f, _ := dataFile(t, 8<<20)
	t.Run("no descriptor", func(t *testing.T) {
		a, b := net.Pipe()
		t.Cleanup(func() { a.Close(); b.Close() })
		s := New(a)
		if s.CanSendFile() {
			t.Fatal("CanSendFile on a net.Pipe")
		}
		if _, err := s.SendFile([]byte("h"), int(f.Fd()), 0, 10, nil); !errors.Is(err, ErrNoDescriptor) {
			t.Fatalf("SendFile on a net.Pipe: %v, want ErrNoDescriptor", err)
		}
	})
	t.Run("deadline", func(t *testing.T) {
		a, _ := socketPair(t) // the peer never reads
		s := New(a)
		if !s.CanSendFile() {
			t.Fatal("no CanSendFile on a socket")
		}
		_ = a.SetWriteDeadline(time.Now().Add(20 * time.Millisecond))
		if _, err := s.SendFile([]byte("h"), int(f.Fd()), 0, 8<<20, nil); !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("SendFile into a full socket past its deadline: %v; want os.ErrDeadlineExceeded", err)
		}
	})
	t.Run("peer closed", func(t *testing.T) {
		a, b := tcpPair(t)
		b.Close()
		s := New(a)
		var err error
		for range 100 { // the first sends may land before the reset arrives
			if _, err = s.SendFile([]byte("h"), int(f.Fd()), 0, 8<<20, nil); err != nil {
				break
			}
		}
		if err == nil {
			t.Fatal("SendFile to a closed peer kept succeeding")
		}
	})
}
