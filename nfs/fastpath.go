package nfs

import (
	"encoding/binary"
	"errors"
	"io"
	"io/fs"

	"github.com/semfs/semfs/server"
)

// status is the nfsstat3 for a failed call: the one recorded on r, else the
// core error's, else SERVERFAULT.
func status(r *request, err error) uint32 {
	if r.override != 0 {
		return r.override
	}
	var se *server.Error
	if errors.As(err, &se) {
		_, st := toNFS(se.Kind)
		return st
	}
	return nfs3ErrServerFault
}

// resolveStat resolves a handle and lstats what it names: the first step of
// every answer that needs the file's attributes.
func (h *call) resolveStat(fh []byte) (*billyFS, string, server.Attr, error) {
	b, p, err := h.resolveHandle(fh)
	if err != nil {
		return nil, "", server.Attr{}, err
	}
	a, err := h.lstat(p)
	return b, p, a, err
}

func (h *call) fastGetattr(fh []byte) []byte {
	r := h.r
	_, _, a, err := h.resolveStat(fh)
	if err != nil {
		return h.replyEnd(h.replyStart(r, status(r, err)))
	}
	return h.replyEnd(appendFattr(h.replyStart(r, nfs3OK), a, h.s.fsid))
}

// sendFileMin is the smallest READ whose data is sent by sendfile (fastRead):
// below it, the copy costs less than sendfile's two extra system calls (the
// page-cache check, the header's own send).
const sendFileMin = 16 << 10

func (h *call) fastRead(fh []byte, off uint64, count uint32) []byte {
	r := h.r
	fail := func(st uint32) []byte { return h.failReply(r, st) }
	b, p, a, err := h.resolveStat(fh)
	if err != nil {
		return fail(status(r, err))
	}
	switch {
	case a.IsDir():
		return fail(nfs3ErrIsDir)
	case !a.Mode.IsRegular():
		return fail(nfs3ErrInval) // a symlink is never read through
	}
	e, err := h.s.fds.acquire(h.ctx(b), p, a.Ino, false)
	if err != nil {
		return fail(status(r, err))
	}
	defer h.s.fds.release(e)
	count = min(count, maxTransfer)
	n := 0
	if off < uint64(a.Size) {
		n = int(min(uint64(count), uint64(a.Size)-off))
	}
	out := appendPostOp(h.replyStart(r, nfs3OK), &a, h.s.fsid)
	hdr := len(out)
	h.s.maybePanic("read")
	if h.inline {
		h.s.maybeHold("read inline")
	} else {
		h.s.maybeHold("read")
	}
	if n >= sendFileMin {
		// Most of a large READ's cost was copying: the page cache into the
		// reply, the reply into the socket. Sent from the page cache by
		// sendfile when it is all there (replyFile), it costs neither.
		head := putReadHead(append(out, make([]byte, 12)...), hdr, n, off+uint64(n) >= uint64(a.Size))
		h.out = head
		pad := int(pad4(uint32(n))) - n
		binary.BigEndian.PutUint32(head, uint32(len(head)-4+n+pad)|lastFragment)
		ok, short, err := h.c.replyFile(head, e.f, int64(off), n, pad)
		if ok {
			h.s.maybeHold("read sent")
			if short {
				h.s.log.Warn("READ: the file was cut short while it was sent; zeros sent for the rest", "path", p, "offset", off, "count", n)
			} else if err != nil {
				h.s.log.Debug("READ: sending the data failed; connection closed", "path", p, "err", err)
			}
			return answeredLater()
		}
	}
	out = grow(out, hdr+12+int(pad4(uint32(n))))
	got := 0
	eof := false
	if n > 0 {
		dst := out[hdr+12 : hdr+12+n]
		if h.inline {
			var cached bool
			if got, cached, err = e.f.ReadAtCached(dst, int64(off)); !cached {
				return nil // the caller reads it where it may wait (answerInline)
			}
		} else {
			got, err = e.f.ReadAt(dst, int64(off))
		}
		if err != nil && err != io.EOF {
			r.override = 0
			_ = pathError(r, "read", p, err)
			return fail(r.override)
		}
		eof = err == io.EOF
	}
	if off+uint64(got) >= uint64(a.Size) {
		eof = true
	}
	out = putReadHead(out, hdr, got, eof)[:hdr+12+got]
	for len(out)%4 != 0 {
		out = append(out, 0)
	}
	return h.replyEnd(out)
}

