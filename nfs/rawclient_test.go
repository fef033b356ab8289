package nfs_test

import (
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"
)

// rawClient speaks ONC RPC over one TCP connection, so tests can send exactly the
// NFSv3 calls a kernel client sends (go-nfs-client lacks COMMIT, LINK, READDIR,
// CREATE modes and stable_how) and see exact status codes.
type rawClient struct {
	t        testing.TB
	c        net.Conn
	xid      uint32
	uid, gid uint32
	gids     []uint32 // AUTH_UNIX's gid list; nil: gid alone
	unix     bool
}

func dialRaw(t testing.TB, addr string) *rawClient {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &rawClient{t: t, c: c, xid: 1000}
}

// as makes later calls carry AUTH_UNIX uid/gid.
func (c *rawClient) as(uid, gid uint32) *rawClient { c.uid, c.gid, c.unix = uid, gid, true; return c }

type enc struct{ b []byte }

func (e *enc) u32(v uint32) *enc { e.b = binary.BigEndian.AppendUint32(e.b, v); return e }
func (e *enc) u64(v uint64) *enc { e.b = binary.BigEndian.AppendUint64(e.b, v); return e }
func (e *enc) opaque(v []byte) *enc {
	e.u32(uint32(len(v)))
	e.b = append(e.b, v...)
	for len(e.b)%4 != 0 {
		e.b = append(e.b, 0)
	}
	return e
}
func (e *enc) str(s string) *enc              { return e.opaque([]byte(s)) }
func (e *enc) dirop(fh []byte, n string) *enc { return e.opaque(fh).str(n) }

// sattr encodes sattr3 with only the given mode (or none: mode < 0).
func (e *enc) sattr(mode int) *enc {
	if mode >= 0 {
		e.u32(1).u32(uint32(mode))
	} else {
		e.u32(0)
	}
	return e.u32(0).u32(0).u32(0).u32(0).u32(0)
}

type dec struct {
	t   testing.TB
	b   []byte
	off int
}

func (d *dec) u32() uint32 {
	d.t.Helper()
	if d.off+4 > len(d.b) {
		d.t.Fatalf("reply too short at %d of %d", d.off, len(d.b))
	}
	v := binary.BigEndian.Uint32(d.b[d.off:])
	d.off += 4
	return v
}
func (d *dec) u64() uint64 { return uint64(d.u32())<<32 | uint64(d.u32()) }
func (d *dec) opaque() []byte {
	n := int(d.u32())
	v := d.b[d.off : d.off+n]
	d.off += (n + 3) &^ 3
	return v
}
func (d *dec) skip(n int) { d.off += n }
func (d *dec) rest() int  { return len(d.b) - d.off }

// fattr3 is the part of the attributes tests look at.
type fattr3 struct {
	typ, mode, nlink, uid, gid uint32
	size                       uint64
	fileid                     uint64
	atime, mtime, ctime        uint64 // seconds<<32 | nseconds
}

func (d *dec) fattr() fattr3 {
	var a fattr3
	a.typ, a.mode, a.nlink, a.uid, a.gid = d.u32(), d.u32(), d.u32(), d.u32(), d.u32()
	a.size = d.u64()
	d.u64()   // used
	d.skip(8) // rdev
	d.u64()   // fsid
	a.fileid = d.u64()
	a.atime, a.mtime, a.ctime = d.u64(), d.u64(), d.u64()
	return a
}

func (d *dec) postOp() (fattr3, bool) {
	if d.u32() == 1 {
		return d.fattr(), true
	}
	return fattr3{}, false
}

func (d *dec) wcc() {
	if d.u32() == 1 {
		d.skip(24)
	}
	d.postOp()
}

const (
	progNFS   = 100003
	progMount = 100005
)

// send writes one call record; it returns the xid.
func (c *rawClient) send(prog, vers, proc uint32, args []byte) uint32 {
	c.xid++
	e := &enc{}
	e.u32(c.xid).u32(0).u32(2).u32(prog).u32(vers).u32(proc)
	if c.unix {
		gids := c.gids
		if gids == nil {
			gids = []uint32{c.gid}
		}
		cred := (&enc{}).u32(1).str("semfs-test").u32(c.uid).u32(c.gid).u32(uint32(len(gids)))
		for _, g := range gids {
			cred.u32(g)
		}
		e.u32(1).opaque(cred.b)
	} else {
		e.u32(0).u32(0)
	}
	e.u32(0).u32(0)
	e.b = append(e.b, args...)
	rec := binary.BigEndian.AppendUint32(nil, uint32(len(e.b))|1<<31)
	if _, err := c.c.Write(append(rec, e.b...)); err != nil {
		c.t.Fatalf("send: %v", err)
	}
	return c.xid
}

// recv reads one reply and returns a decoder at the procedure's result.
func (c *rawClient) recv(xid uint32) *dec {
	c.t.Helper()
	c.c.SetReadDeadline(time.Now().Add(20 * time.Second))
	var mark [4]byte
	if _, err := io.ReadFull(c.c, mark[:]); err != nil {
		c.t.Fatalf("recv: %v", err)
	}
	n := binary.BigEndian.Uint32(mark[:]) &^ (1 << 31)
	b := make([]byte, n)
	if _, err := io.ReadFull(c.c, b); err != nil {
		c.t.Fatalf("recv: %v", err)
	}
	d := &dec{t: c.t, b: b}
	if got := d.u32(); got != xid {
		c.t.Fatalf("reply xid %d, want %d", got, xid)
	}
	if d.u32() != 1 || d.u32() != 0 {
		c.t.Fatalf("not an accepted reply")
	}
	d.u32()
	d.opaque()
	if st := d.u32(); st != 0 {
		c.t.Fatalf("accept_stat %d", st)
	}
	return d
}

