package ninep

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"runtime/debug"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/hugelgupf/p9/linux"
	"github.com/hugelgupf/p9/p9"
	"github.com/semfs/semfs/server"
	"github.com/semfs/semfs/server/sockio"
)

// getlockFlag marks a Tlock that the shim made from a Tgetlock (see conn). The
// shim clears every flag bit but Block and Reclaim from clients' own Tlocks, so
// only it can set this one.
const getlockFlag = 1 << 30

// conn sits between a client's net.Conn and that connection's p9 server, as the
// reader p9 receives T-messages from and the writer it sends R-messages to. It
// follows the message framing in both directions and changes only what p9
// cannot be told otherwise:
//
//   - Tversion: msize is capped at Options.MaxMsize; a second Tversion closes
//     the connection (see control).
//   - Tattach: the aname is replaced by an attach token carrying the identity
//     decided from the real aname and n_uname (see attach.go).
//   - Txattrwalk, Txattrcreate: refused here with the errno Linux expects
//     (EOPNOTSUPP for every name but the core's user.semfs.* ones, ENODATA,
//     EPERM), and passed to p9 only when p9 will succeed (xattr.go). p9
//     answers every xattr failure with EINVAL, which Linux passes on (exec of a
//     file fails: the kernel reads security.capability and only treats
//     ENODATA/EOPNOTSUPP as "none").
//   - Tauth: answered with Rlerror ENOENT, diod's "no authentication needed",
//     which diod's own tools require before they attach.
//   - Tgetlock, which p9 v0.4.1 does not know (it would answer EIO): sent to p9
//     as a Tlock marked with getlockFlag whose client_id names the request's tag;
//     file.Lock tests the lock table and leaves the answer here, and the Rlock
//     p9 sends back is replaced by that Rgetlock. The fid is resolved by p9 as for
//     any request, which the shim alone could not do.
//   - Tgetattr, Tread, Twrite on a fid the shim knows, Tclunk of one that is
//     not open, Twalk, and Tlcreate or Tlopen on a fid the shim walked with the
//     Tclunk of the file it opened: answered here, inline, through the same
//     *file methods p9 would call (fast.go, shimfids.go; fidtable.go defines
//     the terms). To know fids, the shim keeps one fid-making request
//     (Tattach, Twalk, Tlcreate) in flight at a time, and one entry per fid in
//     its fid table. A request naming a fid whose Tlopen p9 is handling waits
//     for that open's reply (startOpening: p9 marks a fid opened outside its
//     lock).
//
// Everything else passes through unchanged and uncopied. Replies the shim makes
// itself are sent between two of p9's replies, never inside one; each of p9's
// replies leaves in a single system call (p9 hands its writer header, body and
// payload separately).
type conn struct {
	srv *Server
	id  uint64 // owner of this connection's POSIX locks
	nc  net.Conn
	sio *sockio.Conn // nc's reads and writes, raw on its descriptor (server/sockio)
	br  *bufio.Reader

	// Reader state; p9 receives from one goroutine at a time.
	left int    // bytes of a passed-through message not yet handed to p9
	out  []byte // a rewritten message not yet handed to p9
	root bool   // uid 0 has attached: the connection vouches for groups (vouch.go)

	gmu      sync.Mutex
	getlocks map[uint16]*getlock // by tag, from Tgetlock until its reply
	flushes  map[uint16]struct{} // tags of the Tflushes p9 is handling (bounds.go)

	wmu     sync.Mutex
	wleft   int      // bytes of the reply p9 is writing that have not arrived yet
	whead   []byte   // the header of that reply, until all 7 bytes are known
	wbuf    []byte   // the reply assembled so far
	wdrop   []byte   // non-nil: the reply is being dropped; send this instead
	pending [][]byte // replies of the shim waiting for p9's reply to end
	wnone   [0]byte  // wdrop for a reply dropped without replacement

	// The fast path (fast.go). msize is the one Tversion granted; rdata, wdata
	// and ohdr are the receiving goroutine's buffers for Tread data, Twrite data
	// and the replies it encodes.
	fmu      sync.Mutex
	fids     fidTable    // guarded by fmu (fidtable.go)
	inflight *fidRequest // the fid-making request in flight; guarded by fmu
	// opening is the client's Tlopen p9 is handling, until its reply; a
	// request naming its fid waits for it (awaitNamed). Guarded by fmu.
	opening      *fidRequest
	handover     *handover                // the shim's Tlcreate or Tlopen in flight; guarded by fmu
	bg           map[uint16]chan struct{} // background replies by tag; guarded by fmu
	msize        atomic.Uint32
	rdata, wdata []byte
	ohdr         []byte
	named        [2]uint32 // namedFids' result

	p9tags tagSet // the tags of the client's requests p9 has in flight (tags.go)

	// versioning is the Tversion handed to p9, until its reply starts; until
	// then the reader hands p9 nothing more. p9 builds the
	// connection's read buffers in its Tversion handler while its next
	// goroutine may already serve the next request: a Tread there found no
	// buffer and panicked (recovered as EFAULT; FuzzServerConn found it).
	versioning atomic.Pointer[versionWait]

	dl  deadlines // Options.Limits' timeouts (timeouts.go)
	obs *observer // metrics; nil without Options.Observe
}

