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
	"path"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/server"
	"github.com/semfs/semfs/server/feed"
	"github.com/semfs/semfs/server/policy"
)

// Options wire the control API to the daemon's parts.
type Options struct {
	FS       *server.FS
	Index    *index.Index
	Registry *server.Registry
	Logger   *slog.Logger
	Policy   *policy.Live // per-app views and rights (policy.go); nil: none

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
	// Grep answers POST /v1/grep for the caller of ctx (grep.go); nil: the
	// route answers 404.
	Grep func(ctx context.Context, req GrepRequest) (GrepResponse, error)
	// Contents gives the best rank's content evidence for the caller of ctx
	// (passages only from files it may read); nil: queries rank by tags and
	// names only.
	Contents func(ctx context.Context) index.ContentSource
	// Changes, when set, is served at GET /v1/changes (changes.go).
	Changes *feed.Log
	// ChangesView decides what the caller in ctx (its Identity: the socket
	// peer) sees of the feed; nil: feed.SearchView (root mode's rule). A
	// policy of per-app rights plugs in here.
	ChangesView func(ctx context.Context) feed.View
}

// Server serves the control API.
type Server struct {
	opt    Options
	lim    server.Limits // with defaults
	log    *slog.Logger
	http   *http.Server
	path   string
	ln     net.Listener
	bodies atomic.Int64 // bytes of request bodies held in memory right now

	stopping context.Context // cancelled as Shutdown starts: long polls end
	stop     context.CancelFunc
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
	s := &Server{opt: opt, lim: opt.Limits.WithDefaults(), log: opt.Logger}
	s.stopping, s.stop = context.WithCancel(context.Background())
	if s.log == nil {
		s.log = slog.Default()
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/register", s.method(http.MethodPost, s.serveRegister))
	mux.HandleFunc("/v1/tag", s.method(http.MethodPost, s.serveTag))
	mux.HandleFunc("/v1/tags", s.method(http.MethodPost, s.serveTags))
	mux.HandleFunc("/v1/query", s.method(http.MethodPost, s.serveQuery))
	mux.HandleFunc("/v1/grep", s.method(http.MethodPost, s.serveGrep))
	mux.HandleFunc("/v1/files/", s.method(http.MethodGet, s.serveFile))
	mux.HandleFunc("/v1/files", s.method(http.MethodGet, s.serveFile)) // else the mux would redirect
	mux.HandleFunc("/v1/health", s.method(http.MethodGet, s.serveHealth))
	mux.HandleFunc("/v1/snapshot", s.method(http.MethodPost, s.serveSnapshot))
	if opt.Changes != nil {
		mux.HandleFunc("/v1/changes", s.method(http.MethodGet, s.serveChanges))
	}
	if opt.Metrics != nil {
		mux.HandleFunc("/v1/metrics", s.method(http.MethodGet, opt.Metrics.ServeHTTP))
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, CodeNotFound, fmt.Sprintf("no route %s %s", r.Method, r.URL.Path))
	})
	// A local process must not hold a connection (a descriptor and a
	// goroutine) by sending slowly or not at all. net/http starts the header
	// and whole-request clocks when a request's first bytes arrive (for the
	// first request, at accept), so BodyTimeout bounds the whole request from
	// its first byte; the deadline is cleared once the body is in, so a slow
	// answer (a snapshot) is not cut. A keep-alive connection with no request
	// in progress is closed after IdleTimeout. A negative limit is "none",
	// which net/http reads the same way (only positive durations set a deadline).
	s.http = &http.Server{
		Handler:           s.observe(s.guard(mux)),
		ReadHeaderTimeout: s.lim.BodyTimeout,
		ReadTimeout:       s.lim.BodyTimeout,
		IdleTimeout:       s.lim.IdleTimeout,
		MaxHeaderBytes:    64 << 10,
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
	if s.lim.MaxConns > 0 {
		ln = newCapListener(ln, s.lim.MaxConns, s.log)
	}
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
	s.stop()
	err := s.http.Shutdown(ctx)
	if s.path != "" {
		os.Remove(s.path)
	}
	return err
}

func peerOf(c net.Conn) peer {
	if cc, ok := c.(*capConn); ok {
		c = cc.Conn
	}
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
// drive the daemon through a forwarded socket. It refuses paths the mux would
// answer with a redirect (a client must get a JSON error, not be sent elsewhere),
// and reads the whole body, bounded in size and time, before any handler runs.
func (s *Server) guard(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Origin") != "" || r.Header.Get("Referer") != "" {
			writeError(w, http.StatusForbidden, CodeForbidden, "requests from browsers are refused")
			return
		}
		if msg := uncleanPath(r.URL.Path); msg != "" {
			writeError(w, http.StatusBadRequest, CodeInvalidPath, msg)
			return
		}
		defer func() {
			if v := recover(); v != nil {
				s.log.Error("control handler panicked", "path", r.URL.Path, "panic", v)
				writeError(w, http.StatusInternalServerError, CodeInternal, "internal error")
			}
		}()
		body, release, ok := s.readBody(w, r)
		if !ok {
			return
		}
		defer release()
		r.Body = io.NopCloser(bytes.NewReader(body))
		h.ServeHTTP(w, r)
	})
}

// uncleanPath says why a request path is not in the clean form the routes are
// written in ("" if it is): "." or ".." components, doubled slashes. The mux
// would redirect such a request; naming a file that way is a client's mistake.
func uncleanPath(p string) string {
	if !strings.HasPrefix(p, "/") {
		return "the request path must start with /"
	}
	c := path.Clean(p)
	if strings.HasSuffix(p, "/") && c != "/" {
		c += "/"
	}
	if c != p {
		return fmt.Sprintf("the request path %q is not clean (\".\", \"..\" or an empty component); ask for %q", p, c)
	}
	return ""
}