func (h *call) fastWrite(fh []byte, off uint64, stable uint32, data []byte) []byte {
	r := h.r
	fail := func(st uint32) []byte {
		return h.replyEnd(append(h.replyStart(r, st), 0, 0, 0, 0, 0, 0, 0, 0)) // wcc_data: none
	}
	b, p, pre, err := h.resolveStat(fh)
	if err != nil {
		return fail(status(r, err))
	}
	switch {
	case pre.IsDir():
		return fail(nfs3ErrIsDir)
	case !pre.Mode.IsRegular():
		return fail(nfs3ErrInval) // a symlink is never written through
	case off > 1<<62:
		return fail(nfs3ErrFBig)
	}
	defer h.invalidate()
	e, err := h.s.fds.acquire(h.ctx(b), p, pre.Ino, true)
	if err != nil {
		return fail(status(r, err))
	}
	defer h.s.fds.release(e)
	h.s.maybePanic("write")
	n, err := e.f.WriteAt(data, int64(off))
	if n > 0 {
		e.dirty.Store(true)
		if pre.Mode&(fs.ModeSetuid|fs.ModeSetgid) != 0 {
			e.f.DropPrivsAfterWrite(h.ctx(b), pre) // as nfsd's write as the caller would
		}
	}
	if err != nil {
		r.override = 0
		_ = pathError(r, "write", p, err)
		return fail(r.override)
	}
	committed := uint32(stableUnstable)
	if stable != stableUnstable {
		// Acknowledge FILE_SYNC only for data on disk.
		e.dirty.Store(false)
		if err := e.f.Sync(); err != nil {
			e.dirty.Store(true)
			h.s.log.Error("WRITE: sync failed", "path", p, "err", err)
			return fail(nfs3ErrIO)
		}
		committed = 2 // FILE_SYNC: fsync wrote data and metadata
	}
	post, err := e.f.Stat()
	out := h.replyStart(r, nfs3OK)
	// wcc_data: pre_op_attr (size, mtime, ctime) then post_op_attr
	out = appendUint32(out, 1)
	out = binary.BigEndian.AppendUint64(out, uint64(pre.Size))
	out = appendTime(out, pre.Mtime)
	out = appendTime(out, pre.Ctime)
	if err == nil {
		out = appendPostOp(out, &post, h.s.fsid)
	} else {
		out = appendPostOp(out, nil, h.s.fsid)
	}
	out = appendUint32(out, uint32(n))
	out = appendUint32(out, committed)
	out = append(out, h.s.verf[:]...)
	if committed == stableUnstable && err == nil && !h.worker {
		h.noteWriteback(p, pre.Ino, int64(off), int64(n), post.Size)
	}
	return h.replyEnd(out)
}

