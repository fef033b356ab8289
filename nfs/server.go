package nfs

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"github.com/semfs/semfs/server"
	gonfs "github.com/willscott/go-nfs"
)

// Options configure a Server.
type Options struct {
	StateDir string       // the persistent handle map and its key live here (created 0700 if missing)
	Logger   *slog.Logger // nil: slog.Default()

	// OpenFiles bounds the descriptors kept open for READ and WRITE (default 256).
	OpenFiles int

	// Limits bound each connection (idle and body timeouts, a cap on how many);
	// zero fields take server's defaults.
	Limits server.Limits

	Observe ObserveFunc // nil: no metrics (observe.go)
	Track   TrackFunc   // nil: connections are not counted per app
}

// Server serves one server.FS over NFSv3. MOUNT and NFS share the listener's port.
// Serve, Close and Apply are safe for concurrent use.
type Server struct {
	fsys *server.FS
	log  *slog.Logger
	hm   *handleMap
	fds  *fdCache
	dirs *dirCache
	verf [8]byte // write verifier: new on every start, so clients resend UNSTABLE data a restart may have lost
	lim  server.Limits

	mu          sync.Mutex
	lns         map[net.Listener]struct{}
	conns       map[*rpcConn]struct{}
	connsChange *sync.Cond // on mu: broadcast whenever conns changes (tests wait on it)
	closed      bool
	wg          sync.WaitGroup

	panicOp atomic.Value // string; tests make this billy operation panic
	hold    atomic.Value // func(op string); tests hold, or count, a call here
	observe ObserveFunc
	track   TrackFunc
	fsid    uint64 // the backing directory's file system, in every fattr3 (appendFattr)
}

// NewServer opens the handle map in opts.StateDir and prepares to serve fsys.
func NewServer(fsys *server.FS, opts Options) (*Server, error) {
	if opts.StateDir == "" {
		return nil, errors.New("nfs: Options.StateDir is required (handles must survive restarts)")
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	if opts.OpenFiles <= 0 {
		opts.OpenFiles = 256
	}
	hm, err := openHandleMap(opts.StateDir, log.With("proto", "nfs"))
	if err != nil {
		return nil, err
	}
	s := &Server{
		fsys: fsys, log: log.With("proto", "nfs"), hm: hm,
		fds:   newFDCache(fsys, opts.OpenFiles),
		dirs:  newDirCache(256, 1<<20),
		lns:   map[net.Listener]struct{}{},
		conns: map[*rpcConn]struct{}{},
		lim:   opts.Limits.WithDefaults(),
	}
	s.connsChange = sync.NewCond(&s.mu)
	if root, err := fsys.Lstat(context.Background(), ""); err == nil {
		s.fsid = root.Dev
	}
	s.observe, s.track = opts.Observe, opts.Track
	if _, err := rand.Read(s.verf[:]); err != nil {
		hm.close()
		return nil, err
	}
	return s, nil
}

// Serve accepts connections on ln until ln is closed (or Close is called) and
// serves each with its own go-nfs server and handler, so that the handler knows
// the connection its calls arrive on. It returns nil once closed by Close.
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		ln.Close()
		return net.ErrClosed
	}
	s.lns[ln] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.lns, ln)
		s.mu.Unlock()
	}()
	// MaxConns counts this listener's connections: each app has its own
	// listener, so one app opening connections without end cannot crowd out
	// another's.
	var active atomic.Int64
	var shed shedLog
	return server.Accept(ln, s.log, func(c net.Conn) {
		if max := s.lim.MaxConns; max > 0 && active.Load() >= int64(max) {
			c.Close()
			shed.refused(s.log, ln.Addr().String(), max)
			return
		}
		active.Add(1)
		s.serveConn(c, func() { active.Add(-1) })
	})
}

