package nfs

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"runtime/debug"
	"sync"
	"time"

	"github.com/semfs/semfs/server"
	"github.com/semfs/semfs/server/sockio"
)

const (
	lastFragment = 1 << 31
	// maxRecord bounds a call record, all its fragments together: go-nfs decodes
	// a WRITE's data into memory whole, and FSINFO advertises 1 MiB transfers
	// (see rewriteReply).
	maxRecord = 4 << 20
	// maxFragments bounds the fragments of one record (clients send one): a
	// stream of empty fragments would otherwise be read four bytes at a time
	// until the body timeout.
	maxFragments = 64
	// recordChunk is the most a record buffer grows ahead of the bytes that
	// have arrived, so a record mark that promises megabytes costs nothing
	// until they come.
	recordChunk = 64 << 10
	// readBuffer is the socket read buffer of a connection (rpcConn.rd).
	readBuffer = 16 << 10
	// maxTransfer is the rtmax/wtmax/rtpref/wtpref FSINFO advertises instead of
	// go-nfs's 1 GiB, as Linux's nfsd does.
	maxTransfer = 1 << 20
)

// rpcConn sits between go-nfs and the client's TCP connection and watches the ONC
// RPC record stream (RFC 5531 record marking) in both directions.
//
// Read side: go-nfs serves one call at a time per connection (conn.serve reads a
// call, handles it, queues the reply, then reads the next). rpcConn reads each
// call record whole (fragments reassembled, at most maxRecord bytes), checks it
// completely (checkCall) and hands go-nfs exactly one well-formed record at a
// time, so go-nfs's bufio.Reader cannot read ahead, and the next record is read
// only when go-nfs asks for it, i.e. after the previous call was fully handled.
// Hence cur always describes the call go-nfs is serving: its AUTH_UNIX uid and
// the arguments go-nfs ignores. Calls that fail the check are answered here and
// never reach go-nfs; a stream that is not RPC, and any read error, closes the
// connection (go-nfs itself closes it only on a clean EOF).
//
// Timeouts: while waiting for a call's first byte (no call in progress) reads
// are bounded by the idle timeout; from that byte on, the whole record must
// arrive within the body timeout. Every write of a reply is bounded by the body
// timeout too, so a client that never reads its replies is shed.
//
// Write side: replies pass through, except those of calls with something to fix
// (see request and rewriteReply), which are buffered whole and rewritten.
//
// Socket reads and writes are raw system calls on the poller's descriptor
// (server/sockio), so that a call answered on the reading goroutine with raw
// calls only (GETATTR, LOOKUP and ACCESS through the core's inline stat, a
// READ from the page cache) never tells the Go scheduler it enters a system
// call: that wakes the runtime's monitor thread, for a client that sends one
// call at a time on every call. Deadlines and Close end their waits as they end
// net.Conn's (they wait in the same poller).
//
// Read and the billy layer run on go-nfs's per-connection goroutine (the billy
// layer also on the connection's workers, each with its own handler and call:
// see workers.go); Write runs on go-nfs's writer goroutine; replyNow on any.
// pending is shared and locked; a record buffer handed to a worker is the
// worker's until it gives it back (spare).
type rpcConn struct {
	net.Conn
	onClose func()
	log     *slog.Logger
	idle    time.Duration // <= 0: no limit
	body    time.Duration // <= 0: no limit

	// read side (go-nfs's serving goroutine only)
	// rd buffers the socket's reads: a small call's record mark and body, and
	// often the next call pipelined behind it, come in one read(2) instead of
	// two or more. Records are still handed on one at a time (rbuf); a large
	// body goes around the buffer, straight into the record.
	rd     *bufio.Reader
	sio    *sockio.Conn // the socket's reads and writes, raw on its descriptor
	rbuf   []byte       // the current record (mark included) not yet handed out
	rstore []byte       // reused backing array of records
	roff   int
	reject []byte // reused buffer of refusals (checkCall)
	cur    *request
	// calls counts the records read; concurrentAt is its value when the
	// connection last showed calls in flight at once (a record read with
	// another behind it, or a call arriving while one was still on a worker
	// or a COMMIT goroutine): fastCommit answers inline on a connection that
	// has not for sequentialCalls calls (commitlater.go).
	calls, concurrentAt uint64
	// fast answers a call request.fast accepts (connHandler.serveFast) and
	// returns the reply record, or an empty one when the reply will be sent
	// later by another goroutine through replyNow. The record may be reused
	// once replyNow returns.
	fast func(r *request, body []byte) []byte
	// afterFast, if set, runs on the reading goroutine after each reply fast
	// made was sent (see connHandler.afterReply).
	afterFast func()
	// handOff gives a call to one of the connection's workers (workers.go),
	// with its record buffer (taken); or answers it itself (rec, a reply
	// record like fast's); or neither: answer it here. nil: no workers.
	handOff func(r *request, buf []byte) (rec []byte, taken bool)
	spares  chan []byte     // record buffers the workers are done with
	done    <-chan struct{} // closed once the connection is closed

	// write side: go-nfs's writer goroutine, and the read side when it answers a
	// call itself (inject); wmu serialises them at record boundaries.
	wmu    sync.Mutex
	wcond  *sync.Cond // signalled when a reply record is complete
	werr   error      // the connection failed writing
	wmark  [8]byte    // record mark + xid of the reply being examined
	wmarkN int
	wleft  int64 // bytes of the current reply still to pass through

	mu     sync.Mutex
	closed bool

	obs *observer // metrics; nil without Options.Observe
}