// getlock is one Tgetlock in flight.
type getlock struct {
	client string // the request's client_id
	reply  []byte // the Rgetlock, once file.Lock has answered
}

// readBuffer is the connection's read buffer. Small on purpose: bufio reads a
// payload larger than its buffer straight into p9's message buffer, so a Twrite
// costs a copy of at most this much; a 64 KiB buffer copied whole Twrites (13 %
// of the server's CPU while writing). A burst of small requests still arrives in
// one read.
const readBuffer = 4 << 10

func newConn(srv *Server, id uint64, nc net.Conn) *conn {
	c := &conn{srv: srv, id: id, nc: nc, sio: sockio.New(nc), getlocks: map[uint16]*getlock{},
		ohdr: make([]byte, 0, 256), fids: fidTable{givenUp: srv.noFast}, obs: newObserver(srv.observe, srv.track)}
	c.br = bufio.NewReaderSize(c.sio, readBuffer)
	c.p9tags.lost.Store(srv.tagsLost.Load())
	return c
}

// Read implements io.Reader for p9's receive loop.
func (c *conn) Read(p []byte) (n int, err error) {
	defer func() {
		if r := recover(); r != nil {
			c.srv.log.Error("ninep: panic in connection reader; closing the connection", "panic", r, "stack", string(debug.Stack()))
			n, err = 0, fmt.Errorf("ninep: internal error")
		}
	}()
	for {
		if len(c.out) > 0 {
			n = copy(p, c.out)
			c.out = c.out[n:]
			return n, nil
		}
		if v := c.versioning.Load(); v != nil {
			<-v.replied
		}
		if c.left > 0 {
			if len(p) > c.left {
				p = p[:c.left]
			}
			n, err = c.br.Read(p)
			c.left -= n
			if err == io.EOF && c.left > 0 {
				err = io.ErrUnexpectedEOF
			}
			if err != nil {
				err = c.readFailed(err, "body")
			}
			return n, err
		}
		hdr, err := c.nextHeader()
		if err != nil {
			return 0, err
		}
		size := int(binary.LittleEndian.Uint32(hdr))
		typ, tag := hdr[4], binary.LittleEndian.Uint16(hdr[5:])
		if done, err := c.bound(typ, tag, size); err != nil {
			return 0, err
		} else if done {
			continue
		}
		c.obs.request(typ, tag)
		done, err := c.intercept(typ, tag, size)
		if err != nil {
			return 0, err
		}
		if done {
			continue
		}
		switch typ {
		case msgTversion, msgTauth, msgTattach, msgTxattrwalk, msgTxattrcreate, msgTlock, msgTgetlock:
			if size > maxControlMsg {
				return 0, c.malformed("control message too large", "type", typ, "size", size)
			}
			msg := make([]byte, size)
			if _, err := io.ReadFull(c.br, msg); err != nil {
				return 0, io.ErrUnexpectedEOF
			}
			if c.out, err = c.control(msg); err != nil {
				return 0, err
			}
			if c.out != nil {
				c.p9tags.add(tag)
			}
		default:
			c.p9tags.add(tag)
			c.left = size
		}
	}
}

