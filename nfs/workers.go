package nfs

import (
	"fmt"
	"runtime/debug"
	"sync/atomic"

	"github.com/semfs/semfs/server"
)

// maxWorkers bounds the goroutines answering one connection's READ, WRITE and
// READDIRPLUS calls besides its reading goroutine; when all are busy the reading
// goroutine waits for one (the client's calls then queue in the socket, as they
// did when every call was answered inline).
const maxWorkers = 4

// handOffSize: a READ or WRITE of at least this many bytes always goes to a
// worker.
const handOffSize = 16 << 10

// handed is one call given to a worker: its decoded arguments, and the record
// buffer they point into, which the worker owns until it has answered.
type handed struct {
	r    *request
	a    callArgs
	buf  []byte
	busy *atomic.Int32 // the connection's count of calls handed, decremented once answered
}

// workers answer a connection's slow calls (READ, WRITE,
// READDIRPLUS, and CREATE while other calls are in progress) off its reading
// goroutine. The reading goroutine answers every call of a connection in turn,
// so one process's 1 MiB READ or WRITE (a pread or pwrite of hundreds of
// microseconds) held up the GETATTRs, LOOKUPs and CREATEs of every other
// process sharing the mount (eight streams on one connection ran at 1.7x
// nfs-ganesha's time, which answers on worker threads). RPC over TCP lets
// replies go out in any order; the client matches them by xid, and no client
// depends on the order in which calls it has in flight at once take effect
// (Linux's nfsd runs them on parallel threads too).
//
// GETATTR, LOOKUP and ACCESS stay inline: a few microseconds each, less than
// the hand-off to another goroutine (a cross-CPU wake-up) would cost. So does a
// large READ when the connection has nothing else in progress and the page
// cache holds all its data (see handOff). COMMIT
// has its own hand-off (commitLater). The other procedures (SETATTR, MKDIR,
// REMOVE, RENAME, …) stay on the reading goroutine.
//
// Each worker has its own connHandler: the per-call caches (resolved handle,
// attributes, reply buffer) and the call being served (cur) are the worker's,
// and everything else it touches (fd cache, handle map, listings, the core,
// replyNow) is safe from any goroutine.
type workers struct {
	calls   chan handed
	started int
	busy    atomic.Int32 // calls handed and not yet answered
}

// handOff gives the call r, whose record (mark included) is buf, to a worker
// if it is one workers answer and its arguments decode (taken: buf belongs to
// the worker now); or answers a large READ itself (rec); or leaves the call to
// the caller (inline). Precondition: the connection's reading
// goroutine.
func (h *connHandler) handOff(r *request, buf []byte) (rec []byte, taken bool) {
	w := &h.workers
	switch r.proc {
	case procReaddirplus, procRead, procWrite, procCreate:
	default:
		return nil, false
	}
	a, ok := decodeArgs(r, buf[4:])
	if !ok {
		return nil, false
	}
	// A small READ or WRITE (microseconds in the page cache) and a CREATE (a
	// hundred microseconds or more in the kernel) go to a worker only while
	// the connection has other work in progress: a process alone waits for
	// each reply anyway, and the hand-off would only add a goroutine wake-up.
	small := r.proc == procCreate || r.proc == procRead && a.count < handOffSize ||
		r.proc == procWrite && len(a.data) < handOffSize
	idle := w.busy.Load() == 0 && len(h.commits) == 0
	if !idle {
		h.c.concurrentAt = h.c.calls
	}
	if small && idle {
		return nil, false
	}
	if r.proc == procRead && idle {
		// A large READ on an otherwise idle connection (a process reading a
		// file alone) is answered here when its data is all in the page
		// cache: a copy of at most maxTransfer bytes that never waits for the
		// disk, made with raw system calls only (answerInline). The hand-off
		// cost a goroutine wake-up per call, which put a lone stream of 1 MiB
		// READs at 1.06-1.09x nfs-ganesha's time. A READ the disk must serve
		// still goes to a worker, so it never holds the connection's other
		// calls (TestReadDoesNotHoldTheConnection).
		if rec := h.answerInline(r, a); rec != nil {
			return rec, false
		}
	}
	if w.calls == nil {
		w.calls = make(chan handed)
	}
	call := handed{r: r, a: a, buf: buf, busy: &w.busy}
	w.busy.Add(1)
	select {
	case w.calls <- call:
		return nil, true
	default:
	}
	if w.started < maxWorkers {
		select {
		case <-h.c.done:
			w.busy.Add(-1)
			return nil, false // closing: answered inline, and its reply dropped
		default:
		}
		w.started++
		wh := &connHandler{s: h.s, c: h.c, fss: map[uint32]*billyFS{}, attrs: map[string]server.Attr{}, worker: true}
		// The reading goroutine holds a count of s.wg while it runs (as for
		// commitLater), so this Add never races Close's Wait from zero.
		h.s.wg.Add(1)
		go wh.work(w.calls, h.c.done)
	}
	select {
	case w.calls <- call:
		return nil, true
	case <-h.c.done:
		w.busy.Add(-1)
		return nil, false
	}
}

// work answers handed calls until the connection is closed.
func (h *connHandler) work(calls <-chan handed, done <-chan struct{}) {
	defer h.s.wg.Done()
	for {
		select {
		case c := <-calls:
			h.answerHanded(c)
		case <-done:
			return
		}
	}
}

func (h *connHandler) answerHanded(c handed) {
	defer func() {
		// answerCall recovers its own panics; this is for replyNow's.
		if v := recover(); v != nil {
			h.s.log.Error("panic answering an NFS call on a worker; closing the connection", "proc", c.r.proc, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			go h.c.Close()
		}
	}()
	rec := h.answerCall(c.r, c.a)
	h.c.spare(c.buf)
	if len(rec) > 0 {
		_ = h.c.replyNow(rec) // fails only on a closed connection
	}
	c.busy.Add(-1)
}
