package control

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/server"
)

// Options wire the control API to the daemon's parts.
type Options struct {
	FS       *server.FS
	Index    *index.Index
	Registry *server.Registry
	Logger   *slog.Logger

	// Limits bound each connection (idle and body timeouts, a cap on how many);
	// zero fields take server's defaults.
	Limits server.Limits
	// Health fills the parts of Health only the daemon knows (listeners, dirs);
	// the control server adds index stats and registrations.
	Health func() Health
	// Sync waits until every file change so far has reached the index, so that a
	// query sees the writes that happened before it. Nil means nothing to wait for.
	Sync func(ctx context.Context) error
	// Snapshot writes a consistent archive of the backing directory and index to w.
	Snapshot func(ctx context.Context, w io.Writer, size func(int64)) error
	// Metrics, when set, is served at GET /v1/metrics (Prometheus text format).
	Metrics http.Handler
	// Observe, when set, is told of every answered request (observe.go).
	Observe func(route string, status int, d time.Duration)
}

// Server serves the control API.
type Server struct {
	opt  Options
	log  *slog.Logger
	http *http.Server
	path string
	ln   net.Listener
}

type peerKey struct{}

// peer is the socket peer's credentials, read once per connection.
type peer struct {
	uid, gid uint32
	pid      int32
	ok       bool
}

// New returns a control server; call Listen then Serve.
func New(opt Options) *Server {
	s := &Server{opt: opt, log: opt.Logger}
	if s.log == nil {
		s.log = slog.Default()
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/register", s.method(http.MethodPost, s.serveRegister))
	mux.HandleFunc("/v1/tag", s.method(http.MethodPost, s.serveTag))
	mux.HandleFunc("/v1/tags", s.method(http.MethodPost, s.serveTags))
	mux.HandleFunc("/v1/query", s.method(http.MethodPost, s.serveQuery))
	mux.HandleFunc("/v1/files/", s.method(http.MethodGet, s.serveFile))
	mux.HandleFunc("/v1/health", s.method(http.MethodGet, s.serveHealth))
	mux.HandleFunc("/v1/snapshot", s.method(http.MethodPost, s.serveSnapshot))
	if opt.Metrics != nil {
		mux.HandleFunc("/v1/metrics", s.method(http.MethodGet, opt.Metrics.ServeHTTP))
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, CodeNotFound, fmt.Sprintf("no route %s %s", r.Method, r.URL.Path))
	})
	s.http = &http.Server{
		Handler:           s.observe(s.guard(mux)),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			return context.WithValue(ctx, peerKey{}, peerOf(c))
		},
	}
	return s
}

// Listen creates the Unix socket at path with mode 0660 (owner and group may
// talk to the daemon). A stale socket file left by a crash is replaced; a live
// daemon on the same path is an error.
func (s *Server) Listen(path string) error {
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode()&os.ModeSocket == 0 {
			return fmt.Errorf("control socket %s: a non-socket file is in the way", path)
		}
		if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
			c.Close()
			return fmt.Errorf("control socket %s: another daemon is listening there", path)
		}
		if err := os.Remove(path); err != nil {
			return fmt.Errorf("control socket %s: removing the stale socket: %w", path, err)
		}
	}
	// The umask makes the socket born without world access, so there is no window
	// in which others can connect before the chmod.
	old := syscall.Umask(0o117)
	ln, err := net.Listen("unix", path)
	syscall.Umask(old)
	if err != nil {
		return fmt.Errorf("control socket %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o660); err != nil {
		ln.Close()
		return fmt.Errorf("control socket %s: %w", path, err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(true)
	s.ln, s.path = ln, path
	return nil
}

// Serve answers requests until Shutdown.
func (s *Server) Serve() error {
	err := s.http.Serve(s.ln)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Shutdown stops accepting, lets requests in flight finish (until ctx ends) and
// removes the socket file.
func (s *Server) Shutdown(ctx context.Context) error {
	err := s.http.Shutdown(ctx)
	if s.path != "" {
		os.Remove(s.path)
	}
	return err
}

func peerOf(c net.Conn) peer {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return peer{}
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return peer{}
	}
	var cred *syscall.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil || cerr != nil {
		return peer{}
	}
	return peer{uid: cred.Uid, gid: cred.Gid, pid: cred.Pid, ok: true}
}

// guard refuses requests that carry browser headers: a page must never be able to
// drive the daemon through a forwarded socket.
func (s *Server) guard(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Origin") != "" || r.Header.Get("Referer") != "" {
			writeError(w, http.StatusForbidden, CodeForbidden, "requests from browsers are refused")
			return
		}
		defer func() {
			if v := recover(); v != nil {
				s.log.Error("control handler panicked", "path", r.URL.Path, "panic", v)
				writeError(w, http.StatusInternalServerError, CodeInternal, "internal error")
			}
		}()
		h.ServeHTTP(w, r)
	})
}

