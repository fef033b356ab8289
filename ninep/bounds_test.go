package ninep_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hugelgupf/p9/linux"
	"github.com/semfs/semfs/ninep"
)

const (
	tRreaddir = 41
	boundMsz  = 16 << 10
)

// closedByServer reports whether the server closed r's connection: the next
// read ends (EOF or a reset) rather than timing out, and no reply came first.
func (r *raw) closedByServer() bool {
	r.t.Helper()
	r.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	var b [1]byte
	n, err := r.br.Read(b[:])
	var ne net.Error
	if n > 0 || errors.As(err, &ne) && ne.Timeout() {
		return false
	}
	return err != nil
}

// noFastServer is a second server of e's core where p9 answers everything,
// logging into logs, on its own Unix socket.
func noFastServer(t *testing.T, e *env, logs *logBuffer) string {
	t.Helper()
	srv := ninep.NewServer(e.fs, ninep.Options{Logger: slog.New(slog.NewTextHandler(logs, nil))})
	ninep.NoFastPath(srv)
	sock := filepath.Join(e.root, "p9only.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close(); <-done })
	return sock
}

// TestWireBounds: every size and count from the wire is bounded before it is
// used. A Tread or Treaddir count past the msize is shortened to fit (it made
// p9 panic inside, answered EFAULT); a Twalk of more than 16 names, a Twrite
// whose count lies, an xattr size from nowhere are refused and the connection
// serves on; a size field below the header or above the msize, a string
// running past its message, a request before Tversion close the connection
// with a log line. Both with the fast path and with p9 answering everything,
// and never a panic in the logs.
func TestWireBounds(t *testing.T) {
	e := newEnv(t)
	big := bytes.Repeat([]byte("0123456789abcdef"), 3*boundMsz/16)
	if err := os.WriteFile(filepath.Join(e.export, "big"), big, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(e.export, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range 300 {
		name := filepath.Join(e.export, "d", strings.Repeat("n", 100)+string(rune('a'+i%26))+string(rune('a'+i/26)))
		if err := os.WriteFile(name, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	refLogs := &logBuffer{}
	ref := noFastServer(t, e, refLogs)
	servers := []struct{ name, network, addr string }{
		{"fast path", "tcp", e.tcp},
		{"p9 only", "unix", ref},
	}
	attached := func(t *testing.T, network, addr string) *raw {
		r := dialRaw(t, network, addr)
		if got := r.version(boundMsz); got != boundMsz {
			t.Fatalf("msize %d", got)
		}
		if err := r.attach(1, 1, "@bounds", 0); err != nil {
			t.Fatal(err)
		}
		return r
	}
	alive := func(t *testing.T, r *raw) {
		t.Helper()
		r.mustCall(msg(tGetattr, 99, uint32(1), maskAll))
	}
	for _, s := range servers {
		t.Run(s.name, func(t *testing.T) {
			t.Run("Tread past msize is shortened", func(t *testing.T) {
				r := attached(t, s.network, s.addr)
				r.mustCall(twalk(1, 2, "big"))
				r.mustCall(msg(tLopen, 6, uint32(2), oRdonly))
				for _, count := range []uint32{boundMsz - 11, boundMsz, boundMsz + 1000, 4 << 20, 0xFFFFFFFF} {
					body := r.mustCall(msg(tRead, 7, uint32(2), uint64(0), count))
					if n := binary.LittleEndian.Uint32(body); n != boundMsz-11 || len(body) != int(n)+4 {
						t.Fatalf("count %d: Rread of %d bytes (body %d), want %d", count, n, len(body), boundMsz-11)
					}
					if !bytes.Equal(body[4:], big[:boundMsz-11]) {
						t.Fatalf("count %d: wrong data", count)
					}
				}
				alive(t, r)
			})
			t.Run("Treaddir past msize is shortened", func(t *testing.T) {
				r := attached(t, s.network, s.addr)
				r.mustCall(twalk(1, 2, "d"))
				r.mustCall(msg(tLopen, 6, uint32(2), oRdonly))
				r.send(msg(tReaddir, 7, uint32(2), uint64(0), uint32(0xFFFFFFFF)))
				typ, _, body := r.recv()
				if typ != tRreaddir || len(body)+7 > boundMsz || len(body) < 1000 {
					t.Fatalf("Rreaddir type %d, %d bytes, msize %d", typ, len(body)+7, boundMsz)
				}
				alive(t, r)
			})
			t.Run("Twalk of 17 names is refused", func(t *testing.T) {
				r := attached(t, s.network, s.addr)
				names := make([]string, 17)
				for i := range names {
					names[i] = "d"
				}
				if _, err := r.call(twalk(1, 2, names...)); err != linux.EINVAL {
					t.Fatalf("17 names: %v, want EINVAL", err)
				}
				alive(t, r)
				// 65535 names claimed, none sent: the framing is intact.
				if _, err := r.call(msg(tWalk, 3, uint32(1), uint32(2), uint16(0xFFFF))); err != linux.EINVAL {
					t.Fatalf("65535 names: %v, want EINVAL", err)
				}
				alive(t, r)
			})
			t.Run("Twrite whose count lies is refused", func(t *testing.T) {
				r := attached(t, s.network, s.addr)
				r.mustCall(twalk(1, 2, "d"))
				r.mustCall(msg(tLcreate, 10, uint32(2), "w", oRdwr, uint32(0o644), uint32(0)))
				for _, count := range []uint32{0, 4, 6, 0xFFFFFFFF} {
					r.send(msg(tWrite, 8, uint32(2), uint64(0), count, []byte("semfs")))
					typ, _, body := r.recv()
					if typ != tLerror || len(body) != 4 {
						t.Fatalf("count %d: reply type %d", count, typ)
					}
				}
				alive(t, r)
				if b, err := os.ReadFile(filepath.Join(e.export, "d", "w")); err != nil || len(b) != 0 {
					t.Fatalf("d/w = %q, %v after refused writes", b, err)
				}
			})
			t.Run("Tflush of itself or of a Tflush is answered", func(t *testing.T) {
				// p9 alone waits for the flushed tag inside the Tflush's handler:
				// forever, and the connection could then never end.
				r := attached(t, s.network, s.addr)
				r.mustCall(msg(tFlush, 40, uint16(40)))
				r.send(append(msg(tFlush, 41, uint16(42)), msg(tFlush, 42, uint16(41))...))
				for range 2 {
					if typ, tag, _ := r.recv(); typ != tFlush+1 || tag != 41 && tag != 42 {
						t.Fatalf("reply type %d tag %d", typ, tag)
					}
				}
				alive(t, r)
			})
			t.Run("xattr sizes are refused", func(t *testing.T) {
				r := attached(t, s.network, s.addr)
				if _, err := r.call(msg(tXattrcreate, 5, uint32(1), "user.x", uint64(1)<<62, uint32(0))); err != linux.EOPNOTSUPP {
					t.Fatalf("Txattrcreate: %v", err)
				}
				if _, err := r.call(msg(tXattrwalk, 5, uint32(1), uint32(2), "user.x")); err != linux.EOPNOTSUPP {
					t.Fatalf("Txattrwalk: %v", err)
				}
				alive(t, r)
			})
			closes := []struct {
				name     string
				versionF bool // negotiate first
				req      []byte
			}{
				{"size 0", true, []byte{0, 0, 0, 0, tGetattr, 1, 0}},
				{"size 6", true, []byte{6, 0, 0, 0, tGetattr, 1, 0}},
				{"size above msize", true, sized(msg(tWrite, 8, uint32(1), uint64(0), uint32(boundMsz)), boundMsz+1)},
				{"size 4 GiB", true, sized(msg(tGetattr, 4, uint32(1), maskAll), 0xFFFFFFFF)},
				{"size 4 GiB before Tversion", false, sized(msg(tVersion, 0xFFFF, uint32(8192), "9P2000.L"), 0xFFFFFFFF)},
				{"size past the server's msize before Tversion", false, sized(msg(tVersion, 0xFFFF, uint32(8192), "9P2000.L"), 1<<20+1)},
				{"Tattach before Tversion", false, msg(tAttach, 1, uint32(1), uint32(noFid), "", "/", uint32(0))},
				{"Tread before Tversion", false, msg(tRead, 1, uint32(1), uint64(0), uint32(100))},
				{"Tversion string past its message", false, sized(msg(tVersion, 0xFFFF, uint32(8192), "9P2000.L"), 11+2+3)},
				{"a second Tversion", true, msg(tVersion, 0xFFFF, uint32(4096), "9P2000.L")},
				{"Tattach string past its message", true, msg(tAttach, 1, uint32(1), uint32(noFid), uint16(60000), []byte("ab"))},
			}
			for _, c := range closes {
				t.Run("closes: "+c.name, func(t *testing.T) {
					r := dialRaw(t, s.network, s.addr)
					if c.versionF {
						r.version(boundMsz)
					}
					r.send(c.req)
					if !r.closedByServer() {
						t.Fatal("the connection stayed open")
					}
				})
			}
		})
	}
	for name, logs := range map[string]string{"fast path": e.logs.String(), "p9 only": refLogs.String()} {
		if strings.Contains(logs, "panic") {
			t.Errorf("%s server logged a panic:\n%s", name, logs)
		}
		if n := strings.Count(logs, "malformed 9P message; closing the connection"); n < 5 {
			t.Errorf("%s server logged %d closings, want at least 5:\n%s", name, n, logs)
		}
	}
}

// sized sets a message's size field to size, whatever its length.
func sized(b []byte, size uint32) []byte {
	binary.LittleEndian.PutUint32(b, size)
	return b
}

var _ = io.EOF