// fastReaddirplus lists a directory page with attributes and handles. Cookies
// and verifiers are READDIR's (".": 0, "..": 1, entry i: i+2; a verifier
// names a snapshot in the dirCache), so a client may switch between the two. Pages are filled to the client's dircount and maxcount by the real
// encoded sizes, and the entries' handles
// come from the listing's own attributes, recorded in one handle-map
// transaction, instead of a stat per entry.
func (h *call) fastReaddirplus(fh []byte, cookie, verf uint64, dircount, maxcount uint32) []byte {
	r := h.r
	fail := func(st uint32) []byte { return h.failReply(r, st) }
	if dircount < 512 || maxcount < 4096 {
		// go-nfs's bounds. TOOSMALL, not JUKEBOX: a hard mount retries JUKEBOX
		// ("try again later") forever.
		return fail(nfs3ErrTooSmall)
	}
	// A reply is never larger than the transfer size FSINFO advertises,
	// whatever the client asks (RFC 1813 lets the server return less).
	dircount, maxcount = min(dircount, maxTransfer), min(maxcount, maxTransfer)
	b, p, a, err := h.resolveStat(fh)
	if err != nil {
		return fail(status(r, err))
	}
	if !a.IsDir() {
		return fail(nfs3ErrNotDir)
	}
	var infos []fs.FileInfo
	if cookie != 0 && verf != 0 {
		if infos = h.s.dirs.get(p, verf); infos == nil {
			// The snapshot is gone (cache bound, restart): go on in a fresh
			// listing under the same verifier rather than fail the client.
			if infos, err = h.s.readDir(h.ctx(b), p); err != nil {
				r.override = 0
				_ = pathError(r, "readdir", p, err)
				return fail(r.override)
			}
			h.s.dirs.put(verf, p, infos)
		}
	} else {
		if infos, err = h.s.readDir(h.ctx(b), p); err != nil {
			r.override = 0
			_ = pathError(r, "readdir", p, err)
			return fail(r.override)
		}
		verf = h.s.dirs.add(p, infos)
	}
	out := appendPostOp(h.replyStart(r, nfs3OK), &a, h.s.fsid)
	out = binary.BigEndian.AppendUint64(out, verf)
	// Room: the reply so far, the end marker and eof, and go-nfs-sized slack.
	room := int(maxcount) - (len(out) - 4) - 8
	dirRoom := int(dircount)
	var inos []uint64
	var nodes []node
	eof := true
	emit := func(name string, ck uint64, fileid uint64, attr *server.Attr, handle []byte) bool {
		nameLen := 4 + int(pad4(uint32(len(name))))
		size := 4 + 8 + nameLen + 8 + 4 + 4
		if attr != nil {
			size += 84
		}
		if handle != nil {
			size += 4 + len(handle)
		}
		if size > room || 8+nameLen+8 > dirRoom {
			return false
		}
		room -= size
		dirRoom -= 8 + nameLen + 8
		out = appendUint32(out, 1) // an entry follows
		out = binary.BigEndian.AppendUint64(out, fileid)
		out = appendOpaque(out, []byte(name))
		out = binary.BigEndian.AppendUint64(out, ck)
		out = appendPostOp(out, attr, h.s.fsid)
		if handle != nil {
			out = appendUint32(out, 1)
			out = appendOpaque(out, handle)
		} else {
			out = appendUint32(out, 0)
		}
		return true
	}
	start := 0
	if cookie == 0 {
		var parentIno uint64
		if p != "" {
			dir, _ := server.Split(p)
			if pa, err := h.lstat(dir); err == nil {
				parentIno = pa.Ino
			}
		}
		emit(".", 0, a.Ino, &a, nil)
		emit("..", 1, parentIno, nil, nil)
	} else {
		start = int(cookie - 1) // the entry after the one whose cookie is cookie (i+2)
		if cookie == 1 {
			start = 0
		}
	}
	for i := start; i < len(infos); i++ {
		fi, ok := infos[i].(*fileInfo)
		if !ok {
			continue
		}
		id := idOf(fi.a)
		handle := encodeHandle(h.s.hm.macs, fileHandle{app: b.appID, ino: id.ino, gen: id.gen})
		if !emit(fi.name, uint64(i+2), fi.a.Ino, &fi.a, handle) {
			eof = false
			break
		}
		inos = append(inos, id.ino)
		nodes = append(nodes, node{parent: a.Ino, gen: id.gen, name: fi.name})
	}
	if err := h.s.hm.putAll(inos, nodes); err != nil {
		h.s.log.Error("recording file handles of a listing", "path", p, "err", err)
	}
	out = appendUint32(out, 0) // no more entries
	if eof {
		out = appendUint32(out, 1)
	} else {
		out = appendUint32(out, 0)
	}
	return h.replyEnd(out)
}

// fastLookup looks name up in a directory. As go-nfs does, "." is the directory
// itself and ".." its parent, refused (ACCES) at the root of the tree.
func (h *call) fastLookup(fh []byte, name string) []byte {
	r := h.r
	fail := func(st uint32) []byte { return h.failReply(r, st) }
	b, p, dir, err := h.resolveStat(fh)
	if err != nil {
		return fail(status(r, err))
	}
	if !dir.IsDir() {
		return fail(nfs3ErrNotDir)
	}
	// Looking a name up searches the directory: nfsd asks MAY_EXEC of it.
	if err := h.s.fsys.CheckAccessOf(h.ctx(b), "lookup", p, dir, server.MayExec); err != nil {
		r.override = 0
		_ = pathError(r, "lookup", p, err)
		return fail(r.override)
	}
	var cp string
	switch name {
	case ".":
		cp = p
	case "..":
		if p == "" {
			return fail(nfs3ErrAcces)
		}
		cp, _ = server.Split(p)
	default:
		cp = server.Join(p, name)
	}
	a, err := h.lstat(cp)
	if err != nil {
		r.override = 0
		_ = pathError(r, "lookup", cp, err)
		return fail(r.override)
	}
	id := idOf(a)
	if name != "." && name != ".." {
		if err := h.s.hm.put(id.ino, node{parent: dir.Ino, gen: id.gen, name: name}); err != nil {
			h.s.log.Error("recording file handle", "path", cp, "err", err)
		}
	}
	out := h.replyStart(r, nfs3OK)
	out = appendOpaque(out, encodeHandle(h.s.hm.macs, fileHandle{app: b.appID, ino: id.ino, gen: id.gen}))
	out = appendPostOp(out, &a, h.s.fsid)
	return h.replyEnd(appendPostOp(out, &dir, h.s.fsid))
}

