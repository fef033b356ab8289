package ninep

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/hugelgupf/p9/p9"
	"github.com/semfs/semfs/server"
)

// Options configure a Server.
type Options struct {
	Logger   *slog.Logger // nil: slog.Default()
	MaxMsize uint32       // largest msize granted to a client; 0: 1 MiB (minimum 8 KiB)
	Observe  ObserveFunc  // nil: no metrics (observe.go)
	Track    TrackFunc    // nil: connections are not counted per app

	// Limits bound each connection (idle and body timeouts, a cap on how many);
	// zero fields take server's defaults.
	Limits server.Limits
}

// Server serves one server.FS over 9P2000.L to any number of listeners.
// All methods are safe for concurrent use.
type Server struct {
	fs    *server.FS
	log   *slog.Logger
	msize uint32
	nonce string // per-server secret in attach tokens (attach.go)
	locks *lockTable
	lim   server.Limits // with defaults; a negative field is no limit (limits.go)

	mu     sync.Mutex
	closed bool
	lns    map[net.Listener]struct{}
	conns  map[net.Conn]struct{}
	nconn  uint64 // connections accepted so far; each one's id owns its POSIX locks (0: direct use)
	wg     sync.WaitGroup

	logLimit rateLimit // malformed messages and timed-out connections (bounds.go)
	capLog   rateLimit // connections refused over Limits.MaxConns
	tableLog rateLimit // transitions the fid table refused (fast.go, tableErr)
	reuseLog rateLimit // requests dropped for reusing a tag in flight (tags.go)

	makeWait atomic.Int64 // makeWait in nanoseconds; tests shorten it while connections are served
	ownWait  atomic.Int64 // ownWait in nanoseconds, likewise

	noFast   bool          // tests only (export_test.go): every request goes through p9, the reference the shim's replies are held to
	tagsLost atomic.Bool   // tests only (export_test.go): connections start with their tags lost (tags.go)
	answered atomic.Uint64 // requests the fast path answered
	flushes  atomic.Uint64 // Tflushes handed to p9 (a test waits for its own to arrive)
	gaveUp   atomic.Uint64 // connections whose fid table the shim gave up (fast.go, await)
	observe  ObserveFunc
	track    TrackFunc
}

// NewServer returns a Server for fsys.
func NewServer(fsys *server.FS, opts Options) *Server {
	s := &Server{fs: fsys, log: opts.Logger, msize: opts.MaxMsize, lim: opts.Limits.WithDefaults(),
		observe: opts.Observe, track: opts.Track,
		lns: map[net.Listener]struct{}{}, conns: map[net.Conn]struct{}{}, locks: newLockTable()}
	s.makeWait.Store(int64(makeWait))
	s.ownWait.Store(int64(ownWait))
	if s.log == nil {
		s.log = slog.Default()
	}
	switch {
	case s.msize == 0:
		s.msize = 1 << 20
	case s.msize < 8<<10:
		s.msize = 8 << 10
	}
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("ninep: no randomness for attach tokens: %v", err))
	}
	s.nonce = hex.EncodeToString(b[:])
	return s
}

// Attacher returns the p9.Attacher whose Attach gives the anonymous root of the
// whole tree, for running p9's own conformance suite (fsimpl/test) against the
// File implementation directly. Serve does not need it.
func (s *Server) Attacher() p9.Attacher { return attacher{srv: s} }

func (s *Server) newRoot(c *conn) *file {
	ctx := server.WithIdentity(context.Background(), server.Identity{Proto: "9p"})
	if c == nil {
		// Direct use (p9's conformance suite, never a client): the daemon's
		// own calls, which a root daemon does not check (see server/cred.go).
		ctx = context.Background()
	}
	return &file{srv: s, conn: c, ctx: ctx, attachNonce: s.nonce}
}

// Serve accepts 9P2000.L connections on ln (TCP, Unix socket, or anything that
// yields a byte stream) until ln is closed, by Close or by the caller, and then
// returns nil; any other accept failure is returned. Each connection gets its
// own p9 server, so identity decided at attach stays with that connection's fids.
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		ln.Close()
		return nil
	}
	s.lns[ln] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.lns, ln)
		s.mu.Unlock()
	}()
	// Connections being served from ln; guarded by s.mu.
	active := 0
	return server.Accept(ln, s.log, func(nc net.Conn) {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			nc.Close()
			return
		}
		if max := s.lim.MaxConns; max > 0 && active >= max {
			// Accepted and closed at once, so the listen queue never backs
			// up behind a peer holding every slot.
			s.mu.Unlock()
			nc.Close()
			if ok, held := s.capLog.allow(); ok {
				s.log.Warn("ninep: connection refused: too many connections on this listener",
					"listener", ln.Addr().String(), "remote", nc.RemoteAddr().String(), "max_conns", max, "similar_lines_held_back", held)
			}
			return
		}
		active++
		s.conns[nc] = struct{}{}
		s.nconn++
		id := s.nconn
		s.wg.Add(1)
		s.mu.Unlock()
		go s.handle(nc, id, func() {
			s.mu.Lock()
			active--
			s.mu.Unlock()
		})
	})
}

// handle serves one connection until the client goes away or Close; release
// then frees its place on its listener.
func (s *Server) handle(nc net.Conn, id uint64, release func()) {
	defer s.wg.Done()
	defer release()
	defer s.locks.releaseConn(id)
	defer func() {
		s.mu.Lock()
		delete(s.conns, nc)
		s.mu.Unlock()
		nc.Close()
	}()
	defer func() {
		if r := recover(); r != nil {
			s.log.Error("ninep: panic serving a connection; it is closed", "panic", r, "stack", string(debug.Stack()))
		}
	}()
	if tc, ok := nc.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
	}
	s.log.Debug("ninep: connection", "remote", nc.RemoteAddr().String())
	c := newConn(s, id, nc)
	defer c.obs.close()
	defer c.end()
	p9.NewServer(attacher{srv: s, conn: c}, p9.WithServerLogger(p9Logger{s.log})).Handle(c, c)
}

// Close stops every Serve, closes every connection (their fids are clunked, so
// written files send their updates) and waits for them to finish.
func (s *Server) Close() error {
	s.mu.Lock()
	s.closed = true
	for ln := range s.lns {
		ln.Close()
	}
	for nc := range s.conns {
		nc.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	return nil
}

// p9Logger routes p9's logging to slog. p9 logs every message it sends and
// receives through it, so those are formatted only when debug logging is on;
// its recovered handler panics are errors.
type p9Logger struct{ log *slog.Logger }

func (l p9Logger) Printf(format string, v ...any) {
	if strings.HasPrefix(format, "panic") {
		l.log.Error("ninep: p9 recovered a panic; answered EFAULT", "detail", fmt.Sprintf(format, v...))
		return
	}
	if l.log.Enabled(context.Background(), slog.LevelDebug-4) {
		l.log.Log(context.Background(), slog.LevelDebug-4, "p9: "+fmt.Sprintf(format, v...))
	}
}

func (l p9Logger) Print(v ...any) { l.Printf("%s", fmt.Sprint(v...)) }
