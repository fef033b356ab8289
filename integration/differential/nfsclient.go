package differential

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// NFSClient speaks ONC RPC (AUTH_UNIX) over one TCP connection, one call at
// a time, and sends NFSv3 calls exactly as built here, so both servers get
// the same bytes and every status comes back unaltered. It is written for
// this package (go-nfs-client lacks LINK, READDIR with a chosen count,
// SETATTR of times and CREATE modes) and shares nothing with nfs/.
type NFSClient struct {
	mu       sync.Mutex
	c        net.Conn
	xid      uint32
	uid, gid uint32
}

// DialNFS connects to addr and sends AUTH_UNIX uid and gid on every call.
func DialNFS(addr string, uid, gid uint32) (*NFSClient, error) {
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return nil, err
	}
	return &NFSClient{c: c, xid: 0x5eed0000, uid: uid, gid: gid}, nil
}

func (c *NFSClient) Close() error { return c.c.Close() }

type xenc struct{ b []byte }

func (e *xenc) u32(v uint32) *xenc { e.b = binary.BigEndian.AppendUint32(e.b, v); return e }
func (e *xenc) u64(v uint64) *xenc { e.b = binary.BigEndian.AppendUint64(e.b, v); return e }
func (e *xenc) opaque(v []byte) *xenc {
	e.u32(uint32(len(v)))
	e.b = append(e.b, v...)
	for len(e.b)%4 != 0 {
		e.b = append(e.b, 0)
	}
	return e
}
func (e *xenc) str(s string) *xenc              { return e.opaque([]byte(s)) }
func (e *xenc) dirop(fh []byte, n string) *xenc { return e.opaque(fh).str(n) }

// sattr3 fields a step may set; nil or false leaves one unset.
type sattr struct {
	mode  *uint32
	size  *uint64
	times *[2]uint32 // atime = mtime = sec, nsec (SET_TO_CLIENT_TIME)
}

func (e *xenc) sattr(s sattr) *xenc {
	if s.mode != nil {
		e.u32(1).u32(*s.mode)
	} else {
		e.u32(0)
	}
	e.u32(0).u32(0) // uid, gid
	if s.size != nil {
		e.u32(1).u64(*s.size)
	} else {
		e.u32(0)
	}
	for range 2 {
		if s.times != nil {
			e.u32(2).u32(s.times[0]).u32(s.times[1])
		} else {
			e.u32(0)
		}
	}
	return e
}

// errShort is a reply that ends early: a transport failure, not a status.
var errShort = errors.New("nfs: reply too short")

type xdec struct {
	b   []byte
	off int
	err error
}

func (d *xdec) u32() uint32 {
	if d.err != nil || d.off+4 > len(d.b) {
		d.err = errShort
		return 0
	}
	v := binary.BigEndian.Uint32(d.b[d.off:])
	d.off += 4
	return v
}
func (d *xdec) u64() uint64 { return uint64(d.u32())<<32 | uint64(d.u32()) }
func (d *xdec) opaque() []byte {
	n := int(d.u32())
	if d.err != nil || n < 0 || d.off+n > len(d.b) {
		d.err = errShort
		return nil
	}
	v := d.b[d.off : d.off+n]
	d.off += (n + 3) &^ 3
	return v
}
func (d *xdec) skip(n int) {
	if d.off+n > len(d.b) {
		d.err = errShort
		return
	}
	d.off += n
}

// fattr3 is the part of NFSv3's attributes a step or a tree compares.
type fattr3 struct {
	typ, mode, nlink, uid, gid uint32
	size                       uint64
	atime, mtime               [2]uint32
}

func (d *xdec) fattr() fattr3 {
	var a fattr3
	a.typ, a.mode, a.nlink, a.uid, a.gid = d.u32(), d.u32(), d.u32(), d.u32(), d.u32()
	a.size = d.u64()
	d.skip(8 + 8 + 8 + 8) // used, rdev, fsid, fileid
	a.atime = [2]uint32{d.u32(), d.u32()}
	a.mtime = [2]uint32{d.u32(), d.u32()}
	d.skip(8) // ctime
	return a
}

func (d *xdec) postOp() (fattr3, bool) {
	if d.u32() == 1 {
		return d.fattr(), true
	}
	return fattr3{}, false
}

const (
	progNFS   = 100003
	progMount = 100005
)

// NFSv3 procedures (RFC 1813).
const (
	pGetattr  = 1
	pSetattr  = 2
	pLookup   = 3
	pReadlink = 5
	pRead     = 6
	pWrite    = 7
	pCreate   = 8
	pMkdir    = 9
	pSymlink  = 10
	pRemove   = 12
	pRmdir    = 13
	pRename   = 14
	pLink     = 15
	pReaddir  = 16
)