func newRPCConn(c net.Conn, onClose func()) *rpcConn {
	rc := &rpcConn{Conn: c, onClose: onClose, cur: &request{}, spares: make(chan []byte, maxWorkers+1)}
	rc.rstore = make([]byte, 4, 4+4096)
	rc.sio = sockio.New(c)
	rc.rd = bufio.NewReaderSize(rc.sio, readBuffer)
	rc.wcond = sync.NewCond(&rc.wmu)
	return rc
}

// current returns the call being served. Precondition: called from go-nfs's
// serving goroutine (Handler and billy methods).
func (c *rpcConn) current() *request { return c.cur }

func (c *rpcConn) Read(p []byte) (n int, err error) {
	// Read runs on go-nfs's goroutine: a panic here (the parser, the fast
	// path) would kill the process. Drop the connection instead.
	defer c.contain("read", &n, &err)
	if c.roff >= len(c.rbuf) {
		if err := c.nextRecord(); err != nil {
			// go-nfs closes the connection itself only on a clean EOF, and
			// never when it stops reading for any other reason.
			c.Close()
			return 0, err
		}
	}
	n = copy(p, c.rbuf[c.roff:])
	c.roff += n
	return n, nil
}

// nextRecord reads call records until one is for go-nfs, and makes it current.
// Calls the adapter answers itself (refused calls, the fast procedures, the
// MOUNT procedures go-nfs lacks) are answered here and never reach go-nfs.
func (c *rpcConn) nextRecord() error {
	for {
		buf, err := c.readRecord()
		if err != nil {
			return err
		}
		c.calls++
		if c.rd.Buffered() > 0 {
			c.concurrentAt = c.calls // the next call came before this one's reply
		}
		body := buf[4:]
		rej, err := checkCall(body, c.reject[:0])
		if err != nil {
			if c.log != nil {
				c.log.Debug("closing NFS connection", "remote", c.RemoteAddr().String(), "err", err)
			}
			return err
		}
		if rej != nil {
			c.reject = rej
			if err := c.replyNow(rej); err != nil {
				return err
			}
			continue
		}
		r, rewritten := parseCall(body, true)
		c.obs.call(r)
		if rec := answerMount(r, body); rec != nil {
			// go-nfs has no EXPORT, DUMP or UMNTALL and answers them with
			// a malformed error (libnfs fails to mount, showmount fails).
			if err := c.replyNow(rec); err != nil {
				return err
			}
			continue
		}
		if r.fast() {
			// The adapter's answer is the only one (fastpath.go): these
			// calls never reach go-nfs.
			c.cur = r
			if c.handOff != nil {
				rec, taken := c.handOff(r, buf)
				if taken {
					c.rstore = c.takeSpare() // buf is the worker's now
					continue
				}
				if len(rec) > 0 {
					if err := c.replyNow(rec); err != nil {
						return err
					}
				}
				if rec != nil {
					continue // empty: answered already (a READ sent by sendfile)
				}
			}
			rec := c.fast(r, body)
			if len(rec) == 0 {
				continue // answered later, off this goroutine (commitLater)
			}
			if err := c.replyNow(rec); err != nil {
				return err
			}
			if c.afterFast != nil {
				c.afterFast()
			}
			continue
		}
		// MOUNT's MNT, UMNT and NULL: go-nfs's.
		if rewritten != nil {
			buf = append(buf[:4], rewritten...)
		}
		binary.BigEndian.PutUint32(buf, uint32(len(buf)-4)|lastFragment)
		c.rbuf, c.roff = buf, 0
		c.cur = r
		return nil
	}
}

// takeSpare returns a record buffer to read the next call into: one a worker
// has finished with, or a new one.
func (c *rpcConn) takeSpare() []byte {
	select {
	case b := <-c.spares:
		return b[:4]
	default:
		return make([]byte, 4, 4+4096)
	}
}

