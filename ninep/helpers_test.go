package ninep_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/hugelgupf/p9/p9"
	"github.com/semfs/semfs/ninep"
	"github.com/semfs/semfs/ninep/v9fsconn"
	"github.com/semfs/semfs/server"
)

// env is a real core (backing directory, registry, change recorder) served by a
// real ninep.Server on loopback TCP and a Unix socket.
type env struct {
	root    string // parent of export/ and outside/
	export  string // the backing directory
	outside string // a sibling directory containment tests try to reach
	fs      *server.FS
	reg     *server.Registry
	srv     *ninep.Server
	tcp     string
	unix    string
	rec     *recorder
	logs    *logBuffer
}

// recorder is the index's stand-in at the change stream: a real Sink that keeps
// what it is told. panicOn makes Apply panic for one path (the panic test).
type recorder struct {
	mu      sync.Mutex
	changes []server.Change
	panicOn string
}

func (r *recorder) sink() server.SinkFunc {
	return func(_ context.Context, c server.Change) error {
		r.mu.Lock()
		p := r.panicOn
		r.changes = append(r.changes, c)
		r.mu.Unlock()
		if p != "" && c.Path == p {
			panic("recorder: asked to panic on " + p)
		}
		return nil
	}
}

func (r *recorder) all() []server.Change {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]server.Change(nil), r.changes...)
}

// find returns the first change with op and path, waiting up to 5 s for it (the
// write coalescer delivers from its own goroutine).
func (r *recorder) find(t *testing.T, op server.ChangeOp, path string) server.Change {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		for _, c := range r.all() {
			if c.Op == op && c.Path == path {
				return c
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %v change for %q; got %+v", op, path, r.all())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (r *recorder) has(op server.ChangeOp, path string) bool {
	for _, c := range r.all() {
		if c.Op == op && c.Path == path {
			return true
		}
	}
	return false
}

// logBuffer collects the server's log records so tests can assert on them.
type logBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	return len(p), nil
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return string(l.buf)
}

func newEnv(t testing.TB, opts ...func(*server.Options)) *env {
	t.Helper()
	e := &env{root: t.TempDir(), rec: &recorder{}, logs: &logBuffer{}}
	e.export = filepath.Join(e.root, "export")
	e.outside = filepath.Join(e.root, "outside")
	for _, d := range []string{e.export, e.outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// Shared: a root daemon checks its callers, and the tests act as several uids.
	if err := os.Chmod(e.export, 0o777); err != nil {
		t.Fatal(err)
	}
	// servertest's canary: nothing may touch it.
	if err := os.WriteFile(filepath.Join(e.outside, "secret"), []byte("outside"), 0o644); err != nil {
		t.Fatal(err)
	}
	var err error
	if e.reg, err = server.OpenRegistry(filepath.Join(e.root, "registry.json")); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	// A write quiet period far beyond the test: a ChangeWrite seen by a test came
	// from a clunk, not from the timer.
	o := server.Options{Sink: e.rec.sink(), Registry: e.reg, Logger: log, WriteQuiet: time.Hour}
	for _, f := range opts {
		f(&o)
	}
	e.fs, err = server.New(e.export, o)
	if err != nil {
		t.Fatal(err)
	}
	e.srv = ninep.NewServer(e.fs, ninep.Options{Logger: log})
	tl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	e.tcp = tl.Addr().String()
	e.unix = filepath.Join(e.root, "9p.sock")
	ul, err := net.Listen("unix", e.unix)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for _, ln := range []net.Listener{tl, ul} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := e.srv.Serve(ln); err != nil {
				t.Errorf("Serve: %v", err)
			}
		}()
	}
	t.Cleanup(func() {
		e.srv.Close()
		wg.Wait()
		e.fs.Close()
	})
	return e
}

// dial connects p9's client over network/addr with msize and attaches aname as uid.
func dial(t testing.TB, network, addr, aname string, uid uint32, msize uint32) (*p9.Client, p9.File) {
	t.Helper()
	cl := client(t, network, addr, uid, msize)
	root, err := cl.Attach(aname)
	if err != nil {
		t.Fatalf("attach %q: %v", aname, err)
	}
	return cl, root
}

func client(t testing.TB, network, addr string, uid uint32, msize uint32) *p9.Client {
	t.Helper()
	nc, err := net.Dial(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := p9.NewClient(v9fsconn.Wrap(nc, uid), p9.WithMessageSize(msize))
	if err != nil {
		t.Fatalf("version: %v", err)
	}
	if cl.Version() != 0 {
		t.Fatalf("negotiated 9P2000.L.Google.%d, want plain 9P2000.L", cl.Version())
	}
	t.Cleanup(func() { cl.Close() })
	return cl
}

func walk(t testing.TB, from p9.File, names ...string) p9.File {
	t.Helper()
	_, f, err := from.Walk(names)
	if err != nil {
		t.Fatalf("walk %v: %v", names, err)
	}
	return f
}

// create makes name in dir with data and clunks it.
func create(t testing.TB, dir p9.File, name string, data []byte) {
	t.Helper()
	d := walk(t, dir)
	f, _, _, err := d.Create(name, p9.ReadWrite, 0o644, p9.NoUID, p9.NoGID)
	if err != nil {
		t.Fatalf("create %s: %v", name, err)
	}
	if len(data) > 0 {
		if n, err := f.WriteAt(data, 0); err != nil || n != len(data) {
			t.Fatalf("write %s: %d, %v", name, n, err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatalf("clunk %s: %v", name, err)
	}
}

// readAll opens name below dir and reads it whole.
func readAll(t *testing.T, dir p9.File, names ...string) []byte {
	t.Helper()
	f := walk(t, dir, names...)
	defer f.Close()
	if _, _, err := f.Open(p9.ReadOnly); err != nil {
		t.Fatalf("open %v: %v", names, err)
	}
	var out []byte
	buf := make([]byte, 1<<20)
	for off := int64(0); ; {
		n, err := f.ReadAt(buf, off)
		out = append(out, buf[:n]...)
		off += int64(n)
		if errors.Is(err, io.EOF) || (err == nil && n == 0) {
			return out
		}
		if err != nil {
			t.Fatalf("read %v: %v", names, err)
		}
	}
}

// readdir lists dir completely through a fresh fid, in Treaddir order.
func readdir(t *testing.T, dir p9.File, count uint32) []p9.Dirent {
	t.Helper()
	d := walk(t, dir)
	defer d.Close()
	if _, _, err := d.Open(p9.ReadOnly); err != nil {
		t.Fatalf("open dir: %v", err)
	}
	var all []p9.Dirent
	var off uint64
	for i := 0; i < 1_000_000; i++ {
		ents, err := d.Readdir(off, count)
		if err != nil {
			t.Fatalf("readdir at %d: %v", off, err)
		}
		if len(ents) == 0 {
			return all
		}
		all = append(all, ents...)
		off = ents[len(ents)-1].Offset
	}
	t.Fatal("readdir did not end")
	return nil
}
