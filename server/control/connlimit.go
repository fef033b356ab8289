package control

import (
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// capListener serves at most max connections at once. One over the cap is
// accepted, answered 503 and closed at once, so that the listen backlog never
// fills with connections nobody serves and the client learns why; refusals are
// logged at most once per refuseLogEvery, with their count.
type capListener struct {
	net.Listener
	max    int64
	log    *slog.Logger
	active atomic.Int64

	mu      sync.Mutex
	logged  time.Time // guarded by mu: when refusals were last logged
	refused int       // guarded by mu: refusals since then
}

const refuseLogEvery = 10 * time.Second

func newCapListener(ln net.Listener, max int, log *slog.Logger) *capListener {
	return &capListener{Listener: ln, max: int64(max), log: log}
}

func (l *capListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.active.Add(1) <= l.max {
			return &capConn{Conn: c, l: l}, nil
		}
		l.active.Add(-1)
		l.refuse(c)
	}
}

// overCap is the whole answer to a connection over the cap: written before the
// request is read, which HTTP/1.1 clients accept (the server may answer early).
var overCap = func() []byte {
	body := `{"error":{"code":"` + CodeUnavailable + `","message":"too many connections to the semfs control socket at once (--max-conns); retry later"}}` + "\n"
	return []byte(fmt.Sprintf("HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nConnection: close\r\nRetry-After: 1\r\nContent-Length: %d\r\n\r\n%s", len(body), body))
}()

// refuse answers c 503 and closes it. The write goes to an empty socket buffer,
// so it does not wait; the deadline is only a bound for a peer that is odd.
func (l *capListener) refuse(c net.Conn) {
	c.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
	c.Write(overCap)
	c.Close()
	l.mu.Lock()
	l.refused++
	now := time.Now()
	if now.Sub(l.logged) < refuseLogEvery {
		l.mu.Unlock()
		return
	}
	n := l.refused
	l.refused, l.logged = 0, now
	l.mu.Unlock()
	l.log.Warn("control socket: refused connections over the cap (--max-conns)", "refused", n, "max", l.max)
}

// capConn gives its slot back when closed (once, however often Close is called).
type capConn struct {
	net.Conn
	l      *capListener
	closed atomic.Bool
}

func (c *capConn) Close() error {
	if c.closed.CompareAndSwap(false, true) {
		c.l.active.Add(-1)
	}
	return c.Conn.Close()
}
