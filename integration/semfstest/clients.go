package semfstest

import (
	"encoding/binary"
	"net"
	"strconv"
	"testing"

	"github.com/hugelgupf/p9/p9"
	nfsc "github.com/willscott/go-nfs-client/nfs"
	"github.com/willscott/go-nfs-client/nfs/rpc"
)

// MountNFS mounts export (e.g. "/@notes" or "/") on the daemon's NFS port with
// the Go NFSv3 client, sending AUTH_UNIX credentials for uid.
func (d *Daemon) MountNFS(t testing.TB, export string, uid uint32) *nfsc.Target {
	t.Helper()
	host, portStr, err := net.SplitHostPort(d.NFS)
	if err != nil {
		t.Fatal(err)
	}
	port, _ := strconv.Atoi(portStr)
	cl, err := nfsc.DialServiceAtPort(host, port)
	if err != nil {
		t.Fatalf("dial NFS %s: %v", d.NFS, err)
	}
	m := &nfsc.Mount{Client: cl}
	v, err := m.Mount(export, rpc.NewAuthUnix("semfs-test", uid, uid).Auth())
	if err != nil {
		cl.Close()
		t.Fatalf("mount %s: %v", export, err)
	}
	t.Cleanup(func() { m.Unmount(); cl.Close() })
	return v
}

// Attach9P attaches aname on the daemon's 9P port as the Linux kernel does: a
// plain "9P2000.L" Tversion and n_uname = uid on Tattach (p9's client sends a
// Google-extended version and no uid, so a shim on the connection rewrites both).
func (d *Daemon) Attach9P(t testing.TB, aname string, uid uint32) p9.File {
	t.Helper()
	conn, err := net.Dial("tcp", d.NineP)
	if err != nil {
		t.Fatalf("dial 9P %s: %v", d.NineP, err)
	}
	cl, err := p9.NewClient(&kernelLikeConn{Conn: conn, uid: uid}, p9.WithMessageSize(1<<20))
	if err != nil {
		conn.Close()
		t.Fatalf("9P version: %v", err)
	}
	root, err := cl.Attach(aname)
	if err != nil {
		cl.Close()
		t.Fatalf("9P attach %q: %v", aname, err)
	}
	t.Cleanup(func() { root.Close(); cl.Close() })
	return root
}

type kernelLikeConn struct {
	net.Conn
	uid uint32
	buf []byte
}

const (
	msgTversion = 100
	msgTattach  = 104
)

// Write reassembles whole 9P messages, rewrites Tversion and Tattach, and sends
// them on.
func (c *kernelLikeConn) Write(b []byte) (int, error) {
	c.buf = append(c.buf, b...)
	var out []byte
	for len(c.buf) >= 7 {
		size := int(binary.LittleEndian.Uint32(c.buf))
		if size < 7 || len(c.buf) < size {
			break
		}
		msg := append([]byte(nil), c.buf[:size]...)
		c.buf = c.buf[size:]
		switch msg[4] {
		case msgTversion: // size[4] type[1] tag[2] msize[4] version[s]
			m := append([]byte{0, 0, 0, 0}, msg[4:11]...)
			m = binary.LittleEndian.AppendUint16(m, uint16(len("9P2000.L")))
			m = append(m, "9P2000.L"...)
			binary.LittleEndian.PutUint32(m, uint32(len(m)))
			msg = m
		case msgTattach: // ... n_uname[4] last
			binary.LittleEndian.PutUint32(msg[len(msg)-4:], c.uid)
		}
		out = append(out, msg...)
	}
	if len(out) > 0 {
		if _, err := c.Conn.Write(out); err != nil {
			return 0, err
		}
	}
	return len(b), nil
}