// call sends one call and returns a decoder at its result.
func (c *NFSClient) call(prog, vers, proc uint32, args []byte) (*xdec, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.xid++
	xid := c.xid
	e := &xenc{}
	e.u32(xid).u32(0).u32(2).u32(prog).u32(vers).u32(proc)
	cred := (&xenc{}).u32(1).str("differential").u32(c.uid).u32(c.gid).u32(1).u32(c.gid)
	e.u32(1).opaque(cred.b)
	e.u32(0).u32(0)
	e.b = append(e.b, args...)
	rec := binary.BigEndian.AppendUint32(nil, uint32(len(e.b))|1<<31)
	c.c.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := c.c.Write(append(rec, e.b...)); err != nil {
		return nil, fmt.Errorf("nfs send: %w", err)
	}
	// A reply may come in several fragments; the last has the top bit set.
	var body []byte
	for {
		var mark [4]byte
		if _, err := io.ReadFull(c.c, mark[:]); err != nil {
			return nil, fmt.Errorf("nfs recv: %w", err)
		}
		m := binary.BigEndian.Uint32(mark[:])
		frag := make([]byte, m&^(1<<31))
		if _, err := io.ReadFull(c.c, frag); err != nil {
			return nil, fmt.Errorf("nfs recv: %w", err)
		}
		body = append(body, frag...)
		if m&(1<<31) != 0 {
			break
		}
	}
	d := &xdec{b: body}
	if got := d.u32(); got != xid {
		return nil, fmt.Errorf("nfs reply xid %#x, want %#x", got, xid)
	}
	if mt, rs := d.u32(), d.u32(); mt != 1 || rs != 0 {
		return nil, fmt.Errorf("nfs reply not accepted (msg %d, reply_stat %d)", mt, rs)
	}
	d.u32()
	d.opaque() // verifier
	st := d.u32()
	if d.err != nil {
		return nil, d.err
	}
	if st != 0 {
		return nil, rpcErr(st)
	}
	return d, nil
}

// rpcErr is a call the server accepted but did not run (accept_stat:
// GARBAGE_ARGS, SYSTEM_ERR...): a kernel client reports EIO. It is the
// step's answer, not a transport failure.
type rpcErr uint32

func (e rpcErr) Error() string {
	switch e {
	case 1:
		return "RPC_PROG_UNAVAIL"
	case 2:
		return "RPC_PROG_MISMATCH"
	case 3:
		return "RPC_PROC_UNAVAIL"
	case 4:
		return "RPC_GARBAGE_ARGS"
	case 5:
		return "RPC_SYSTEM_ERR"
	}
	return fmt.Sprintf("RPC_ACCEPT_STAT_%d", uint32(e))
}

// nfs3 calls a procedure and returns its nfsstat3 and the decoder after it.
func (c *NFSClient) nfs3(proc uint32, args *xenc) (uint32, *xdec, error) {
	d, err := c.call(progNFS, 3, proc, args.b)
	if err != nil {
		return 0, nil, err
	}
	st := d.u32()
	return st, d, d.err
}

// Mount asks MOUNT v3 for path's root handle.
func (c *NFSClient) Mount(path string) ([]byte, error) {
	d, err := c.call(progMount, 3, 1, (&xenc{}).str(path).b)
	if err != nil {
		return nil, err
	}
	if st := d.u32(); st != 0 {
		return nil, fmt.Errorf("mount %s: status %d", path, st)
	}
	fh := d.opaque()
	if d.err != nil {
		return nil, d.err
	}
	return append([]byte(nil), fh...), nil
}

// nfsStatus names an nfsstat3 as RFC 1813 does.
func nfsStatus(st uint32) string {
	names := map[uint32]string{
		0: "OK", 1: "NFS3ERR_PERM", 2: "NFS3ERR_NOENT", 5: "NFS3ERR_IO", 6: "NFS3ERR_NXIO",
		13: "NFS3ERR_ACCES", 17: "NFS3ERR_EXIST", 18: "NFS3ERR_XDEV", 19: "NFS3ERR_NODEV",
		20: "NFS3ERR_NOTDIR", 21: "NFS3ERR_ISDIR", 22: "NFS3ERR_INVAL", 27: "NFS3ERR_FBIG",
		28: "NFS3ERR_NOSPC", 30: "NFS3ERR_ROFS", 31: "NFS3ERR_MLINK", 63: "NFS3ERR_NAMETOOLONG",
		66: "NFS3ERR_NOTEMPTY", 69: "NFS3ERR_DQUOT", 70: "NFS3ERR_STALE", 71: "NFS3ERR_REMOTE",
		10001: "NFS3ERR_BADHANDLE", 10002: "NFS3ERR_NOT_SYNC", 10003: "NFS3ERR_BAD_COOKIE",
		10004: "NFS3ERR_NOTSUPP", 10005: "NFS3ERR_TOOSMALL", 10006: "NFS3ERR_SERVERFAULT",
		10007: "NFS3ERR_BADTYPE", 10008: "NFS3ERR_JUKEBOX",
	}
	if n, ok := names[st]; ok {
		return n
	}
	return fmt.Sprintf("NFS3ERR_%d", st)
}
