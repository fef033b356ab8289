package nfs

import (
	"io/fs"

	"github.com/semfs/semfs/server"
)

// MKDIR, SYMLINK and LINK are answered here, each in one core call made as
// the caller (server.FS.Mkdir, Symlink, Link), so the kernel decides what
// the caller may make and in which order it learns why not: a caller who
// may not search a directory is refused (ACCES) before it learns that a
// name exists there (EXIST), as on Linux's nfsd and for mkdir(2),
// symlink(2) and link(2) (differential finding N9). go-nfs answered them
// after a lookup of the new name as the daemon, which needed that rule
// re-applied in front of it, a sticky bit it dropped put back, its LINK
// arguments and reply translated (it decoded LINK3args as another layout),
// and SYMLINK's record cut so its reader saw the target in one piece.

// ownMkdir answers MKDIR (RFC 1813 3.3.9): the directory is made with the
// mode asked (0755 when none is), setuid, setgid and sticky included; the
// owner and times asked are applied after, as the caller.
func (h *call) ownMkdir(body []byte) []byte {
	r := h.r
	x := newXDRReader(body)
	x.off = r.argsOff
	fh := x.opaque(maxHandleOpaque)
	name := string(x.opaque(maxNameLen))
	s := decodeSattr3(x)
	if !x.ok {
		return h.garbageArgs(r)
	}
	if s.badTime {
		return h.madeFail(r, nfs3ErrInval)
	}
	b, dir, err := h.resolveHandle(fh)
	if err != nil {
		return h.madeFail(r, status(r, err))
	}
	perm := fs.FileMode(0o755)
	if s.mode != nil {
		perm = server.PermOf(*s.mode)
	}
	p := server.Join(dir, name)
	h.invalidate()
	a, err := h.s.fsys.Mkdir(h.ctx(b), p, perm)
	if err != nil {
		return h.madeFail(r, status(r, err))
	}
	s.mode = nil
	return h.made(b, dir, name, a, s)
}

// ownSymlink answers SYMLINK (RFC 1813 3.3.10): the target is stored as
// sent, never resolved. A symlink's own mode means nothing on Linux, so only
// the owner and times asked are applied.
func (h *call) ownSymlink(body []byte) []byte {
	r := h.r
	x := newXDRReader(body)
	x.off = r.argsOff
	fh := x.opaque(maxHandleOpaque)
	name := string(x.opaque(maxNameLen))
	s := decodeSattr3(x)
	target := string(x.opaque(maxNFSPathLen))
	if !x.ok {
		return h.garbageArgs(r)
	}
	// An empty target is refused first, whatever the directory, as Linux's
	// nfsd does (nfsd3_proc_symlink); the core would answer ENOENT, as
	// symlink(2).
	if s.badTime || target == "" {
		return h.madeFail(r, nfs3ErrInval)
	}
	b, dir, err := h.resolveHandle(fh)
	if err != nil {
		return h.madeFail(r, status(r, err))
	}
	p := server.Join(dir, name)
	h.invalidate()
	a, err := h.s.fsys.Symlink(h.ctx(b), target, p)
	if err != nil {
		return h.madeFail(r, status(r, err))
	}
	s.mode, s.size = nil, nil
	return h.made(b, dir, name, a, s)
}

// made finishes a MKDIR or SYMLINK that made dir/name (attributes a): the
// rest of its sattr3 applied as the caller, the handle recorded, and the
// reply: handle, attributes, the directory's wcc_data (no pre-op).
func (h *call) made(b *billyFS, dir, name string, a server.Attr, s sattr3) []byte {
	r := h.r
	p := server.Join(dir, name)
	sa := s.core()
	sa.OfCreate = true // a symlink's times: part of its making, not a touch
	if s.size != nil {
		n := int64(min(*s.size, 1<<63-1))
		sa.Size = &n // the core refuses a size for anything but a regular file
	}
	if !setAttrEmpty(sa) {
		var err error
		if a, err = h.s.fsys.SetAttr(h.ctx(b), p, sa); err != nil {
			return h.madeFail(r, status(r, err))
		}
	}
	h.remember(p, a)
	h.fresh = a.Ino
	nfh := h.handleOf(b, p)
	if len(nfh) == 0 {
		return h.madeFail(r, nfs3ErrServerFault)
	}
	out := h.replyStart(r, nfs3OK)
	out = appendUint32(out, 1) // handle follows
	out = appendOpaque(out, nfh)
	out = appendPostOp(out, &a, h.s.fsid)
	var post *server.Attr
	if d, err := h.lstat(dir); err == nil {
		post = &d
	}
	return h.replyEnd(h.appendWcc(out, nil, post))
}

// madeFail is a failed MKDIR's, SYMLINK's or MKNOD's reply: the status, an
// empty wcc_data.
func (h *connHandler) madeFail(r *request, st uint32) []byte {
	return h.replyEnd(h.appendWcc(h.replyStart(r, st), nil, nil))
}

// ownLink answers LINK (RFC 1813 3.3.15): the file's handle and the new
// name's directory and name. The reply carries the file's attributes after
// the link (its link count) and the directory's.
func (h *call) ownLink(body []byte) []byte {
	r := h.r
	x := newXDRReader(body)
	x.off = r.argsOff
	file := x.opaque(maxHandleOpaque)
	dirFH := x.opaque(maxHandleOpaque)
	name := string(x.opaque(maxNameLen))
	if !x.ok {
		return h.garbageArgs(r)
	}
	fail := func(st uint32, fa *server.Attr) []byte {
		out := appendPostOp(h.replyStart(r, st), fa, h.s.fsid)
		return h.replyEnd(h.appendWcc(out, nil, nil))
	}
	_, src, err := h.resolveHandle(file)
	if err != nil {
		return fail(status(r, err), nil)
	}
	b, dir, err := h.resolveHandle(dirFH)
	if err != nil {
		return fail(status(r, err), nil)
	}
	p := server.Join(dir, name)
	h.invalidate()
	a, err := h.s.fsys.Link(h.ctx(b), src, p)
	if err != nil {
		return fail(status(r, err), nil)
	}
	out := appendPostOp(h.replyStart(r, nfs3OK), &a, h.s.fsid)
	var post *server.Attr
	if d, err := h.lstat(dir); err == nil {
		post = &d
	}
	return h.replyEnd(h.appendWcc(out, nil, post))
}
