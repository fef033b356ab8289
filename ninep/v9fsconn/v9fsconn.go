// Package v9fsconn makes github.com/hugelgupf/p9's client speak 9P2000.L the way
// Linux's v9fs does, for tests and load drivers: the library's client asks for a
// Google-extended version and sends no uid on Tattach, which neither a kernel
// client nor diod does. Wrap rewrites both on the connection.
package v9fsconn

import (
	"encoding/binary"
	"errors"
	"net"
)

const (
	msgTversion = 100
	msgTattach  = 104
)

// Wrap returns c with every outgoing Tversion asking for plain "9P2000.L" and
// every Tattach carrying uid as its n_uname.
func Wrap(c net.Conn, uid uint32) net.Conn { return &conn{Conn: c, uid: uid} }

type conn struct {
	net.Conn
	uid uint32
	buf []byte
}

// Write reassembles the client's writes into whole messages, rewrites them and
// sends them on in one writev.
func (c *conn) Write(b []byte) (int, error) {
	c.buf = append(c.buf, b...)
	var out [][]byte
	for len(c.buf) >= 4 {
		size := int(binary.LittleEndian.Uint32(c.buf))
		if size < 7 {
			return 0, errors.New("v9fsconn: malformed outgoing 9P message")
		}
		if len(c.buf) < size {
			break
		}
		m := c.buf[:size]
		c.buf = c.buf[size:]
		switch m[4] {
		case msgTversion: // size[4] type[1] tag[2] msize[4] version[s]
			v := append([]byte{0, 0, 0, 0}, m[4:11]...)
			v = binary.LittleEndian.AppendUint16(v, uint16(len("9P2000.L")))
			v = append(v, "9P2000.L"...)
			binary.LittleEndian.PutUint32(v, uint32(len(v)))
			m = v
		case msgTattach: // n_uname[4] is the last field
			m = append([]byte(nil), m...)
			binary.LittleEndian.PutUint32(m[size-4:], c.uid)
		}
		out = append(out, m)
	}
	if len(out) > 0 {
		bufs := net.Buffers(out)
		if _, err := bufs.WriteTo(c.Conn); err != nil {
			return 0, err
		}
	}
	if len(c.buf) == 0 {
		c.buf = c.buf[:0:0] // do not keep a 1 MiB message alive
	}
	return len(b), nil
}