// serveConn serves c; gone runs once when it is closed.
func (s *Server) serveConn(c net.Conn, gone func()) {
	if tc, ok := c.(*net.TCPConn); ok {
		// A 1 MiB READ reply then leaves in one write instead of a park and
		// wake per socket-buffer's worth; the kernel caps it at wmem_max.
		_ = tc.SetWriteBuffer(4 << 20)
		_ = tc.SetReadBuffer(4 << 20)
	}
	done := make(chan struct{})
	var once sync.Once
	var rc *rpcConn
	rc = newRPCConn(c, func() {
		once.Do(func() {
			close(done)
			rc.obs.close()
			if gone != nil {
				gone()
			}
		})
		s.mu.Lock()
		delete(s.conns, rc)
		s.connsChange.Broadcast()
		s.mu.Unlock()
	})
	rc.idle, rc.body = s.lim.IdleTimeout, s.lim.BodyTimeout
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		rc.Close()
		return
	}
	s.conns[rc] = struct{}{}
	s.connsChange.Broadcast()
	s.wg.Add(1)
	s.mu.Unlock()
	h := &connHandler{s: s, c: rc, fss: map[uint32]*billyFS{}, attrs: map[string]server.Attr{}}
	rc.done = done
	rc.answer = h.serveNFS
	rc.afterReply = h.afterReply
	rc.handOff = h.handOff
	rc.log = s.log
	rc.obs = newObserver(s.observe, s.track)
	srv := &gonfs.Server{Handler: h, ID: s.verf, Context: context.Background()}
	go func() {
		defer s.wg.Done()
		defer func() {
			if v := recover(); v != nil {
				s.log.Error("panic serving connection; closing it", "remote", c.RemoteAddr().String(), "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
				rc.Close()
			}
		}()
		// go-nfs's Serve runs the connection on a goroutine of its own and
		// returns when the listener does, i.e. when the connection is closed.
		_ = srv.Serve(&oneConnListener{c: rc, done: done})
	}()
}

// Close stops every Serve, closes all connections, syncs and closes cached files
// and the handle map. It does not close the server.FS.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	lns := make([]net.Listener, 0, len(s.lns))
	for ln := range s.lns {
		lns = append(lns, ln)
	}
	conns := make([]*rpcConn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	for _, ln := range lns {
		ln.Close()
	}
	for _, c := range conns {
		c.Close()
	}
	s.wg.Wait()
	s.fds.closeAll()
	return s.hm.close()
}

// Apply keeps handles right when another front end (9P, the control socket)
// renames files: a Server is a server.Sink, and the daemon may tee the core's
// change stream into it. Renamed entries are re-recorded at their new place and
// cached descriptors of renamed or removed paths are closed. Handles stay right
// without it too (resolution falls back to the last known directory, then says
// STALE), but cross-directory renames by others are then STALE over NFS.
//
// The core calls Apply holding its namespace lock (server.Sink), so Apply
// must not wait for anything that takes that lock: evicted descriptors are
// closed later (fdCache.evictLater), never here.
func (s *Server) Apply(ctx context.Context, c server.Change) error {
	switch c.Op {
	case server.ChangeRename:
		s.fds.evictLater(c.Path)
		s.fds.evictLater(c.NewPath)
		s.recordPlace(c.NewPath)
	case server.ChangeRemove:
		s.fds.evictLater(c.Path)
	}
	return nil
}

// recordPlace notes where the file now at core path p lives.
func (s *Server) recordPlace(p string) {
	id, err := s.identify(p)
	if err != nil {
		return
	}
	n := node{gen: id.gen}
	if p != "" {
		dir, name := server.Split(p)
		pid, err := s.identify(dir)
		if err != nil {
			return
		}
		n.parent, n.name = pid.ino, name
	}
	if err := s.hm.put(id.ino, n); err != nil {
		s.log.Error("recording file handle", "path", p, "err", err)
	}
}

// oneConnListener hands go-nfs a single connection, then blocks until it closes.
type oneConnListener struct {
	c    *rpcConn
	done chan struct{}
	used bool
}

func (l *oneConnListener) Accept() (net.Conn, error) {
	if !l.used {
		l.used = true
		return l.c, nil
	}
	<-l.done
	return nil, net.ErrClosed
}

func (l *oneConnListener) Close() error   { return nil }
func (l *oneConnListener) Addr() net.Addr { return l.c.LocalAddr() }