// control handles one buffered message: it returns what p9 should receive in its
// place (nil when the shim answered it).
func (c *conn) control(msg []byte) ([]byte, error) {
	tag := binary.LittleEndian.Uint16(msg[5:])
	r := wireReader{b: msg[headerLen:]}
	switch msg[4] {
	case msgTversion:
		// size[4] Tversion tag[2] msize[4] version[s]
		ms, version := r.u32(), r.str()
		if r.bad {
			return nil, c.malformed("Tversion overruns its size")
		}
		if c.msize.Load() != 0 {
			// p9 rebuilds the connection's read-buffer pool on every Tversion it
			// accepts, unguarded, while requests already passed to it may be
			// taking buffers from that pool (a Tread saw an empty pool and
			// panicked). No client re-negotiates a live session (Linux and
			// diod's tools send one Tversion per connection), so it ends here.
			return nil, c.malformed("Tversion after the session was negotiated")
		}
		if ms > c.srv.msize {
			ms = c.srv.msize
			binary.LittleEndian.PutUint32(msg[headerLen:], ms)
		}
		if acceptedVersion(ms, version) {
			// p9 negotiates it (else it answers "unknown" and keeps what it had).
			c.msize.Store(ms)
		}
		c.versioning.Store(&versionWait{tag: tag, replied: make(chan struct{})})
		return msg, nil
	case msgTattach:
		// size[4] Tattach tag[2] fid[4] afid[4] uname[s] aname[s] n_uname[4]
		fid, afid := r.u32(), r.u32()
		uname, aname := r.str(), r.str()
		nuname := uint32(noUID)
		if len(r.b) >= 4 {
			nuname = r.u32()
		}
		if r.bad {
			return nil, c.malformed("Tattach overruns its size")
		}
		c.startMaking(tag, fid)
		w := newMessage(msgTattach, tag)
		w.u32(fid)
		w.u32(afid)
		w.str(uname)
		w.str(attachToken(c.srv.nonce, aname, nuname, c.vouches(aname, nuname)))
		w.u32(nuname)
		if app, ok := server.AppFromMount(aname); !ok {
			c.srv.log.Warn("ninep: attach refused: the aname must be \"/\", empty or \"@APP\"",
				"remote", c.nc.RemoteAddr().String(), "aname", aname)
		} else {
			c.obs.app(app)
			c.srv.log.Debug("ninep: Tattach", "remote", c.nc.RemoteAddr().String(), "aname", aname, "n_uname", nuname)
		}
		return w.finish(), nil
	case msgTlock:
		// size[4] Tlock tag[2] fid[4] type[1] flags[4] start[8] length[8] proc_id[4] client_id[s]
		if len(msg) < headerLen+9 {
			return nil, c.malformed("Tlock overruns its size")
		}
		flags := binary.LittleEndian.Uint32(msg[headerLen+5:])
		binary.LittleEndian.PutUint32(msg[headerLen+5:], flags&uint32(p9.LockFlagsBlock|p9.LockFlagsReclaim))
		return msg, nil
	case msgTgetlock:
		// size[4] Tgetlock tag[2] fid[4] type[1] start[8] length[8] proc_id[4] client_id[s]
		fid, typ, start, length, pid, client := r.u32(), r.u8(), r.u64(), r.u64(), r.u32(), r.str()
		if r.bad {
			return nil, c.malformed("Tgetlock overruns its size")
		}
		c.gmu.Lock()
		c.getlocks[tag] = &getlock{client: client}
		c.gmu.Unlock()
		w := newMessage(msgTlock, tag)
		w.u32(fid)
		w.u8(typ)
		w.u32(getlockFlag)
		w.u64(start)
		w.u64(length)
		w.u32(pid)
		w.str(strconv.Itoa(int(tag)))
		return w.finish(), nil
	case msgTauth:
		return nil, c.reply(rlerror(tag, uint32(linux.ENOENT)))
	default: // Txattrwalk, Txattrcreate
		return c.xattr(msg, tag) // xattr.go
	}
}

// getlockFor returns the Tgetlock in flight whose tag file.Lock received as its
// client_id.
func (c *conn) getlockFor(client string) (uint16, *getlock) {
	tag, err := strconv.ParseUint(client, 10, 16)
	if err != nil {
		return 0, nil
	}
	c.gmu.Lock()
	defer c.gmu.Unlock()
	return uint16(tag), c.getlocks[uint16(tag)]
}

// replyFor decides, at the start of one of p9's replies, whether it answers a
// Tgetlock: its Rlock is then replaced by the Rgetlock file.Lock left (an Rlerror
// passes through). It returns the replacement, or nil.
func (c *conn) replyFor(typ uint8, tag uint16) []byte {
	if typ != msgRlock && typ != msgRlerror {
		return nil
	}
	c.gmu.Lock()
	defer c.gmu.Unlock()
	g, ok := c.getlocks[tag]
	if !ok {
		return nil
	}
	delete(c.getlocks, tag)
	if typ != msgRlock {
		return nil
	}
	if g.reply == nil {
		return rlerror(tag, uint32(linux.EIO))
	}
	return g.reply
}

