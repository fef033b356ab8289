package nfs

import (
	"io/fs"
	"math"
	"time"

	"github.com/semfs/semfs/server"
)

// SETATTR and MKNOD are answered here, in the record stream. go-nfs v0.0.4,
// which once answered them, got them wrong in ways a client sees:
//
//   - SETATTR: its SetFileAttributes.Apply drops the setuid, setgid and sticky
//     bits of a mode (chmod 01777 stored 0777), and skips a change that leaves
//     an attribute as it is: a chown or chmod by a caller who does not own the
//     file answered OK instead of EPERM (pjdfstest chown/07, chmod/07) and a
//     chown to the same owner did not clear setuid and setgid.
//   - MKNOD: it makes the new file's handle before the file exists, so every
//     MKNOD was answered with an empty handle, which Linux's client rejects
//     with E2BIG ("file handle size 0 too big"): mkfifo failed over NFS. It
//     had no sockets either.
//
// Both hand everything to the core in one call made as the caller
// (server.FS.SetAttr, server.FS.Mknod), so the kernel decides what the caller
// may change, as for a local call.

// nfs3ErrNotSync is SETATTR's answer when its guard's ctime is not the file's.
const nfs3ErrNotSync = 10002

// sattr3 is RFC 1813's sattr3 as decoded; nil or timeDontChange for what it
// leaves alone.
type sattr3 struct {
	mode, uid, gid     *uint32
	size               *uint64
	atimeHow, mtimeHow uint32
	atime, mtime       time.Time
	badTime            bool // an nfstime3 with nseconds past a second
}

func decodeSattr3(x *xdrReader) (s sattr3) {
	opt := func() *uint32 {
		if x.uint32() == 0 {
			return nil
		}
		v := x.uint32()
		return &v
	}
	s.mode, s.uid, s.gid = opt(), opt(), opt()
	if x.uint32() != 0 {
		v := x.uint64()
		s.size = &v
	}
	s.atimeHow = x.uint32()
	if s.atimeHow == timeClient {
		s.atime = s.decodeTime(x)
	}
	s.mtimeHow = x.uint32()
	if s.mtimeHow == timeClient {
		s.mtime = s.decodeTime(x)
	}
	return s
}

// decodeTime reads an nfstime3: seconds are unsigned 32 bits, so NFSv3
// carries times from 1970 to early 2106 (past 2038, before 1970 not at all).
func (s *sattr3) decodeTime(x *xdrReader) time.Time {
	sec, nsec := x.uint32(), x.uint32()
	if nsec >= 1e9 {
		s.badTime = true
	}
	return time.Unix(int64(sec), int64(nsec))
}

// core is s as the core's SetAttr, without the size (see ownSetattr).
// SET_TO_SERVER_TIME is utimensat's UTIME_NOW (a caller who may write the
// file may set it), SET_TO_CLIENT_TIME an explicit time (the owner only).
func (s *sattr3) core() server.SetAttr {
	var sa server.SetAttr
	if s.mode != nil {
		m := server.PermOf(*s.mode)
		sa.Mode = &m
	}
	sa.UID, sa.GID = s.uid, s.gid
	switch s.atimeHow {
	case timeServer:
		sa.AtimeNow = true
	case timeClient:
		sa.Atime = &s.atime
	}
	switch s.mtimeHow {
	case timeServer:
		sa.MtimeNow = true
	case timeClient:
		sa.Mtime = &s.mtime
	}
	return sa
}

func setAttrEmpty(s server.SetAttr) bool {
	return s.Mode == nil && s.UID == nil && s.GID == nil && s.Size == nil &&
		s.Atime == nil && s.Mtime == nil && !s.AtimeNow && !s.MtimeNow
}

// appendWcc appends wcc_data: pre-op attributes (size, mtime, ctime) and
// post-op attributes, each when known.
func (h *connHandler) appendWcc(out []byte, pre, post *server.Attr) []byte {
	if pre == nil {
		out = appendUint32(out, 0)
	} else {
		out = appendUint32(out, 1)
		out = appendUint64(out, uint64(pre.Size))
		out = appendTime(out, pre.Mtime)
		out = appendTime(out, pre.Ctime)
	}
	return appendPostOp(out, post, h.s.fsid)
}

func appendUint64(b []byte, v uint64) []byte {
	return appendUint32(appendUint32(b, uint32(v>>32)), uint32(v))
}

