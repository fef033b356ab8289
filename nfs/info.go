package nfs

import (
	"github.com/semfs/semfs/server"
)

// NULL, READLINK, FSSTAT, FSINFO and PATHCONF (RFC 1813 3.3.0, 3.3.5,
// 3.3.18-20). FSINFO and PATHCONF say what go-nfs v0.0.4 said, but for the
// transfer sizes: 1 MiB (maxTransfer), as Linux's nfsd, instead of 1 GiB.

// ownNull answers NULL: an accepted call with no result.
func (h *call) ownNull() []byte {
	r := h.r
	out := h.replyStart(r, 0)
	return h.replyEnd(out[:len(out)-4]) // no status
}

// ownReadlink answers READLINK: the target as stored, never resolved.
func (h *call) ownReadlink(fh []byte) []byte {
	r := h.r
	b, p, a, err := h.resolveStat(fh)
	if err != nil {
		return h.failReply(r, status(r, err))
	}
	h.s.maybePanic("readlink")
	target, err := h.s.fsys.Readlink(h.ctx(b), p)
	if err != nil {
		return h.failReply(r, status(r, err))
	}
	out := appendPostOp(h.replyStart(r, nfs3OK), &a, h.s.fsid)
	return h.replyEnd(appendOpaque(out, []byte(target)))
}

// ownFsstat answers FSSTAT from the backing directory's file system.
func (h *call) ownFsstat(fh []byte) []byte {
	r := h.r
	b, _, a, err := h.resolveStat(fh)
	if err != nil {
		return h.failReply(r, status(r, err))
	}
	s, err := h.s.fsys.StatFS(h.ctx(b))
	if err != nil {
		return h.failReply(r, status(r, err))
	}
	bs := uint64(s.BlockSize)
	out := appendPostOp(h.replyStart(r, nfs3OK), &a, h.s.fsid)
	for _, v := range []uint64{s.Blocks * bs, s.BlocksFree * bs, s.BlocksAvail * bs, s.Files, s.FilesFree, s.FilesFree} {
		out = appendUint64(out, v)
	}
	return h.replyEnd(appendUint32(out, 0)) // invarsec: may change at any time
}

// FSINFO3resok's properties (RFC 1813 3.3.19).
const (
	fsfLink        = 0x01
	fsfSymlink     = 0x02
	fsfHomogeneous = 0x08
	fsfCanSetTime  = 0x10
)

// ownFsinfo answers FSINFO.
func (h *call) ownFsinfo(fh []byte) []byte {
	r := h.r
	_, _, a, err := h.resolveStat(fh)
	if err != nil {
		return h.failReply(r, status(r, err))
	}
	out := appendPostOp(h.replyStart(r, nfs3OK), &a, h.s.fsid)
	out = appendUint32(out, maxTransfer) // rtmax
	out = appendUint32(out, maxTransfer) // rtpref
	out = appendUint32(out, 4096)        // rtmult
	out = appendUint32(out, maxTransfer) // wtmax
	out = appendUint32(out, maxTransfer) // wtpref
	out = appendUint32(out, 4096)        // wtmult
	out = appendUint32(out, 8192)        // dtpref
	out = appendUint64(out, 1<<62)       // maxfilesize
	out = appendUint32(out, 0)           // time_delta: 1 ns
	out = appendUint32(out, 1)
	return h.replyEnd(appendUint32(out, fsfLink|fsfSymlink|fsfHomogeneous|fsfCanSetTime))
}

// ownPathconf answers PATHCONF.
func (h *call) ownPathconf(fh []byte) []byte {
	r := h.r
	_, _, a, err := h.resolveStat(fh)
	if err != nil {
		return h.failReply(r, status(r, err))
	}
	out := appendPostOp(h.replyStart(r, nfs3OK), &a, h.s.fsid)
	out = appendUint32(out, 1)                 // linkmax, as go-nfs said
	out = appendUint32(out, server.MaxNameLen) // name_max
	out = appendUint32(out, 1)                 // no_trunc
	out = appendUint32(out, 0)                 // chown_restricted, as go-nfs said
	out = appendUint32(out, 0)                 // case_insensitive
	return h.replyEnd(appendUint32(out, 1))    // case_preserving
}