// Request bodies are read whole before a handler runs: at most MaxBody bytes
// (MaxTagsBody for /v1/tags), and at most maxBodiesInFlight bytes across every
// request at once, so that many clients sending large bodies together cannot
// exhaust the daemon's memory.
const maxBodiesInFlight = 64 << 20

// readBody reads r's body whole, within BodyTimeout of the request's first byte
// (the deadline net/http set) and the size limits above. On failure it has
// answered (and the connection will close). release gives the bytes back to the
// in-flight budget.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) (body []byte, release func(), ok bool) {
	limit := int64(MaxBody)
	if r.URL.Path == "/v1/tags" {
		limit = MaxTagsBody
	}
	var held int64
	release = func() { s.bodies.Add(-held) }
	fail := func(status int, code, msg string) ([]byte, func(), bool) {
		release()
		w.Header().Set("Connection", "close")
		writeError(w, status, code, msg)
		return nil, func() {}, false
	}
	if r.ContentLength > limit {
		return fail(http.StatusRequestEntityTooLarge, CodeTooLarge, fmt.Sprintf("body is over %d bytes", limit))
	}
	// A body of known length (a query or a tag: a few hundred bytes) is read
	// into a buffer of its size (one byte more, to see EOF): 32 KiB zeroed for
	// each was a tenth of the bytes the daemon allocated under the mixed load.
	size := int64(32 << 10)
	if r.ContentLength >= 0 {
		size = min(size, r.ContentLength+1)
	}
	chunk := make([]byte, size)
	for {
		n, err := r.Body.Read(chunk)
		if n > 0 {
			if int64(len(body)+n) > limit {
				return fail(http.StatusRequestEntityTooLarge, CodeTooLarge, fmt.Sprintf("body is over %d bytes", limit))
			}
			if grow := int64(len(body)+n) - held; grow > 0 {
				if s.bodies.Add(grow) > maxBodiesInFlight {
					s.bodies.Add(-grow)
					w.Header().Set("Retry-After", "1")
					return fail(http.StatusServiceUnavailable, CodeUnavailable, "too many large requests at once; retry later")
				}
				held += grow
			}
			body = append(body, chunk[:n]...)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				s.log.Warn("control socket: a request did not arrive in time; closing its connection",
					"path", r.URL.Path, "bodyTimeout", s.lim.BodyTimeout)
				return fail(http.StatusRequestTimeout, CodeTimeout, fmt.Sprintf("the request did not arrive within %s of its first byte", s.lim.BodyTimeout))
			}
			return fail(http.StatusBadRequest, CodeBadRequest, "reading the body: "+err.Error())
		}
	}
	// The request is in. net/http clears the read deadline as it starts
	// watching for the client hanging up, so a slow answer (a snapshot) is not
	// cut by it (TestSlowAnswerIsNotCutByBodyTimeout).
	return body, release, true
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

// decode reads a JSON body strictly (guard has read it whole, within the size
// limit): valid UTF-8 only, no unknown fields, nothing after the object.
func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	if ct := r.Header.Get("Content-Type"); ct != "" && !strings.HasPrefix(ct, "application/json") {
		writeError(w, http.StatusUnsupportedMediaType, CodeBadRequest, "Content-Type must be application/json")
		return false
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeError(w, http.StatusBadRequest, CodeBadRequest, "reading the body: "+err.Error())
		return false
	}
	// encoding/json turns invalid UTF-8, and escaped lone surrogates, into
	// U+FFFD: a path would then name another file than the client's bytes did.
	if msg := checkUTF8(body); msg != "" {
		writeError(w, http.StatusBadRequest, CodeBadRequest, "malformed JSON: "+msg)
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
	// Compact: an answer with passages is tens of KB, and indenting it cost a
	// query a tenth of its CPU (a pretty copy is a pipe to jq away).
	json.NewEncoder(w).Encode(v)
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
		if errors.Is(err, server.ErrBackingGone) {
			writeError(w, http.StatusServiceUnavailable, CodeUnavailable, err.Error())
			return
		}
		switch se.Kind {
		case server.KindNotFound:
			writeError(w, http.StatusNotFound, CodeNotFound, err.Error())
		case server.KindPermission, server.KindNotPermitted:
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

// checkUTF8 says why a JSON text would not decode to exactly the strings its
// bytes spell ("" if it would): bytes that are not UTF-8, or a \u escape of
// half a surrogate pair.
func checkUTF8(b []byte) string {
	if !utf8.Valid(b) {
		return "the body is not valid UTF-8"
	}
	inString := false
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			inString = !inString
		case c == '\\' && inString && i+1 < len(b):
			if b[i+1] != 'u' {
				i++ // an escaped character: skip it (it may be a quote)
				continue
			}
			r, ok := hex4(b, i+2)
			switch {
			case !ok:
				return "" // the decoder reports a bad escape itself
			case utf16.IsSurrogate(r) && r < 0xdc00:
				r2, ok2 := rune(0), false
				if i+7 < len(b) && b[i+6] == '\\' && b[i+7] == 'u' {
					r2, ok2 = hex4(b, i+8)
				}
				if !ok2 || r2 < 0xdc00 || r2 > 0xdfff {
					return "a \\u escape holds half a surrogate pair (not a character)"
				}
				i += 11
			case utf16.IsSurrogate(r):
				return "a \\u escape holds half a surrogate pair (not a character)"
			default:
				i += 5
			}
		}
	}
	return ""
}

// hex4 reads four hex digits at b[i:].
func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case '0' <= c && c <= '9':
			r = r<<4 | rune(c-'0')
		case 'a' <= c && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case 'A' <= c && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}