// method checks the HTTP method, then waits for the change stream to catch up,
// so every answer reflects the file operations that came before the request.
func (s *Server) method(m string, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method != m {
			w.Header().Set("Allow", m)
			writeError(w, http.StatusMethodNotAllowed, CodeMethod, fmt.Sprintf("%s needs %s", r.URL.Path, m))
			return
		}
		if s.opt.Sync != nil {
			if err := s.opt.Sync(r.Context()); err != nil {
				writeError(w, http.StatusServiceUnavailable, CodeUnavailable, "waiting for the index: "+err.Error())
				return
			}
		}
		h(w, r)
	}
}

// decode reads a JSON body strictly: at most MaxBody bytes, no unknown fields,
// nothing after the object.
func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	if ct := r.Header.Get("Content-Type"); ct != "" && !strings.HasPrefix(ct, "application/json") {
		writeError(w, http.StatusUnsupportedMediaType, CodeBadRequest, "Content-Type must be application/json")
		return false
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxBody+1))
	if err != nil {
		writeError(w, http.StatusBadRequest, CodeBadRequest, "reading the body: "+err.Error())
		return false
	}
	if len(body) > MaxBody {
		writeError(w, http.StatusRequestEntityTooLarge, CodeTooLarge, fmt.Sprintf("body is over %d bytes", MaxBody))
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		writeError(w, http.StatusBadRequest, CodeBadRequest, "malformed JSON: "+err.Error())
		return false
	}
	if dec.More() {
		writeError(w, http.StatusBadRequest, CodeBadRequest, "malformed JSON: data after the object")
		return false
	}
	var extra json.RawMessage
	if err := dec.Decode(&extra); err != io.EOF {
		writeError(w, http.StatusBadRequest, CodeBadRequest, "malformed JSON: data after the object")
		return false
	}
	return true
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, ErrorBody{Error: ErrorDetail{Code: code, Message: msg}})
}

// writeErr maps a core or index error to a status: the daemon's own failures are
// 5xx so an outage never looks like "nothing matched".
func writeErr(w http.ResponseWriter, err error) {
	var ie *index.Error
	if errors.As(err, &ie) {
		switch ie.Kind {
		case index.KindNotFound:
			writeError(w, http.StatusNotFound, CodeNotFound, err.Error())
		case index.KindInvalid:
			writeError(w, http.StatusBadRequest, CodeInvalid, err.Error())
		case index.KindClosed:
			writeError(w, http.StatusServiceUnavailable, CodeUnavailable, err.Error())
		default:
			writeError(w, http.StatusInternalServerError, CodeInternal, err.Error())
		}
		return
	}
	var se *server.Error
	if errors.As(err, &se) {
		switch se.Kind {
		case server.KindNotFound:
			writeError(w, http.StatusNotFound, CodeNotFound, err.Error())
		case server.KindPermission:
			writeError(w, http.StatusBadRequest, CodeInvalidPath, err.Error())
		case server.KindInvalid, server.KindNameTooLong, server.KindNotDir, server.KindIsDir:
			writeError(w, http.StatusBadRequest, CodeInvalidPath, err.Error())
		default:
			writeError(w, http.StatusInternalServerError, CodeInternal, err.Error())
		}
		return
	}
	writeError(w, http.StatusInternalServerError, CodeInternal, err.Error())
}
