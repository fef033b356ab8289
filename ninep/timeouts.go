package ninep

import (
	"encoding/binary"
	"errors"
	"io"
	"os"
	"sync"
	"time"
)

// Per-connection timeouts (Options.Limits), applied by the shim's reader with
// read deadlines on the socket:
//
//   - BodyTimeout: once the first byte of a message has arrived, the whole
//     message must arrive within it (a peer that stalls or dribbles mid-message
//     is cut off), whoever reads the rest, the shim or p9.
//   - IdleTimeout: only before the first successful Tattach (a connection that
//     never mounts anything). A 9P mount cannot reconnect, so an attached
//     connection is never closed for being idle.
//
// A message already wholly in the read buffer needs no deadline, so a mount's
// one-request-at-a-time traffic sets none after the attach: the fast path's
// cost is a branch. A read that times out ends the connection like any read
// error (p9 stops, the connection is closed, its fids clunked).

// deadlines is a connection's read-deadline state. The reader goroutine arms it;
// the writer disarms the idle deadline when a Tattach succeeds, which may happen
// while the reader is waiting.
type deadlines struct {
	mu        sync.Mutex
	attached  bool      // a Tattach succeeded: no idle timeout from now on
	idleArmed bool      // the deadline set is the idle one
	set       time.Time // the read deadline on the socket (zero: none)
}

// setLocked puts dl on the socket unless it is there already (the common case
// of no deadline at all costs nothing). Precondition: c.dl.mu held.
func (c *conn) setDeadlineLocked(dl time.Time) {
	if dl.Equal(c.dl.set) {
		return
	}
	c.dl.set = dl
	c.nc.SetReadDeadline(dl)
}

// armIdle sets the deadline for waiting for a message's first byte.
func (c *conn) armIdle() {
	c.dl.mu.Lock()
	defer c.dl.mu.Unlock()
	var dl time.Time
	c.dl.idleArmed = false
	if t := c.srv.lim.IdleTimeout; t > 0 && !c.dl.attached {
		dl, c.dl.idleArmed = time.Now().Add(t), true
	}
	c.setDeadlineLocked(dl)
}

// armBody sets the deadline for the rest of a message whose first byte is here.
func (c *conn) armBody() {
	c.dl.mu.Lock()
	defer c.dl.mu.Unlock()
	c.dl.idleArmed = false
	var dl time.Time
	if t := c.srv.lim.BodyTimeout; t > 0 {
		dl = time.Now().Add(t)
	}
	c.setDeadlineLocked(dl)
}

// attachedNow records a successful Tattach (its Rattach is being sent): the idle
// deadline, if the reader is waiting under it, is lifted.
func (c *conn) attachedNow() {
	c.dl.mu.Lock()
	defer c.dl.mu.Unlock()
	if c.dl.attached {
		return
	}
	c.dl.attached = true
	if c.dl.idleArmed {
		c.dl.idleArmed = false
		c.setDeadlineLocked(time.Time{})
	}
}

// nextHeader waits for the next message's header under the deadlines above
// and returns it (a window into the read buffer).
func (c *conn) nextHeader() ([]byte, error) {
	if c.br.Buffered() == 0 {
		c.armIdle()
		if _, err := c.br.Peek(1); err != nil {
			return nil, c.readFailed(err, "idle")
		}
	}
	armed := false
	if c.br.Buffered() < headerLen {
		c.armBody()
		armed = true
	}
	hdr, err := c.br.Peek(headerLen)
	if err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, c.readFailed(err, "header")
	}
	if !armed && uint32(c.br.Buffered()) < binary.LittleEndian.Uint32(hdr) {
		c.armBody()
	}
	return hdr, nil
}

// readFailed logs a read that timed out (rate-limited) and returns err, which
// ends the connection.
func (c *conn) readFailed(err error, during string) error {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		why := "a message did not arrive whole within the body timeout"
		if during == "idle" {
			why = "idle before any attach for the idle timeout"
		}
		if ok, held := c.srv.logLimit.allow(); ok {
			c.srv.log.Warn("ninep: closing a connection", "remote", c.nc.RemoteAddr().String(),
				"why", why, "similar_lines_held_back", held)
		}
	}
	return err
}