// ownSetattr answers SETATTR (RFC 1813 3.3.2). A size goes first, through the
// shared descriptor and the per-request check READ and WRITE have (CheckIO:
// as nfsd, the owner may truncate a file it made read-only through an open
// descriptor); then the rest in one core call as the caller.
func (h *call) ownSetattr(body []byte) []byte {
	r := h.r
	x := newXDRReader(body)
	x.off = r.argsOff
	fh := x.opaque(maxHandleOpaque)
	s := decodeSattr3(x)
	var guard bool
	var gsec, gnsec uint32
	if x.uint32() != 0 {
		guard = true
		gsec, gnsec = x.uint32(), x.uint32()
	}
	reply := func(st uint32, pre, post *server.Attr) []byte {
		return h.replyEnd(h.appendWcc(h.replyStart(r, st), pre, post))
	}
	if !x.ok || s.badTime {
		return reply(nfs3ErrInval, nil, nil)
	}
	b, p, err := h.resolveHandle(fh)
	if err != nil {
		return reply(status(r, err), nil, nil)
	}
	pre, err := h.lstat(p)
	if err != nil {
		return reply(status(r, err), nil, nil)
	}
	if guard && (uint32(pre.Ctime.Unix()) != gsec || uint32(pre.Ctime.Nanosecond()) != gnsec) {
		return reply(nfs3ErrNotSync, &pre, &pre)
	}
	ctx := h.ctx(b)
	h.invalidate()
	defer h.invalidate()
	post := func() *server.Attr {
		h.invalidate()
		if a, err := h.lstat(p); err == nil {
			return &a
		}
		return nil
	}
	if s.size != nil {
		if err := h.setSize(b, p, pre, *s.size); err != nil {
			return reply(status(r, err), &pre, post())
		}
	}
	if sa := s.core(); !setAttrEmpty(sa) {
		if _, err := h.s.fsys.SetAttr(ctx, p, sa); err != nil {
			return reply(status(r, err), &pre, post())
		}
	}
	return reply(nfs3OK, &pre, post())
}

// setSize truncates regular file p to size through the descriptor cache.
func (h *call) setSize(b *billyFS, p string, a server.Attr, size uint64) error {
	switch {
	case a.IsDir():
		return server.E("setattr", server.KindIsDir, p, nil)
	case !a.Mode.IsRegular():
		return server.E("setattr", server.KindInvalid, p, nil)
	case size > math.MaxInt64:
		return server.E("setattr", server.KindTooLarge, p, nil)
	}
	e, err := h.s.fds.acquire(h.ctx(b), p, a.Ino, true)
	if err != nil {
		return err
	}
	defer h.s.fds.release(e)
	if err := e.f.Truncate(int64(size)); err != nil {
		return err
	}
	e.dirty.Store(true)
	return nil
}

// ownMknod answers MKNOD (RFC 1813 3.3.11): a FIFO or a socket node is made
// by the core as the caller; a character or block device is refused there
// (NFS3ERR_PERM, EPERM on the client, as mknod(2) without CAP_MKNOD); the
// other types never get here (checkCall answers BADTYPE). Attributes other
// than the mode are applied after, as the caller.
func (h *call) ownMknod(body []byte) []byte {
	r := h.r
	x := newXDRReader(body)
	x.off = r.argsOff
	fh := x.opaque(maxHandleOpaque)
	name := string(x.opaque(maxNameLen))
	typ := x.uint32()
	var kind fs.FileMode
	switch typ {
	case 3:
		kind = fs.ModeDevice
	case 4:
		kind = fs.ModeDevice | fs.ModeCharDevice
	case 6:
		kind = fs.ModeSocket
	case 7:
		kind = fs.ModeNamedPipe
	}
	s := decodeSattr3(x)
	fail := func(st uint32) []byte {
		return h.replyEnd(h.appendWcc(h.replyStart(r, st), nil, nil))
	}
	if !x.ok || s.badTime {
		return fail(nfs3ErrInval)
	}
	if kind == 0 {
		return fail(nfs3ErrBadType)
	}
	b, dir, err := h.resolveHandle(fh)
	if err != nil {
		return fail(status(r, err))
	}
	p := server.Join(dir, name)
	var perm fs.FileMode
	if s.mode != nil {
		perm = server.PermOf(*s.mode)
	}
	ctx := h.ctx(b)
	h.invalidate()
	a, err := h.s.fsys.Mknod(ctx, p, kind|perm)
	if err != nil {
		return fail(status(r, err))
	}
	s.mode = nil
	if sa := s.core(); !setAttrEmpty(sa) || s.size != nil {
		if s.size != nil {
			n := int64(min(*s.size, math.MaxInt64))
			sa.Size = &n // the core refuses a size for a node that is no regular file
		}
		if a, err = h.s.fsys.SetAttr(ctx, p, sa); err != nil {
			return fail(status(r, err))
		}
	}
	h.remember(p, a)
	nfh := h.handleOf(b, p)
	if len(nfh) == 0 {
		return fail(nfs3ErrServerFault)
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
