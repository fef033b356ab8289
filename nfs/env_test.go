package nfs_test

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/semfs/semfs/nfs"
	"github.com/semfs/semfs/server"
)

// env is a running daemon slice: a server.FS on a backing directory with a uid
// registry and a recording Sink, and an nfs.Server on 127.0.0.1:0.
type env struct {
	t     testing.TB
	dir   string // backing directory
	state string // nfs state directory
	reg   *server.Registry
	fsys  *server.FS
	srv   *nfs.Server
	tee   atomic.Pointer[nfs.Server] // srv, once it can take the change stream
	addr  string
	port  int
	done  chan error
	tune  func(*nfs.Options) // adjusts the server's options before each start
	log   *logBuffer         // what the server logged

	mu      sync.Mutex
	changes []server.Change
}

func newEnv(t testing.TB) *env {
	dir := filepath.Join(t.TempDir(), "export")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// Shared: a root daemon checks its callers, and the tests act as several uids.
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	return newEnvAt(t, dir)
}

// newEnvAt serves an existing backing directory.
func newEnvAt(t testing.TB, dir string) *env {
	return newEnvWith(t, dir, nil)
}

// newEnvWith serves dir with options adjusted by tune (nil: defaults).
func newEnvWith(t testing.TB, dir string, tune func(*nfs.Options)) *env {
	e := &env{t: t, dir: dir, state: filepath.Join(t.TempDir(), "state"), tune: tune, log: &logBuffer{}}
	e.start()
	t.Cleanup(e.stop)
	return e
}

// start (re)starts the FS and the NFS server on the same directories.
func (e *env) start() {
	t := e.t
	reg, err := server.OpenRegistry(filepath.Join(e.state, "..", "registry.json"))
	if err != nil {
		t.Fatal(err)
	}
	e.reg = reg
	e.fsys, err = server.New(e.dir, server.Options{
		Registry:   reg,
		WriteQuiet: 50 * time.Millisecond,
		// The daemon's sink (cmd/semfs changeSink) tees the change stream
		// into the NFS server, so that renames and removes made through the
		// core close the descriptors the server caches; so does this one.
		Sink: server.SinkFunc(func(ctx context.Context, c server.Change) error {
			e.mu.Lock()
			e.changes = append(e.changes, c)
			e.mu.Unlock()
			if s := e.tee.Load(); s != nil {
				return s.Apply(ctx, c)
			}
			return nil
		}),
	})
	if err != nil {
		t.Fatal(err)
	}
	opts := nfs.Options{StateDir: e.state, Logger: slog.New(slog.NewTextHandler(e.log, nil))}
	if e.tune != nil {
		e.tune(&opts)
	}
	e.srv, err = nfs.NewServer(e.fsys, opts)
	if err != nil {
		t.Fatal(err)
	}
	e.tee.Store(e.srv)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	e.addr = ln.Addr().String()
	_, ps, _ := net.SplitHostPort(e.addr)
	e.port, _ = strconv.Atoi(ps)
	e.done = make(chan error, 1)
	go func(s *nfs.Server) { e.done <- s.Serve(ln) }(e.srv)
}

func (e *env) stop() {
	if e.srv == nil {
		return
	}
	if err := e.srv.Close(); err != nil {
		e.t.Errorf("nfs close: %v", err)
	}
	// Serve reports ErrClosed when Close came first (a stop right after start).
	if err := <-e.done; err != nil && !errors.Is(err, net.ErrClosed) {
		e.t.Errorf("serve returned %v", err)
	}
	if err := e.fsys.Close(); err != nil {
		e.t.Errorf("fs close: %v", err)
	}
	e.srv = nil
}

func (e *env) restart() { e.stop(); e.start() }

// created returns the app the Sink saw create path ("" and false if none).
func (e *env) created(path string) (string, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, c := range e.changes {
		if c.Op == server.ChangeCreate && c.Path == path {
			return c.App, true
		}
	}
	return "", false
}

func (e *env) hasChange(op server.ChangeOp, path, newPath string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, c := range e.changes {
		if c.Op == op && c.Path == path && c.NewPath == newPath {
			return true
		}
	}
	return false
}

// client dials a raw client and mounts path.
func (e *env) client(path string) (*rawClient, []byte) {
	e.t.Helper()
	c := dialRaw(e.t, e.addr)
	st, root := c.mount(path)
	if st != 0 {
		e.t.Fatalf("mount %s: status %d", path, st)
	}
	return c, root
}

func (e *env) read(rel string) string {
	e.t.Helper()
	b, err := os.ReadFile(filepath.Join(e.dir, rel))
	if err != nil {
		e.t.Fatal(err)
	}
	return string(b)
}

// logBuffer collects a server's log lines; safe for concurrent use.
type logBuffer struct {
	mu sync.Mutex
	b  []byte
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b = append(l.b, p...)
	return len(p), nil
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return string(l.b)
}
