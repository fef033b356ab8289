package ninep_test

import (
	"bufio"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/semfs/semfs/ninep"
	"github.com/semfs/semfs/server"
	"github.com/semfs/semfs/server/servertest"
)

// limited serves e's core with a second server under lim on its own TCP and
// Unix listeners, logging into the returned buffer.
func limited(t *testing.T, e *env, lim server.Limits) (tcp, unix string, logs *logBuffer) {
	t.Helper()
	logs = &logBuffer{}
	srv := ninep.NewServer(e.fs, ninep.Options{Logger: slog.New(slog.NewTextHandler(logs, nil)), Limits: lim})
	tl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	unix = filepath.Join(t.TempDir(), "lim.sock")
	ul, err := net.Listen("unix", unix)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for _, ln := range []net.Listener{tl, ul} {
		wg.Add(1)
		go func() { defer wg.Done(); srv.Serve(ln) }()
	}
	t.Cleanup(func() { srv.Close(); wg.Wait() })
	return tl.Addr().String(), unix, logs
}

// TestTimeouts: a connection that never attaches is closed after the idle
// timeout, one that attached never is, and a message whose first byte arrived
// must arrive whole within the body timeout (a stalled header, a stalled or
// dribbled body, attached or not), over TCP and Unix sockets alike.
func TestTimeouts(t *testing.T) {
	e := newEnv(t)
	const idle, body = 300 * time.Millisecond, 300 * time.Millisecond
	tcp, unix, logs := limited(t, e, server.Limits{IdleTimeout: idle, BodyTimeout: body})
	for _, s := range []struct{ network, addr string }{{"tcp", tcp}, {"unix", unix}} {
		t.Run(s.network, func(t *testing.T) {
			// An attached connection, idle from now on.
			mount := dialRaw(t, s.network, s.addr)
			mount.version(fastMsize)
			if err := mount.attach(1, 1, "@limits", 0); err != nil {
				t.Fatal(err)
			}
			mount.mustCall(msg(tGetattr, 2, uint32(1), maskAll))

			// Never attaching: nothing sent, and a Tversion only.
			silent := dialRaw(t, s.network, s.addr)
			versioned := dialRaw(t, s.network, s.addr)
			versioned.version(fastMsize)
			if !silent.closedByServer() || !versioned.closedByServer() {
				t.Fatal("a connection that never attached stayed open")
			}
			// The mount has been idle longer than the idle timeout by now.
			mount.mustCall(msg(tGetattr, 2, uint32(1), maskAll))

			stalls := []struct {
				name  string
				stage int // 0: nothing before, 1: Tversion, 2: Tversion and Tattach
				sent  []byte
				drip  []byte // sent a byte at a time afterwards, faster than the timeout
			}{
				{"header cut short", 0, []byte{20, 0, 0}, nil},
				{"Tversion cut short", 0, msg(tVersion, 0xFFFF, uint32(fastMsize), "9P2000.L")[:14], nil},
				{"header cut short, attached", 2, []byte{20, 0}, nil},
				{"Twrite body cut short, attached", 2, msg(tWrite, 8, uint32(1), uint64(0), uint32(1000), make([]byte, 1000))[:30], nil},
				{"Tattach body cut short", 1, msg(tAttach, 1, uint32(1), uint32(noFid), "", "/", uint32(0))[:12], nil},
				{"Twrite body dribbled, attached", 2, nil, msg(tWrite, 8, uint32(1), uint64(0), uint32(1000), make([]byte, 1000))},
			}
			for _, st := range stalls {
				t.Run(st.name, func(t *testing.T) {
					r := dialRaw(t, s.network, s.addr)
					if st.stage >= 1 {
						r.version(fastMsize)
					}
					if st.stage >= 2 {
						if err := r.attach(1, 1, "@limits", 0); err != nil {
							t.Fatal(err)
						}
					}
					if st.sent != nil {
						r.send(st.sent)
					}
					if st.drip != nil {
						stop := make(chan struct{})
						defer close(stop)
						go func() {
							for _, b := range st.drip {
								select {
								case <-stop:
									return
								case <-time.After(body / 10):
								}
								if _, err := r.c.Write([]byte{b}); err != nil {
									return
								}
							}
						}()
					}
					if !r.closedByServer() {
						t.Fatal("the connection stayed open")
					}
				})
			}
			mount.mustCall(msg(tGetattr, 2, uint32(1), maskAll))
		})
	}
	for _, want := range []string{"idle before any attach", "within the body timeout"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("no %q in the log:\n%s", want, logs.String())
		}
	}
}