// ACCESS3 bits (RFC 1813 3.3.4).
const (
	access3Read    = 0x01
	access3Lookup  = 0x02
	access3Modify  = 0x04
	access3Extend  = 0x08
	access3Delete  = 0x10
	access3Execute = 0x20
	access3All     = 0x3f
)

// fastAccess answers ACCESS where the core checks the caller's permissions (a
// root daemon): the bits the kernel grants the caller on the file, mapped as
// Linux's nfsd maps them (a directory's MODIFY, EXTEND and DELETE need write
// and search on it, LOOKUP needs search; a file's EXECUTE needs execute; DELETE
// of a file is decided by its directory, so it is not granted here). Where
// the core checks no caller, every bit asked is granted, as before issue 30
// (go-nfs answered ACCESS there).
func (h *call) fastAccess(fh []byte, want uint32) []byte {
	r := h.r
	fail := func(st uint32) []byte { return h.failReply(r, st) }
	b, p, a, err := h.resolveStat(fh)
	if err != nil {
		return fail(status(r, err))
	}
	ctx := h.ctx(b) // the mount's app too: the policy's rights are the app's (server/view.go)
	if !h.s.fsys.ChecksPermissions(ctx) {
		// The core checks no call of this caller (a daemon not running as
		// root, or uid 0): each call then decides for itself (a write the
		// policy refuses says EROFS), and ACCESS grants every bit asked.
		out := appendPostOp(h.replyStart(r, nfs3OK), &a, h.s.fsid)
		return h.replyEnd(appendUint32(out, want&access3All))
	}
	got, err := h.s.fsys.AccessOf(ctx, p, a, server.MayRead|server.MayWrite|server.MayExec)
	if err != nil {
		r.override = 0
		_ = pathError(r, "access", p, err)
		return fail(r.override)
	}
	rd, wr, ex := got&server.MayRead != 0, got&server.MayWrite != 0, got&server.MayExec != 0
	var grant uint32
	if rd {
		grant |= access3Read
	}
	if a.IsDir() {
		if ex {
			grant |= access3Lookup
		}
		if wr && ex {
			grant |= access3Modify | access3Extend | access3Delete
		}
	} else {
		if wr {
			grant |= access3Modify | access3Extend
		}
		if ex {
			grant |= access3Execute
		}
	}
	out := appendPostOp(h.replyStart(r, nfs3OK), &a, h.s.fsid)
	return h.replyEnd(appendUint32(out, grant&want))
}

// fastCommit makes the file's written data durable (fsync) before it answers.
func (h *call) fastCommit(fh []byte) []byte {
	r := h.r
	fail := func(st uint32) []byte {
		return h.replyEnd(append(h.replyStart(r, st), 0, 0, 0, 0, 0, 0, 0, 0))
	}
	b, p, err := h.resolveHandle(fh)
	if err != nil {
		return fail(status(r, err))
	}
	if !h.resolvedID.isDir && !h.commitInline() && h.commitLater(h.ctx(b), r, p, h.resolvedID) {
		return answeredLater()
	}
	if err := h.s.commit(h.ctx(b), p, h.resolvedID); err != nil {
		h.s.log.Error("COMMIT: sync failed", "path", p, "err", err)
		return fail(nfs3ErrIO)
	}
	h.invalidate()
	a, err := h.lstat(p)
	out := h.replyStart(r, nfs3OK)
	out = appendUint32(out, 0) // no pre-op attributes
	if err == nil {
		out = appendPostOp(out, &a, h.s.fsid)
	} else {
		out = appendPostOp(out, nil, h.s.fsid)
	}
	return h.replyEnd(append(out, h.s.verf[:]...))
}