func (c *rawClient) call(proc uint32, args *enc) (uint32, *dec) {
	c.t.Helper()
	d := c.recv(c.send(progNFS, 3, proc, args.b))
	return d.u32(), d
}

// mount returns the mount status and root handle of path.
func (c *rawClient) mount(path string) (uint32, []byte) {
	c.t.Helper()
	d := c.recv(c.send(progMount, 3, 1, (&enc{}).str(path).b))
	st := d.u32()
	if st != 0 {
		return st, nil
	}
	return st, d.opaque()
}

// NFSv3 procedures.
const (
	pNull = iota
	pGetattr
	pSetattr
	pLookup
	pAccess
	pReadlink
	pRead
	pWrite
	pCreate
	pMkdir
	pSymlink
	pMknod
	pRemove
	pRmdir
	pRename
	pLink
	pReaddir
	pReaddirplus
	pFsstat
	pFsinfo
	pPathconf
	pCommit
)

// nfsstat3 values the tests expect.
const (
	sOK          = 0
	sNoEnt       = 2
	sIO          = 5
	sAcces       = 13
	sExist       = 17
	sNotDir      = 20
	sIsDir       = 21
	sInval       = 22
	sNotEmpty    = 66
	sStale       = 70
	sNotSupp     = 10004
	sServerFault = 10006
)

// Helpers for the common calls; each fails the test on an unexpected status.

func (c *rawClient) lookup(dir []byte, name string) (uint32, []byte, fattr3) {
	st, d := c.call(pLookup, (&enc{}).dirop(dir, name))
	if st != sOK {
		return st, nil, fattr3{}
	}
	fh := d.opaque()
	a, _ := d.postOp()
	return st, fh, a
}

func (c *rawClient) getattr(fh []byte) (uint32, fattr3) {
	st, d := c.call(pGetattr, (&enc{}).opaque(fh))
	if st != sOK {
		return st, fattr3{}
	}
	return st, d.fattr()
}

// create returns the status and new handle. how: 0 unchecked, 1 guarded, 2 exclusive.
func (c *rawClient) create(dir []byte, name string, how uint32, verf uint64) (uint32, []byte) {
	e := (&enc{}).dirop(dir, name).u32(how)
	if how == 2 {
		e.u64(verf)
	} else {
		e.sattr(0o644)
	}
	st, d := c.call(pCreate, e)
	if st != sOK {
		return st, nil
	}
	if d.u32() != 1 {
		c.t.Fatalf("create %s: no handle", name)
	}
	return st, d.opaque()
}

func (c *rawClient) mkdir(dir []byte, name string) (uint32, []byte) {
	st, d := c.call(pMkdir, (&enc{}).dirop(dir, name).sattr(0o755))
	if st != sOK {
		return st, nil
	}
	d.u32()
	return st, d.opaque()
}

// write returns status, count and committed.
func (c *rawClient) write(fh []byte, off uint64, data []byte, stable uint32) (uint32, uint32, uint32, uint64) {
	st, d := c.call(pWrite, (&enc{}).opaque(fh).u64(off).u32(uint32(len(data))).u32(stable).opaque(data))
	if st != sOK {
		return st, 0, 0, 0
	}
	d.wcc()
	n, committed := d.u32(), d.u32()
	return st, n, committed, d.u64()
}

func (c *rawClient) read(fh []byte, off uint64, n uint32) (uint32, []byte, bool) {
	st, d := c.call(pRead, (&enc{}).opaque(fh).u64(off).u32(n))
	if st != sOK {
		return st, nil, false
	}
	d.postOp()
	d.u32()
	eof := d.u32() == 1
	return st, append([]byte(nil), d.opaque()...), eof
}

func (c *rawClient) commit(fh []byte) (uint32, uint64) {
	st, d := c.call(pCommit, (&enc{}).opaque(fh).u64(0).u32(0))
	if st != sOK {
		return st, 0
	}
	d.wcc()
	return st, d.u64()
}

// readdirplus lists dir completely, page by page, and returns the names in order
// and every entry's handle.
func (c *rawClient) readdirplus(dir []byte, maxcount uint32) ([]string, map[string][]byte) {
	c.t.Helper()
	var names []string
	fhs := map[string][]byte{}
	var cookie, verf uint64
	for page := 0; ; page++ {
		st, d := c.call(pReaddirplus, (&enc{}).opaque(dir).u64(cookie).u64(verf).u32(maxcount/2).u32(maxcount))
		if st != sOK {
			c.t.Fatalf("readdirplus page %d: status %d", page, st)
		}
		d.postOp()
		verf = d.u64()
		for d.u32() == 1 {
			d.u64()
			name := string(d.opaque())
			cookie = d.u64()
			d.postOp()
			if d.u32() == 1 {
				fhs[name] = append([]byte(nil), d.opaque()...)
			}
			names = append(names, name)
		}
		if d.u32() == 1 {
			return names, fhs
		}
	}
}

// readdir lists dir completely with READDIR.
func (c *rawClient) readdir(dir []byte, count uint32) []string {
	c.t.Helper()
	var names []string
	var cookie, verf uint64
	for page := 0; ; page++ {
		st, d := c.call(pReaddir, (&enc{}).opaque(dir).u64(cookie).u64(verf).u32(count))
		if st != sOK {
			c.t.Fatalf("readdir page %d: status %d", page, st)
		}
		d.postOp()
		verf = d.u64()
		for d.u32() == 1 {
			d.u64()
			names = append(names, string(d.opaque()))
			cookie = d.u64()
		}
		if d.u32() == 1 {
			return names
		}
	}
}
