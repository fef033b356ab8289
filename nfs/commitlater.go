package nfs

import (
	"context"
	"encoding/binary"
	"fmt"
	"runtime/debug"

	"github.com/semfs/semfs/server"
)

// sequentialCalls is how many calls a connection must have made one at a time
// (each sent after the reply to the one before, none while another was in
// progress) for its COMMITs to be answered inline (commitInline).
const sequentialCalls = 256

// maxCommitsLater bounds the COMMITs of one connection waiting on the disk at
// once; beyond it a COMMIT is answered inline as before.
const maxCommitsLater = 8

// commitLater answers a COMMIT off the connection's reading goroutine. A COMMIT
// waits for the disk (the file's fsync and the index's sync, a millisecond or
// more), and the reading goroutine answers every call of the connection in
// turn: inline, one process's COMMIT held up the GETATTRs, READs and WRITEs of
// every other process sharing the mount (eight streams on one connection ran at
// 1.7x nfs-ganesha, which syncs on worker threads). RPC over TCP lets replies
// go out in any order; the client matches them by xid.
//
// The handle is resolved inline (the per-call caches of connHandler belong to
// the reading goroutine); the goroutine touches only what is safe from any
// goroutine: the fd cache, the core, and replyNow. It returns false, and the
// caller answers inline, when maxCommitsLater are already waiting.
func (h *connHandler) commitLater(ctx context.Context, r *request, p string, id inodeID) bool {
	if h.commits == nil {
		h.commits = make(chan struct{}, maxCommitsLater)
	}
	select {
	case h.commits <- struct{}{}:
	default:
		return false
	}
	h.s.maybeHold("commit later")
	xid, s, c, slots := r.xid, h.s, h.c, h.commits
	// The connection's goroutine holds a count of s.wg while it runs, so this
	// Add never races Close's Wait from zero; Close waits for the reply.
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer func() { <-slots }()
		var rec []byte
		defer func() {
			if v := recover(); v != nil {
				s.log.Error("panic in NFS COMMIT; answering SERVERFAULT", "path", p, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
				rec = commitReply(nil, xid, nfs3ErrServerFault, nil, s.verf, s.fsid)
			}
			_ = c.replyNow(rec) // fails only on a closed connection
		}()
		a, ok, err := s.commitStat(ctx, p, id)
		if err != nil {
			s.log.Error("COMMIT: sync failed", "path", p, "err", err)
			rec = commitReply(nil, xid, nfs3ErrIO, nil, s.verf, s.fsid)
			return
		}
		if !ok {
			a, err = s.fsys.Lstat(context.Background(), p)
		}
		if err != nil {
			rec = commitReply(nil, xid, nfs3OK, nil, s.verf, s.fsid)
		} else {
			rec = commitReply(nil, xid, nfs3OK, &a, s.verf, s.fsid)
		}
	}()
	return true
}

// commitInline says whether a COMMIT is answered on the connection's reading
// goroutine rather than by commitLater: when nothing else of the connection is
// in progress (a call on a worker or a COMMIT goroutine, which counts as calls
// in flight at once), and it has shown no calls in flight at once for
// sequentialCalls calls (nextRecord counts a call read with another behind
// it, as this COMMIT's would have been). A client that waits for each reply before
// its next call (one process creating files: CREATE, WRITE, COMMIT, again)
// then saves the hand-off of every COMMIT to another goroutine, and the
// scheduler's waking of another thread for it (same-run A/B, 2,000 creates:
// docs/benchmarks-history.md, "COMMIT inline on a sequential connection"). The cost falls
// on a connection that turns concurrent: a call sent while such a COMMIT syncs
// waits for it, once; the next calls in flight at once send COMMITs to
// commitLater again for the next sequentialCalls calls.
func (h *connHandler) commitInline() bool {
	c := h.c
	if h.workers.busy.Load() > 0 || len(h.commits) > 0 {
		c.concurrentAt = c.calls
		return false
	}
	return c.calls-c.concurrentAt > sequentialCalls
}

// commitReply builds a whole COMMIT reply record (RFC 1813 COMMIT3res) into out:
// the same bytes fastCommit sends, without the connection's shared buffer.
func commitReply(out []byte, xid, status uint32, a *server.Attr, verf [8]byte, fsid uint64) []byte {
	out = appendUint32(out[:0], 0) // record mark, set below
	out = appendUint32(out, xid)
	out = appendUint32(out, 1) // REPLY
	out = appendUint32(out, 0) // MSG_ACCEPTED
	out = appendUint32(out, 0) // verifier AUTH_NONE, empty
	out = appendUint32(out, 0)
	out = appendUint32(out, 0) // SUCCESS
	out = appendUint32(out, status)
	if status != nfs3OK {
		out = append(out, 0, 0, 0, 0, 0, 0, 0, 0) // wcc_data: none
	} else {
		out = appendUint32(out, 0) // no pre-op attributes
		out = appendPostOp(out, a, fsid)
		out = append(out, verf[:]...)
	}
	binary.BigEndian.PutUint32(out, uint32(len(out)-4)|lastFragment)
	return out
}

// answeredLater is what an answer returns for a call another goroutine
// will answer: an empty record.
func answeredLater() []byte { return []byte{} }
