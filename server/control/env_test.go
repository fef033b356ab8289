package control

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/server"
	"github.com/semfs/semfs/server/snapshot"
)

// env is a real control server over a real core and a real keyword-only index,
// in a temporary directory, listening on a real Unix socket.
type env struct {
	base, data, sock string
	fs               *server.FS
	idx              *index.Index
	reg              *server.Registry
	srv              *Server
	served           chan error
}

// seedFiles are in every env's backing directory, indexed: "link" is a symlink
// to the directory "notes", so "link/a.txt" goes through a symlink.
var seedFiles = []string{"notes/a.txt", "b.txt", "deep/er/c.md"}

type envOptions struct {
	limits   server.Limits
	sync     func(ctx context.Context) error
	snapshot bool
}

func newEnv(t testing.TB, o envOptions) *env {
	t.Helper()
	// A short base directory: a Unix socket path must fit in 108 bytes.
	base, err := os.MkdirTemp("", "semfs-ctl-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	e := &env{base: base, data: filepath.Join(base, "data"), sock: filepath.Join(base, "ctl.sock")}
	for _, p := range seedFiles {
		full := filepath.Join(e.data, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte("content of "+p), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("notes", filepath.Join(e.data, "link")); err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	if e.reg, err = server.OpenRegistry(filepath.Join(base, "registry.json")); err != nil {
		t.Fatal(err)
	}
	if e.idx, err = index.Open(filepath.Join(base, "index"), index.Options{Logger: quiet}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.idx.Close() })
	if e.fs, err = server.New(e.data, server.Options{Registry: e.reg, Logger: quiet, BackingCheck: -1}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.fs.Close() })
	var files []index.FileState
	err = e.fs.Walk(context.Background(), "", func(p string, a server.Attr) error {
		if a.Mode.IsRegular() || a.IsSymlink() {
			files = append(files, index.FileState{Path: p, Ino: a.FileID(), Size: a.Size, ModTime: a.Mtime})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.idx.Reconcile(files); err != nil {
		t.Fatal(err)
	}
	opt := Options{FS: e.fs, Index: e.idx, Registry: e.reg, Logger: quiet, Limits: o.limits, Sync: o.sync}
	if o.snapshot {
		opt.Snapshot = func(ctx context.Context, w io.Writer, _ func(int64)) error {
			return snapshot.Write(ctx, w, e.fs, e.idx, e.reg)
		}
	}
	e.srv = New(opt)
	if err := e.srv.Listen(e.sock); err != nil {
		t.Fatal(err)
	}
	e.served = make(chan error, 1)
	go func() { e.served <- e.srv.Serve() }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		e.srv.Shutdown(ctx)
		if err := <-e.served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return e
}

// dump is the index's whole content, to tell whether a request changed it.
func (e *env) dump(t testing.TB) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := e.idx.Dump(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// state is everything a request could change: the index, the registrations
// and the backing directory's names.
func (e *env) state(t testing.TB) string {
	t.Helper()
	var names []string
	filepath.Walk(e.data, func(p string, fi os.FileInfo, err error) error {
		if err == nil {
			names = append(names, fmt.Sprintf("%s %v %d", p, fi.Mode(), fi.Size()))
		}
		return nil
	})
	return fmt.Sprintf("%x\n%v\n%s", e.dump(t), e.reg.All(), strings.Join(names, "\n"))
}

// serve runs one request through the server's whole handler chain (the guard,
// the method check, the route), as the caller with this process's uid.
func (e *env) serve(r *http.Request) *httptest.ResponseRecorder {
	p := peer{uid: uint32(os.Getuid()), gid: uint32(os.Getgid()), pid: int32(os.Getpid()), ok: true}
	r = r.WithContext(context.WithValue(r.Context(), peerKey{}, p))
	w := httptest.NewRecorder()
	e.srv.http.Handler.ServeHTTP(w, r)
	return w
}

// dial opens a raw connection to the control socket.
func (e *env) dial(t testing.TB) net.Conn {
	t.Helper()
	c, err := net.Dial("unix", e.sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// checkErrorShape fails unless a 4xx or 5xx answer is {"error":{"code","message"}}
// with both set.
func checkErrorShape(t testing.TB, status int, body []byte) {
	t.Helper()
	if status < 400 {
		return
	}
	var eb struct {
		Error *ErrorDetail `json:"error"`
	}
	if err := json.Unmarshal(body, &eb); err != nil || eb.Error == nil || eb.Error.Code == "" || eb.Error.Message == "" {
		t.Fatalf("a %d answer is not a JSON error: %q (%v)", status, body, err)
	}
}

// activeConns is how many connections the cap counts as served now.
func (e *env) activeConns() int64 {
	if cl, ok := e.srv.ln.(*capListener); ok {
		return cl.active.Load()
	}
	return -1
}
