package nfs

import (
	"encoding/binary"
	"time"

	"github.com/semfs/semfs/server"
)

// Sending replies: go-nfs's writer (MOUNT's replies) and the adapter's own
// replies share the socket, one whole record at a time.

func (c *rpcConn) Write(p []byte) (n int, err error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	defer c.contain("write", &n, &err)
	total := len(p)
	n = total // what a panic reports (see contain)
	defer func() {
		if c.atBoundaryLocked() || c.werr != nil {
			c.wcond.Broadcast()
		}
	}()
	// Once a write failed the connection is closed; replies still coming are
	// dropped but reported written, so go-nfs's writer goroutine keeps taking
	// them until its serving goroutine sees the read side fail and ends both.
	// (An error would end the writer first, and a serving goroutine with a
	// reply to queue would then wait for it forever.)
	for len(p) > 0 && c.werr == nil {
		switch {
		case c.wleft > 0: // passing a reply through
			n := int(min(int64(len(p)), c.wleft))
			if c.writeAll(p[:n]) != nil {
				return total, nil
			}
			c.wleft -= int64(n)
			p = p[n:]
		default: // collecting a record mark and xid
			n := copy(c.wmark[c.wmarkN:], p)
			c.wmarkN += n
			p = p[n:]
			if c.wmarkN < 8 {
				continue
			}
			c.wmarkN = 0
			size := int64(binary.BigEndian.Uint32(c.wmark[:4]) &^ lastFragment)
			c.obs.reply(c.wmark[4:])
			if c.writeAll(c.wmark[:]) != nil {
				return total, nil
			}
			c.wleft = size - 4
		}
	}
	return total, nil
}

// atBoundaryLocked says no reply record is half written. Precondition: c.wmu held.
func (c *rpcConn) atBoundaryLocked() bool {
	return c.wleft == 0 && c.wmarkN == 0
}

// replyNow sends a whole reply record the adapter built itself, between
// go-nfs's records: if go-nfs's writer is halfway through one, it waits until
// that record is out. rec may be reused when it returns.
func (c *rpcConn) replyNow(rec []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if err := c.awaitBoundaryLocked(); err != nil {
		return err
	}
	c.obs.reply(rec[4:])
	return c.writeAll(rec)
}

// awaitBoundaryLocked waits until no reply record is half written (go-nfs's
// writer may be in the middle of one); the connection's write failure, if
// it failed. Precondition: c.wmu held.
func (c *rpcConn) awaitBoundaryLocked() error {
	for !c.atBoundaryLocked() && c.werr == nil {
		c.wcond.Wait()
	}
	return c.werr
}

// replyFile sends a READ reply whose data comes from the file f, from off
// for n bytes: hdr is the record up to and including the data's length word
// (its record mark counting the data and pad zero bytes after it), sent
// with the data by sendfile (server.File.SendCached), between go-nfs's
// records as replyNow's. ok=false, nothing sent, when the data is not all in
// the page cache (or cannot be sent so): the caller then reads it into a
// reply of its own. A send that fails or is cut short by a truncation closes
// the connection's write side as writeAll's failures do, or completes the
// record with zeros (short), which the caller logs.
func (c *rpcConn) replyFile(hdr []byte, f *server.File, off int64, n, pad int) (ok, short bool, err error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if err := c.awaitBoundaryLocked(); err != nil {
		return true, false, err // closed: as if sent (the reply is dropped)
	}
	c.armWriteLocked()
	var zeros [3]byte
	ok, short, err = f.SendCached(c.sio, hdr, off, n, zeros[:pad])
	if !ok {
		return false, false, nil
	}
	c.obs.reply(hdr[4:])
	if err != nil {
		c.failWriteLocked(err)
	}
	return true, short, err
}

// armWriteLocked bounds the next writes by the body timeout. Precondition:
// c.wmu held.
func (c *rpcConn) armWriteLocked() {
	if c.body > 0 {
		_ = c.Conn.SetWriteDeadline(time.Now().Add(c.body))
	}
}

// failWriteLocked records a failed write and closes the connection, which
// ends the read side too; later replies are dropped (see Write).
// Precondition: c.wmu held.
func (c *rpcConn) failWriteLocked(err error) {
	c.werr = err
	c.Conn.Close()
}

// writeAll writes b fully (go-nfs's writer panics on a short write without
// error) within the body timeout. A failed write closes the connection, which
// ends the read side too. Precondition: c.wmu held.
func (c *rpcConn) writeAll(b []byte) error {
	if c.werr != nil {
		return c.werr
	}
	c.armWriteLocked()
	for len(b) > 0 {
		n, err := c.sio.Write(b)
		if err != nil {
			c.failWriteLocked(err)
			return err
		}
		b = b[n:]
	}
	return nil
}
