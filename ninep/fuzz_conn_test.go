package ninep_test

import (
	"context"
	"errors"
	"fmt"
	"io"
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
	"golang.org/x/sys/unix"
)

// chanListener hands Serve the connections a test makes.
type chanListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func (l *chanListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *chanListener) Close() error   { l.once.Do(func() { close(l.done) }); return nil }
func (l *chanListener) Addr() net.Addr { return &net.UnixAddr{Name: "fuzz", Net: "unix"} }

// socketpair returns both ends of a connected Unix stream socket pair, as
// net.Conns with descriptors (so the server uses its raw socket I/O).
func socketpair(t testing.TB) (net.Conn, *net.UnixConn) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	conn := func(fd int) net.Conn {
		f := os.NewFile(uintptr(fd), "socketpair")
		defer f.Close()
		c, err := net.FileConn(f)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	return conn(fds[0]), conn(fds[1]).(*net.UnixConn)
}

// FuzzServerConn pushes an arbitrary request stream through a real server
// connection (a socket pair into Server.Serve over a real core), after a valid
// Tversion and Tattach, and hangs up. No panic may escape (it would end the
// fuzzing process) or be recovered (the log is checked), the server must close
// the connection, and no goroutine or descriptor may be left behind once it has.
func FuzzServerConn(f *testing.F) {
	for _, s := range ninep.SeedStreams() {
		f.Add(s)
	}
	root := f.TempDir()
	export := filepath.Join(root, "export")
	if err := os.MkdirAll(filepath.Join(export, "d"), 0o755); err != nil {
		f.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(export, "f"), []byte("fuzz"), 0o644); err != nil {
		f.Fatal(err)
	}
	reg, err := server.OpenRegistry(filepath.Join(root, "registry.json"))
	if err != nil {
		f.Fatal(err)
	}
	logs := &logBuffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	fsys, err := server.New(export, server.Options{Registry: reg, Logger: log, WriteQuiet: time.Hour,
		Sink: server.SinkFunc(func(_ context.Context, _ server.Change) error { return nil })})
	if err != nil {
		f.Fatal(err)
	}
	srv := ninep.NewServer(fsys, ninep.Options{Logger: log, MaxMsize: ninep.StreamMsize})
	ninep.ShortMakeWait(srv, 50*time.Millisecond)
	ninep.ShortOwnWait(srv, 50*time.Millisecond)
	ln := &chanListener{conns: make(chan net.Conn), done: make(chan struct{})}
	served := make(chan struct{})
	go func() { defer close(served); srv.Serve(ln) }()
	f.Cleanup(func() { srv.Close(); <-served; fsys.Close() })

	fds := func() int {
		ents, _ := os.ReadDir("/proc/self/fd")
		// Not those the core keeps for directories one level down,
		// bounded and living as long as the core (server.FS.KeptDirs).
		return len(ents) - fsys.KeptDirs()
	}
	run := func(t *testing.T, in []byte) {
		s, c := socketpair(t)
		defer c.Close()
		ln.conns <- s
		c.SetDeadline(time.Now().Add(20 * time.Second))
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.Write(append(ninep.Prologue(), in...)) // fails once the server closes: fine
			c.CloseWrite()
		}()
		_, err := io.Copy(io.Discard, c) // until the server closes its end
		wg.Wait()
		if errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("the server did not close the connection")
		}
	}
	settle := func(t *testing.T, what string, cond func() bool) {
		deadline := time.Now().Add(20 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("%s", what)
			}
			time.Sleep(time.Millisecond)
		}
	}
	var baseG, baseFD int
	var once sync.Once
	f.Fuzz(func(t *testing.T, in []byte) {
		once.Do(func() {
			// A first session starts what lives as long as the core.
			run(t, nil)
			settle(t, "the warm-up connection did not end", func() bool { return ninep.Conns(srv) == 0 })
			baseG, baseFD = runtime.NumGoroutine(), fds()
		})
		run(t, in)
		settle(t, "the connection did not end", func() bool { return ninep.Conns(srv) == 0 })
		settle(t, fmt.Sprintf("goroutines leaked: %d, %d before", runtime.NumGoroutine(), baseG),
			func() bool { return runtime.NumGoroutine() <= baseG })
		settle(t, fmt.Sprintf("descriptors leaked: %d, %d before", fds(), baseFD),
			func() bool { return fds() <= baseFD })
		if l := logs.String(); strings.Contains(l, "panic") {
			t.Fatalf("a panic was recovered:\n%s", l)
		}
	})
}
