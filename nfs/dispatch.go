package nfs

import (
	"encoding/binary"
	"fmt"
	"runtime/debug"
)

// Dispatch: which code answers a call the record stream has read. Refused
// calls are answered by checkCall's reply, the MOUNT procedures go-nfs lacks
// by answerMount, every NFSv3 procedure by the adapter (serveNFS, or a
// worker through handOff), and MOUNT's MNT, UMNT and NULL by go-nfs.

// nextRecord reads call records until one is for go-nfs (MOUNT's MNT, UMNT,
// NULL), and makes it current. Every other call (refused calls, every NFS
// procedure, the MOUNT procedures go-nfs lacks) is answered here.
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
		if r.isNFS() {
			// The adapter's answer is the only one (fastpath.go): these
			// calls never reach go-nfs. The call travels as a value
			// (call.go), never through c.cur.
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
			rec := c.answer(r, body)
			if len(rec) == 0 {
				continue // answered later, off this goroutine (commitLater)
			}
			if err := c.replyNow(rec); err != nil {
				return err
			}
			if c.afterReply != nil {
				c.afterReply()
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

// The adapter answers every NFSv3 procedure in the record stream (serveNFS
// dispatches; this file holds the hot ones and the reply encoding). go-nfs,
// which once answered them, spent most of its time in reflection-based XDR, a
// fresh buffer per READ (zeroed, then copied twice) and a goroutine hand-off
// per reply; its READ was 8x nfs-ganesha's CPU. Here a READ is one pread (or
// sendfile) into a reply buffer reused per connection, and one write. The
// name "fast" stays from when a slower route existed beside it (issue 30).

// callArgs are a call's decoded arguments; the slices point into the
// call's record.
type callArgs struct {
	fh                 []byte
	name               string // LOOKUP
	off                uint64 // READ, WRITE
	count              uint32 // READ, READDIR
	want               uint32 // ACCESS
	cookie, verf       uint64 // READDIR, READDIRPLUS
	dircount, maxcount uint32
	stable             uint32 // WRITE
	data               []byte
	how                uint32 // CREATE: UNCHECKED or GUARDED (EXCLUSIVE: see createHow on the request)
	attrs              sattr3 // CREATE: what the new file's sattr3 sets
	body               []byte // SETATTR, MKNOD: the record body, decoded by their answers
}

// decodeArgs decodes the arguments of a call r.isNFS() accepts. checkCall has
// already bounded every field, so false (arguments it cannot read) is
// answered GARBAGE_ARGS (serveNFS).
func decodeArgs(r *request, body []byte) (a callArgs, ok bool) {
	if r.proc == procNull {
		return a, true
	}
	x := newXDRReader(body)
	x.off = r.argsOff
	a.fh = x.opaque(maxHandleOpaque)
	switch r.proc {
	case procGetattr, procCommit, procReadlink, procFsstat, procFsinfo, procPathconf:
	case procSetattr, procMknod, procMkdir, procSymlink, procLink, procRemove, procRmdir, procRename:
		a.body = body // decoded whole by their answers (setattr.go, make.go)
	case procRead:
		a.off, a.count = x.uint64(), x.uint32()
	case procLookup:
		a.name = string(x.opaque(4096))
	case procCreate:
		a.name = string(x.opaque(4096))
		if !decodeCreateHow(x, &a) {
			return a, false
		}
	case procAccess:
		a.want = x.uint32()
	case procReaddirplus:
		a.cookie, a.verf, a.dircount, a.maxcount = x.uint64(), x.uint64(), x.uint32(), x.uint32()
	case procReaddir:
		a.cookie, a.verf, a.count = x.uint64(), x.uint64(), x.uint32()
	case procWrite:
		var count uint32
		a.off, count, a.stable = x.uint64(), x.uint32(), x.uint32()
		a.data = x.opaque(len(body))
		if a.stable > 2 {
			return a, false // checkCall refuses it first
		}
		if uint32(len(a.data)) > count {
			a.data = a.data[:count]
		}
	default:
		return a, false
	}
	return a, x.ok
}

// decodeCreateHow reads CREATE's createhow3 into a: UNCHECKED and GUARDED
// with their sattr3, EXCLUSIVE as UNCHECKED with nothing set (call.create
// keeps its verifier, which parseCall put on the request).
func decodeCreateHow(x *xdrReader, a *callArgs) bool {
	a.how = x.uint32()
	switch a.how {
	case createExclusive:
		_ = x.fixed(8) // the verifier: parseCall kept it on the request
		a.how = createUnchecked
		return true
	case createUnchecked, createGuarded:
		a.attrs = decodeSattr3(x)
		return true
	}
	return false
}

// serveNFS answers r, whose record body is body: every call r.isNFS()
// accepts is answered here and nowhere else. It runs on the connection's
// reading goroutine.
//
// GETATTR, LOOKUP, ACCESS and a READ whose data is in the page cache are
// answered there with raw system calls only (answerInline).
func (h *connHandler) serveNFS(r *request, body []byte) []byte {
	a, ok := decodeArgs(r, body)
	if !ok {
		return h.garbageArgs(r)
	}
	switch r.proc {
	case procGetattr, procLookup, procAccess:
		return h.answerInline(r, a)
	case procRead:
		if rec := h.answerInline(r, a); rec != nil {
			return rec
		}
		// Not all in the page cache: read here as before (a small READ
		// on an idle connection; workers.go).
	}
	return h.answerCall(r, a)
}

// garbageArgs is the reply to a call whose arguments cannot be decoded.
func (h *connHandler) garbageArgs(r *request) []byte { return h.refuse(r, acceptGarbageArgs) }

// refuse is an accepted call's reply with accept_stat st instead of SUCCESS.
func (h *connHandler) refuse(r *request, st uint32) []byte {
	out := h.replyStart(r, 0)
	out = out[:len(out)-8] // no accept_stat SUCCESS, no status
	return h.replyEnd(appendUint32(out, st))
}

// answerInline answers r on the connection's reading goroutine with raw
// system calls only (h.inline: the core's inline stat and page-cache read, and
// rpcConn's raw socket reads and writes), so that a client waiting for each
// reply before its next call (a process stat-ing or reading a file) does not
// wake the Go runtime's monitor thread on every call (see server/sockio). A
// stat may still wait for the disk when the metadata is not in memory (rare
// for a file being worked on); it then holds the connection, as it would the
// goroutine either way. A READ never waits: nil when its data is not all in
// the page cache (fastRead), for the caller to read it where waiting is
// harmless. Only GETATTR, LOOKUP, ACCESS and READ come here.
func (h *connHandler) answerInline(r *request, a callArgs) []byte {
	k := h.newCall(r)
	k.inline = true
	return k.answer(a)
}

// answerCall answers a decoded call: on the connection's reading goroutine,
// or on one of its workers (workers.go) with the worker's own connHandler.
func (h *connHandler) answerCall(r *request, a callArgs) []byte {
	k := h.newCall(r)
	return k.answer(a)
}

// answer runs the call's procedure.
func (h *call) answer(a callArgs) (rec []byte) {
	r := h.r
	defer func() {
		if v := recover(); v != nil {
			h.s.log.Error("panic answering an NFS call; answering SERVERFAULT", "proc", r.proc, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			out := h.replyStart(r, nfs3ErrServerFault)
			rec = h.replyEnd(append(out, make([]byte, failBodyLen(r.proc))...))
		}
	}()
	switch r.proc {
	case procGetattr:
		h.s.maybePanic("getattr")
		return h.fastGetattr(a.fh)
	case procRead:
		return h.fastRead(a.fh, a.off, a.count)
	case procLookup:
		return h.fastLookup(a.fh, a.name)
	case procCommit:
		return h.fastCommit(a.fh)
	case procAccess:
		return h.fastAccess(a.fh, a.want)
	case procReaddirplus:
		return h.fastReaddirplus(a.fh, a.cookie, a.verf, a.dircount, a.maxcount)
	case procWrite:
		return h.fastWrite(a.fh, a.off, a.stable, a.data)
	case procReaddir:
		return h.fastReaddir(a.fh, a.cookie, a.verf, a.count)
	case procCreate:
		return h.fastCreate(a)
	case procSetattr:
		return h.ownSetattr(a.body)
	case procMknod:
		return h.ownMknod(a.body)
	case procMkdir:
		return h.ownMkdir(a.body)
	case procSymlink:
		return h.ownSymlink(a.body)
	case procLink:
		return h.ownLink(a.body)
	case procRemove, procRmdir:
		return h.ownRemove(a.body)
	case procRename:
		return h.ownRename(a.body)
	case procNull:
		return h.ownNull()
	case procReadlink:
		return h.ownReadlink(a.fh)
	case procFsstat:
		return h.ownFsstat(a.fh)
	case procFsinfo:
		return h.ownFsinfo(a.fh)
	case procPathconf:
		return h.ownPathconf(a.fh)
	}
	return h.refuse(r, acceptProcUnavail) // checkCall refuses it first
}