// TestMaxConns: per listener, one connection over the cap is accepted and
// closed at once (and logged); a place freed is taken again.
func TestMaxConns(t *testing.T) {
	e := newEnv(t)
	tcp, unix, logs := limited(t, e, server.Limits{MaxConns: 2})
	for _, s := range []struct{ network, addr string }{{"tcp", tcp}, {"unix", unix}} {
		t.Run(s.network, func(t *testing.T) {
			a, b := dialRaw(t, s.network, s.addr), dialRaw(t, s.network, s.addr)
			a.version(fastMsize)
			b.version(fastMsize)
			over := dialRaw(t, s.network, s.addr)
			if !over.closedByServer() {
				t.Fatal("a third connection was served")
			}
			a.c.Close()
			// The server notices a's hang-up by itself; until then a new
			// connection may still be refused.
			servertest.WaitFor(t, "a freed place", func() bool {
				c, err := net.Dial(s.network, s.addr)
				if err != nil {
					return false
				}
				defer c.Close()
				// Written directly, not with raw.send: a server still refusing
				// closes the connection, and the write may then fail (EPIPE),
				// which here only means "not yet".
				if _, err := c.Write(msg(tVersion, 0xFFFF, uint32(fastMsize), "9P2000.L")); err != nil {
					return false
				}
				c.SetReadDeadline(time.Now().Add(5 * time.Second))
				_, err = newReader(c).Peek(1)
				return err == nil
			})
			// b is still served (a second Tversion would close it).
			if err := b.attach(1, 1, "@limits", 0); err != nil {
				t.Fatalf("b: %v", err)
			}
		})
	}
	if !strings.Contains(logs.String(), "too many connections") {
		t.Errorf("no refusal logged:\n%s", logs.String())
	}
}

// TestHostileHangupsLeakNothing: connections that hang up mid-message (in the
// header, in a Twrite's body, in a control message the shim buffers, after a
// malformed size, in the middle of a pipelined burst) leave no goroutine and
// no descriptor behind, under the default limits.
func TestHostileHangupsLeakNothing(t *testing.T) {
	e := newEnv(t)
	if err := os.WriteFile(filepath.Join(e.export, "f"), []byte("data"), 0o644); err != nil {
		t.Fatal(err)
	}
	fds := func() int {
		ents, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Skip("no /proc/self/fd")
		}
		return len(ents)
	}
	// One full session first, so that lazily started goroutines (the core's
	// coalescer and the like) are in the baseline.
	warm := attachFast(t, e)
	warm.mustCall(twalk(1, 2, "f"))
	warm.c.Close()
	servertest.WaitFor(t, "the warm-up connection to end", func() bool { return e.srv != nil && countConns(e) == 0 })
	baseG, baseFD := runtime.NumGoroutine(), fds()

	cuts := [][]byte{
		{9},
		{30, 0, 0, 0, tWrite},
		msg(tWrite, 8, uint32(1), uint64(0), uint32(1000), make([]byte, 100)),
		msg(tAttach, 1, uint32(1), uint32(noFid), "", "/", uint32(0))[:15],
		msg(tVersion, 0xFFFF, uint32(fastMsize), "9P2000.L")[:10],
		sized(msg(tGetattr, 1, uint32(1), maskAll), 3),
		sized(msg(tGetattr, 1, uint32(1), maskAll), 0x7FFFFFFF),
		append(append(twalk(1, 5, "f"), msg(tLopen, 6, uint32(5), oRdonly)...), msg(tRead, 7, uint32(5), uint64(0), uint32(100))[:12]...),
		append(append(twalk(1, 6), msg(tLcreate, 10, uint32(6), "hang", oRdwr, uint32(0o644), uint32(0))...), msg(tWrite, 8, uint32(6), uint64(0), uint32(10), []byte("abc"))...),
	}
	for round := range 3 {
		for i, cut := range cuts {
			for _, attach := range []bool{false, true} {
				for _, n := range []struct{ network, addr string }{{"tcp", e.tcp}, {"unix", e.unix}} {
					c, err := net.Dial(n.network, n.addr)
					if err != nil {
						t.Fatal(err)
					}
					r := &raw{t: t, c: c, br: newReader(c)}
					c.SetDeadline(time.Now().Add(20 * time.Second))
					if attach {
						r.version(fastMsize)
						if err := r.attach(1, 1, "@hangup", 0); err != nil {
							t.Fatal(err)
						}
					}
					if _, err := c.Write(cut); err != nil {
						t.Fatalf("round %d cut %d: %v", round, i, err)
					}
					c.Close()
				}
			}
		}
	}
	servertest.WaitFor(t, "every hostile connection to end", func() bool { return countConns(e) == 0 })
	servertest.WaitFor(t, fmt.Sprintf("goroutines back to %d", baseG), func() bool { return runtime.NumGoroutine() <= baseG })
	servertest.WaitFor(t, fmt.Sprintf("descriptors back to %d", baseFD), func() bool { return fds() <= baseFD })
	if _, err := os.Stat(filepath.Join(e.export, "hang")); err != nil {
		t.Fatalf("the create before the hang-up: %v", err)
	}
}

func countConns(e *env) int { return ninep.Conns(e.srv) }

func newReader(c net.Conn) *bufio.Reader { return bufio.NewReader(c) }
