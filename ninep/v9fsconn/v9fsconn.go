// Package v9fsconn makes github.com/hugelgupf/p9's client speak 9P2000.L the way
// Linux's v9fs does, for tests and load drivers: the library's client asks for a
// Google-extended version and sends no uid on Tattach, which neither a kernel
// client nor diod does. Wrap rewrites both on the connection.
package v9fsconn

import (
	"encoding/binary"
	"errors"
	"net"
	"sync/atomic"
)

const (
	msgTversion = 100
	msgTattach  = 104
)

// Wrap returns c with every outgoing Tversion asking for plain "9P2000.L" and
// every Tattach carrying uid as its n_uname.
func Wrap(c net.Conn, uid uint32) net.Conn { return &conn{Conn: c, uid: uid} }

// WrapAs is Wrap with every Tattach carrying the uid *uid holds when it is
// sent: one connection then attaches as several uids, as v9fs does (root's
// attach, then one per caller).
func WrapAs(c net.Conn, uid *atomic.Uint32) net.Conn { return &conn{Conn: c, uidp: uid} }

type conn struct {
	net.Conn
	uid  uint32
	uidp *atomic.Uint32 // WrapAs: read at each Tattach instead of uid

	// The message being written: pend holds what is not sent yet (its header
	// and small fields, or all of it when it is to be rewritten), left is how
	// many of its bytes have not arrived, whole marks a Tversion or Tattach.
	pend  []byte
	left  int
	whole bool
	err   error // a failed write leaves a message half sent: every later one fails too
}

// bigChunk is the size from which a piece of a message (a Twrite payload) is
// sent as it is, behind what is pending, in one writev, instead of copied.
const bigChunk = 16 << 10

// Write follows the client's messages as they are written (p9's client writes
// header, fields and payload separately), rewrites Tversion and Tattach, and
// sends each message in one system call without copying large payloads.
func (c *conn) Write(b []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	total := len(b)
	for len(b) > 0 {
		if c.left == 0 {
			k := min(7-len(c.pend), len(b))
			c.pend = append(c.pend, b[:k]...)
			b = b[k:]
			if len(c.pend) < 7 {
				break
			}
			size := int(binary.LittleEndian.Uint32(c.pend))
			if size < 7 {
				c.err = errors.New("v9fsconn: malformed outgoing 9P message")
				return 0, c.err
			}
			c.left = size - 7
			c.whole = c.pend[4] == msgTversion || c.pend[4] == msgTattach
		} else {
			k := min(c.left, len(b))
			chunk := b[:k]
			b = b[k:]
			c.left -= k
			if c.whole || k < bigChunk {
				c.pend = append(c.pend, chunk...)
			} else {
				bufs := net.Buffers{c.pend, chunk}
				if _, err := bufs.WriteTo(c.Conn); err != nil {
					c.err = err
					return 0, err
				}
				c.pend = c.pend[:0]
			}
		}
		if c.left == 0 {
			msg := c.pend
			if c.whole {
				msg = c.rewrite(msg)
			}
			if _, err := c.Conn.Write(msg); err != nil {
				c.err = err
				return 0, err
			}
			c.pend = c.pend[:0]
		}
	}
	return total, nil
}

// rewrite returns a whole Tversion asking for plain 9P2000.L, or a whole Tattach
// carrying c.uid.
func (c *conn) rewrite(m []byte) []byte {
	if m[4] == msgTversion { // size[4] type[1] tag[2] msize[4] version[s]
		v := append([]byte{0, 0, 0, 0}, m[4:11]...)
		v = binary.LittleEndian.AppendUint16(v, uint16(len("9P2000.L")))
		v = append(v, "9P2000.L"...)
		binary.LittleEndian.PutUint32(v, uint32(len(v)))
		return v
	}
	uid := c.uid
	if c.uidp != nil {
		uid = c.uidp.Load()
	}
	binary.LittleEndian.PutUint32(m[len(m)-4:], uid) // Tattach: n_uname[4] is the last field
	return m
}
