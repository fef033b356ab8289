package nfs

import (
	"bufio"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"runtime/debug"
	"sync"
	"time"

	"github.com/semfs/semfs/server/sockio"
)

// rpcConn is one client connection's ONC RPC record stream (RFC 5531 record
// marking), seen from go-nfs as its net.Conn. Its jobs, one file each:
// framing.go reads call records whole; dispatch.go decides which code answers
// each; send.go writes the replies; encode.go builds the adapter's.
//
// Read side: rpcConn reads each call record whole (fragments reassembled, at
// most maxRecord bytes), checks it completely (checkCall) and answers it
// (dispatch.go): only MOUNT's MNT, UMNT and NULL are handed to go-nfs, which
// serves one call at a time per connection (conn.serve reads a call, handles
// it, queues the reply, then reads the next), one well-formed record at a
// time, so go-nfs's bufio.Reader cannot read ahead. Hence cur always describes
// the call being served on the reading goroutine. A stream that is not RPC,
// and any read error, closes the connection (go-nfs itself closes it only on
// a clean EOF).
//
// Timeouts: while waiting for a call's first byte (no call in progress) reads
// are bounded by the idle timeout; from that byte on, the whole record must
// arrive within the body timeout. Every write of a reply is bounded by the body
// timeout too, so a client that never reads its replies is shed.
//
// Write side: go-nfs's replies pass through as written; the adapter's own
// replies go out between them, whole (replyNow, replyFile).
//
// Socket reads and writes are raw system calls on the poller's descriptor
// (server/sockio), so that a call answered on the reading goroutine with raw
// calls only (GETATTR, LOOKUP and ACCESS through the core's inline stat, a
// READ from the page cache) never tells the Go scheduler it enters a system
// call: that wakes the runtime's monitor thread, for a client that sends one
// call at a time on every call. Deadlines and Close end their waits as they end
// net.Conn's (they wait in the same poller).
//
// Read runs on go-nfs's per-connection goroutine, which is also the
// connection's reading goroutine that answers calls inline; the connection's
// workers answer calls with their own handler (workers.go); Write runs on
// go-nfs's writer goroutine; replyNow on any. A record buffer handed to a
// worker is the worker's until it gives it back (spare).
type rpcConn struct {
	net.Conn
	onClose func()
	log     *slog.Logger
	idle    time.Duration // <= 0: no limit
	body    time.Duration // <= 0: no limit

	// read side (the reading goroutine only)
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
	// answer answers a call request.isNFS accepts (connHandler.serveNFS) and
	// returns the reply record, or an empty one when the reply will be sent
	// later by another goroutine through replyNow. The record may be reused
	// once replyNow returns.
	answer func(r *request, body []byte) []byte
	// afterReply, if set, runs on the reading goroutine after each reply answer
	// made was sent (see connHandler.afterReply).
	afterReply func()
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
