package nfs

import (
	"github.com/semfs/semfs/server"
)

// REMOVE, RMDIR and RENAME (RFC 1813 3.3.12-14), each one core call as the
// caller. Their replies carry the directories' wcc_data: the attributes
// before (size, mtime, ctime) and after the change.

// ownRemove answers REMOVE and RMDIR.
func (h *call) ownRemove(body []byte) []byte {
	r := h.r
	x := newXDRReader(body)
	x.off = r.argsOff
	fh := x.opaque(maxHandleOpaque)
	name := string(x.opaque(maxNameLen))
	if !x.ok {
		return h.garbageArgs(r)
	}
	reply := func(st uint32, pre, post *server.Attr) []byte {
		return h.replyEnd(h.appendWcc(h.replyStart(r, st), pre, post))
	}
	b, dir, err := h.resolveHandle(fh)
	if err != nil {
		return reply(status(r, err), nil, nil)
	}
	pre, err := h.lstat(dir)
	if err != nil {
		return reply(status(r, err), nil, nil)
	}
	p := server.Join(dir, name)
	a, idErr := h.lstat(p)
	h.invalidate()
	if err := h.s.fsys.Remove(h.ctx(b), p, r.proc == procRmdir); err != nil {
		return reply(status(r, err), &pre, h.attrsNow(dir))
	}
	h.s.fds.evict(p)
	if id := idOf(a); idErr == nil && (id.isDir || id.nlink <= 1) {
		h.s.hm.del(id.ino)
	}
	return reply(nfs3OK, &pre, h.attrsNow(dir))
}

// ownRename answers RENAME.
func (h *call) ownRename(body []byte) []byte {
	r := h.r
	x := newXDRReader(body)
	x.off = r.argsOff
	fromFH := x.opaque(maxHandleOpaque)
	fromName := string(x.opaque(maxNameLen))
	toFH := x.opaque(maxHandleOpaque)
	toName := string(x.opaque(maxNameLen))
	if !x.ok {
		return h.garbageArgs(r)
	}
	var pre [2]*server.Attr
	reply := func(st uint32, post bool, dirs ...string) []byte {
		out := h.replyStart(r, st)
		for i := range 2 {
			var now *server.Attr
			if post && i < len(dirs) {
				now = h.attrsNow(dirs[i])
			}
			out = h.appendWcc(out, pre[i], now)
		}
		return h.replyEnd(out)
	}
	_, from, err := h.resolveHandle(fromFH)
	if err != nil {
		return reply(status(r, err), false)
	}
	if a, err := h.lstat(from); err == nil {
		pre[0] = &a
	}
	b, to, err := h.resolveHandle(toFH)
	if err != nil {
		return reply(status(r, err), false)
	}
	if a, err := h.lstat(to); err == nil {
		pre[1] = &a
	}
	op, np := server.Join(from, fromName), server.Join(to, toName)
	h.invalidate()
	if err := h.s.fsys.Rename(h.ctx(b), op, np); err != nil {
		return reply(status(r, err), true, from, to)
	}
	h.s.fds.evict(op)
	h.s.fds.evict(np)
	h.s.recordPlace(np)
	return reply(nfs3OK, true, from, to)
}

// attrsNow is p's attributes read again, nil if they cannot be.
func (h *call) attrsNow(p string) *server.Attr {
	h.invalidate()
	if a, err := h.lstat(p); err == nil {
		return &a
	}
	return nil
}