// fastCreate answers CREATE (RFC 1813 3.3.8): GUARDED and EXCLUSIVE make a
// new file or fail with EXIST, UNCHECKED also opens an existing one. A new
// file then gets the attributes its sattr3 sets, in the order
// a local open and its fchmod, fchown, ftruncate and utimensat would set them,
// each as the caller; an existing one only the size, as Linux's nfsd does
// (differential finding N5: "create a 0644; create a 0755" leaves 0644).
// The reply carries the new file's handle and attributes and the directory's
// post-op attributes (no pre-op).
func (h *call) fastCreate(a callArgs) []byte {
	r := h.r
	// A failure carries the status of its step, replaced by the one the
	// adapter recorded on the call from the core's error.
	fail := func(st uint32) []byte {
		if r.override != 0 {
			st = r.override
		}
		return h.replyEnd(append(h.replyStart(r, st), 0, 0, 0, 0, 0, 0, 0, 0)) // wcc_data: none
	}
	if a.attrs.badTime {
		return fail(nfs3ErrInval)
	}
	b, dir, err := h.resolveHandle(a.fh)
	if err != nil {
		// A name past 255 bytes is refused here too (request.badName:
		// NAMETOOLONG) before anything is looked up.
		return fail(nfs3ErrStale)
	}
	newPath := server.Join(dir, a.name)
	// One core call as the caller (EXCLUSIVE comes here as UNCHECKED,
	// decodeCreateHow; create keeps its verifier and retransmission rules):
	// the kernel decides, and a caller who may not search the directory
	// learns ACCES before whether the name exists (finding N9).
	e, err := h.create(b, newPath)
	if err != nil {
		if server.KindOf(err) == server.KindIsDir {
			// The name is a directory: CREATE says EXIST whatever how
			// asks, as Linux's nfsd does (open(2) would say EISDIR).
			r.override = 0
			return fail(nfs3ErrExist)
		}
		return fail(status(r, err))
	}
	h.s.fds.release(e)
	fh := h.handleOf(b, newPath)
	if st := h.createdAttrs(b, newPath, a.attrs); st != nfs3OK {
		return fail(st)
	}
	out := h.replyStart(r, nfs3OK)
	out = appendUint32(out, 1) // handle follows
	out = appendOpaque(out, fh)
	out = h.appendTryStat(out, newPath)
	out = appendUint32(out, 0) // dir_wcc: no pre-op attributes
	return h.replyEnd(h.appendTryStat(out, dir))
}

// createdAttrs applies a CREATE's sattr3 to the file at p, which the call
// made (h.fresh) or found: all of it to a new file, only the size to an
// existing one. It returns the call's status.
func (h *call) createdAttrs(b *billyFS, p string, s sattr3) uint32 {
	r := h.r
	fresh := h.fresh != 0
	if !fresh && s.size == nil {
		return nfs3OK
	}
	cur, err := h.lstat(p)
	if err != nil {
		return status(r, err)
	}
	ctx := h.ctx(b)
	// Each change forgets the call's cached attributes, so the reply reads the
	// file's again. A create whose sattr3 the new file already matches
	// (libnfs's and Linux's mode 0644, no size) changes nothing here and keeps
	// the attributes create read from the file's descriptor.
	set := func(a server.SetAttr) error {
		h.invalidate()
		_, err := h.s.fsys.SetAttr(ctx, p, a)
		return err
	}
	sa := s.core()
	if fresh {
		// The mode first, and only when it changes anything (the create
		// made the file 0644 under the daemon's umask rules).
		special := fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky
		if sa.Mode != nil && *sa.Mode != cur.Mode&special {
			if err := set(server.SetAttr{Mode: sa.Mode}); err != nil {
				return status(r, err)
			}
		}
		if sa.UID != nil || sa.GID != nil {
			if err := set(server.SetAttr{UID: sa.UID, GID: sa.GID}); err != nil {
				return status(r, err)
			}
		}
	}
	if s.size != nil {
		h.invalidate()
		if err := h.setSize(b, p, cur, *s.size); err != nil {
			return status(r, err)
		}
	}
	if fresh {
		times := server.SetAttr{Atime: sa.Atime, Mtime: sa.Mtime, AtimeNow: sa.AtimeNow, MtimeNow: sa.MtimeNow, OfCreate: true}
		if !setAttrEmpty(times) {
			if err := set(times); err != nil {
				return status(r, err)
			}
		}
	}
	return nfs3OK
}