// reply sends a reply of the shim's own: now if p9 is between replies, else
// right after the one it is writing.
func (c *conn) reply(msg []byte) error { return c.replyv(msg, nil) }

// replyv sends a reply the shim made from hdr and payload (nil for none), which
// may be the receiving goroutine's reused buffers: at once in one system call if
// p9 is between replies, else copied to wait for the end of p9's.
func (c *conn) replyv(hdr, payload []byte) error {
	c.obs.reply(hdr)
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.wleft == 0 && len(c.whead) == 0 {
		if len(payload) == 0 {
			return c.write(hdr)
		}
		return c.writev(hdr, payload)
	}
	msg := make([]byte, 0, len(hdr)+len(payload))
	c.pending = append(c.pending, append(append(msg, hdr...), payload...))
	return nil
}

// Write implements io.Writer for p9's sender, which writes one whole reply at a
// time (under its own lock) as a few slices.
func (c *conn) Write(p []byte) (int, error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	total := len(p)
	for len(p) > 0 {
		if c.wleft == 0 {
			// A reply starts: learn its size, type and tag from its header.
			k := min(headerLen-len(c.whead), len(p))
			c.whead = append(c.whead, p[:k]...)
			c.wbuf = append(c.wbuf, p[:k]...)
			p = p[k:]
			if len(c.whead) < headerLen {
				break
			}
			size := int(binary.LittleEndian.Uint32(c.whead))
			typ, tag := c.whead[4], binary.LittleEndian.Uint16(c.whead[5:])
			c.obs.reply(c.whead)
			c.whead = c.whead[:0]
			if size < headerLen {
				return 0, errMalformed
			}
			c.wleft = size - headerLen
			if typ == msgRattach {
				c.attachedNow()
			}
			c.replyStarts(tag)
			c.p9tags.replied(typ, tag)
			c.versionReplied(tag)
			if c.replied(typ, tag) {
				c.wdrop = c.wnone[:]
				c.wbuf = c.wbuf[:0]
			}
			if repl := c.replyFor(typ, tag); repl != nil {
				c.wdrop = repl
				c.wbuf = c.wbuf[:0]
			}
			if c.wleft == 0 {
				if err := c.endReply(); err != nil {
					return 0, err
				}
			}
			continue
		}
		k := min(c.wleft, len(p))
		chunk := p[:k]
		p = p[k:]
		c.wleft -= k
		switch {
		case c.wdrop != nil:
		case k >= 16<<10:
			// A read payload: send what is assembled and the payload together
			// without copying it.
			err := c.writev(c.wbuf, chunk)
			c.wbuf = c.wbuf[:0]
			if err != nil {
				return 0, err
			}
		default:
			c.wbuf = append(c.wbuf, chunk...)
		}
		if c.wleft == 0 {
			if err := c.endReply(); err != nil {
				return 0, err
			}
		}
	}
	if cap(c.wbuf) > 256<<10 {
		c.wbuf = nil
	}
	return total, nil
}

// endReply sends the rest of a finished reply (or its replacement) and the
// shim's own replies that waited for it, in one system call.
// Precondition: c.wmu held.
func (c *conn) endReply() error {
	msg := c.wbuf
	if c.wdrop != nil {
		msg = c.wdrop
		c.wdrop = nil
	}
	c.wbuf = c.wbuf[:0]
	var err error
	switch {
	case len(c.pending) > 0:
		err = c.writev(append([][]byte{msg}, c.pending...)...)
		c.pending = nil
	case len(msg) > 0:
		// The common case: one reply, one write(2), nothing allocated.
		err = c.write(msg)
	}
	return err
}

// write sends msg in one system call. Precondition: c.wmu held.
func (c *conn) write(msg []byte) error { return c.sio.Writev(msg) }

// writev sends bufs in one system call. Precondition: c.wmu held.
func (c *conn) writev(bufs ...[]byte) error { return c.sio.Writev(bufs...) }

// versionReplied lets the reader go on once p9's reply to the Tversion in
// flight starts (see versioning).
func (c *conn) versionReplied(tag uint16) {
	if v := c.versioning.Load(); v != nil && tag == v.tag && c.versioning.CompareAndSwap(v, nil) {
		close(v.replied)
	}
}

// versionWait is a Tversion handed to p9 and not answered yet.
type versionWait struct {
	tag     uint16
	replied chan struct{}
}

// Close implements io.Closer for p9 (it closes both directions when the
// connection ends).
func (c *conn) Close() error { return c.nc.Close() }