// spare takes back a record buffer handed to a worker; from any goroutine. At
// most cap(c.spares) are kept.
func (c *rpcConn) spare(b []byte) {
	select {
	case c.spares <- b:
	default:
	}
}

// errRecordTooLarge: a record over maxRecord (or in too many fragments) is no
// call this server would serve, and skipping it would mean reading it.
var errRecordTooLarge = errors.New("nfs: call record too large or in too many fragments; closing the connection")

// readRecord reads the next call record whole, its fragments joined, and
// returns it with 4 bytes of room in front for the record mark go-nfs will see.
// Reads wait at most the idle timeout for the record's first byte, then the
// body timeout for all the rest.
func (c *rpcConn) readRecord() ([]byte, error) {
	c.setReadDeadline(c.idle)
	var mark [4]byte
	n, err := io.ReadAtLeast(c.rd, mark[:], 1)
	if err != nil {
		return nil, err // io.EOF between records: a clean close
	}
	c.setReadDeadline(c.body)
	buf := c.rstore[:4]
	for frag := 0; ; frag++ {
		if _, err := io.ReadFull(c.rd, mark[n:]); err != nil {
			return nil, unexpected(err)
		}
		n = 0
		m := binary.BigEndian.Uint32(mark[:])
		size := int(m &^ lastFragment)
		if frag >= maxFragments || len(buf)-4+size > maxRecord {
			return nil, errRecordTooLarge
		}
		buf, err = appendRead(c.rd, buf, size)
		c.rstore = buf
		if err != nil {
			return nil, unexpected(err)
		}
		if m&lastFragment != 0 {
			return buf, nil
		}
	}
}

func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// setReadDeadline bounds the next reads by d from now (d <= 0: no bound).
func (c *rpcConn) setReadDeadline(d time.Duration) {
	var t time.Time
	if d > 0 {
		t = time.Now().Add(d)
	}
	_ = c.Conn.SetReadDeadline(t)
}

// appendRead appends n bytes read from r to buf. buf grows no faster than the
// bytes arrive (at most recordChunk or its own size ahead of them).
func appendRead(r io.Reader, buf []byte, n int) ([]byte, error) {
	for n > 0 {
		if len(buf) == cap(buf) {
			nb := make([]byte, len(buf), len(buf)+min(n, max(len(buf), recordChunk)))
			copy(nb, buf)
			buf = nb
		}
		k := min(n, cap(buf)-len(buf))
		got, err := io.ReadFull(r, buf[len(buf):len(buf)+k])
		buf = buf[:len(buf)+got]
		n -= got
		if err != nil {
			return buf, err
		}
	}
	return buf, nil
}

// grow returns b resized to n bytes, reusing its array when it is big enough.
func grow(b []byte, n int) []byte {
	if cap(b) >= n {
		return b[:n]
	}
	nb := make([]byte, n, max(n, 2*cap(b)))
	copy(nb, b)
	return nb
}

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

// contain turns a panic on one of go-nfs's goroutines into a closed connection.
func (c *rpcConn) contain(op string, n *int, err *error) {
	v := recover()
	if v == nil {
		return
	}
	if c.log != nil {
		c.log.Error("panic in the NFS record stream; closing the connection", "op", op, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
	}
	if op == "write" {
		// As for a failed write (see Write): drop this and later replies
		// but report them written, so go-nfs's writer goroutine lives until
		// its serving goroutine sees the closed connection. c.wmu is held.
		c.failWriteLocked(errors.New("nfs: internal error; connection closed"))
		*err = nil
		return
	}
	*n, *err = 0, errors.New("nfs: internal error; connection closed")
	go c.Close() // Close takes wmu, which Write may hold
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

func (c *rpcConn) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	c.mu.Unlock()
	err := c.Conn.Close()
	c.wmu.Lock()
	if c.werr == nil {
		c.werr = net.ErrClosed
	}
	c.wcond.Broadcast()
	c.wmu.Unlock()
	if c.onClose != nil {
		c.onClose()
	}
	return err
}

// failBodyLen is the size of an NFSv3 failure result's body with no attributes
// (RFC 1813: post_op_attr, wcc_data or nothing), by procedure.
func failBodyLen(proc uint32) int {
	switch proc {
	case 1: // GETATTR
		return 0
	case procSetattr, procWrite, procCreate, procMkdir, procSymlink, procMknod, procRemove, procRmdir, procCommit:
		return 8 // wcc_data
	case procRename:
		return 16 // two wcc_data
	case procLink:
		return 12 // post_op_attr + wcc_data
	}
	return 4 // post_op_attr: LOOKUP, ACCESS, READLINK, READ, READDIR(PLUS), FSSTAT, FSINFO, PATHCONF
}
