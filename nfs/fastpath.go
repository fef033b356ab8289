package nfs

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"runtime/debug"
	"time"

	"github.com/semfs/semfs/server"
	"golang.org/x/sys/unix"
)

// The adapter answers every NFSv3 procedure in the record stream (serveFast
// dispatches; this file holds the hot ones and the reply encoding). go-nfs,
// which once answered them, spent most of its time in reflection-based XDR, a
// fresh buffer per READ (zeroed, then copied twice) and a goroutine hand-off
// per reply; its READ was 8x nfs-ganesha's CPU. Here a READ is one pread (or
// sendfile) into a reply buffer reused per connection, and one write. The
// name "fast" stays from when a slower route existed beside it (issue 30).

// fastArgs are a fast-path call's decoded arguments; the slices point into the
// call's record.
type fastArgs struct {
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

// decodeFast decodes the arguments of a call r.fast() accepts. checkCall has
// already bounded every field, so false (arguments it cannot read) is
// answered GARBAGE_ARGS (serveFast).
func decodeFast(r *request, body []byte) (a fastArgs, ok bool) {
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
// with their sattr3, EXCLUSIVE as UNCHECKED with nothing set (billyFS.Create
// keeps its verifier, which parseCall put on the request).
func decodeCreateHow(x *xdrReader, a *fastArgs) bool {
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

// serveFast answers r, whose record body is body: every call r.fast()
// accepts is answered here and nowhere else. It runs on the connection's
// reading goroutine.
//
// GETATTR, LOOKUP, ACCESS and a READ whose data is in the page cache are
// answered there with raw system calls only (answerInline).
func (h *connHandler) serveFast(r *request, body []byte) []byte {
	a, ok := decodeFast(r, body)
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
	return h.answerFast(r, a)
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
func (h *connHandler) answerInline(r *request, a fastArgs) []byte {
	h.inline = true
	defer func() { h.inline = false }()
	return h.answerFast(r, a)
}

// answerFast answers a decoded fast-path call: on the connection's serving
// goroutine, or on one of its workers (workers.go) with the worker's own
// connHandler.
func (h *connHandler) answerFast(r *request, a fastArgs) (rec []byte) {
	defer func() {
		if v := recover(); v != nil {
			h.s.log.Error("panic in NFS fast path; answering SERVERFAULT", "proc", r.proc, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			out := h.replyStart(r, nfs3ErrServerFault)
			rec = h.replyEnd(append(out, make([]byte, failBodyLen(r.proc))...))
		}
	}()
	switch r.proc {
	case procGetattr:
		h.s.maybePanic("getattr")
		return h.fastGetattr(r, a.fh)
	case procRead:
		return h.fastRead(r, a.fh, a.off, a.count)
	case procLookup:
		return h.fastLookup(r, a.fh, a.name)
	case procCommit:
		return h.fastCommit(r, a.fh)
	case procAccess:
		return h.fastAccess(r, a.fh, a.want)
	case procReaddirplus:
		return h.fastReaddirplus(r, a.fh, a.cookie, a.verf, a.dircount, a.maxcount)
	case procWrite:
		return h.fastWrite(r, a.fh, a.off, a.stable, a.data)
	case procReaddir:
		return h.fastReaddir(r, a.fh, a.cookie, a.verf, a.count)
	case procCreate:
		return h.fastCreate(r, a)
	case procSetattr:
		return h.ownSetattr(r, a.body)
	case procMknod:
		return h.ownMknod(r, a.body)
	case procMkdir:
		return h.ownMkdir(r, a.body)
	case procSymlink:
		return h.ownSymlink(r, a.body)
	case procLink:
		return h.ownLink(r, a.body)
	case procRemove, procRmdir:
		return h.ownRemove(r, a.body)
	case procRename:
		return h.ownRename(r, a.body)
	case procNull:
		return h.ownNull(r)
	case procReadlink:
		return h.ownReadlink(r, a.fh)
	case procFsstat:
		return h.ownFsstat(r, a.fh)
	case procFsinfo:
		return h.ownFsinfo(r, a.fh)
	case procPathconf:
		return h.ownPathconf(r, a.fh)
	}
	return h.refuse(r, acceptProcUnavail) // checkCall refuses it first
}

// replyStart begins an accepted reply with an NFS status in the connection's
// reusable buffer.
func (h *connHandler) replyStart(r *request, status uint32) []byte {
	out := h.out[:0]
	out = appendUint32(out, 0) // record mark, set by replyEnd
	out = appendUint32(out, r.xid)
	out = appendUint32(out, 1) // REPLY
	out = appendUint32(out, 0) // MSG_ACCEPTED
	out = appendUint32(out, 0) // verifier AUTH_NONE, empty
	out = appendUint32(out, 0)
	out = appendUint32(out, 0) // SUCCESS
	return appendUint32(out, status)
}

// failReply is a failed call's reply with post_op_attr "none" (RFC 1813
// makes the attributes optional).
func (h *connHandler) failReply(r *request, st uint32) []byte {
	return h.replyEnd(appendPostOp(h.replyStart(r, st), nil, h.s.fsid))
}

func (h *connHandler) replyEnd(out []byte) []byte {
	binary.BigEndian.PutUint32(out, uint32(len(out)-4)|lastFragment)
	h.out = out
	return out
}

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
// every fast-path call that needs the file's attributes.
func (h *connHandler) resolveStat(fh []byte) (*billyFS, string, server.Attr, error) {
	b, p, err := h.resolveHandle(fh)
	if err != nil {
		return nil, "", server.Attr{}, err
	}
	a, err := h.lstat(p)
	return b, p, a, err
}

func (h *connHandler) fastGetattr(r *request, fh []byte) []byte {
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

func (h *connHandler) fastRead(r *request, fh []byte, off uint64, count uint32) []byte {
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
	e, err := h.s.fds.acquire(b.ctx(), p, a.Ino, false)
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

// putReadHead fills READ3resok's count, eof and the data's length word at
// out[hdr:hdr+12], for n bytes of data, and returns out.
func putReadHead(out []byte, hdr, n int, eof bool) []byte {
	binary.BigEndian.PutUint32(out[hdr:], uint32(n))
	var e uint32
	if eof {
		e = 1
	}
	binary.BigEndian.PutUint32(out[hdr+4:], e)
	binary.BigEndian.PutUint32(out[hdr+8:], uint32(n))
	return out
}

func (h *connHandler) fastWrite(r *request, fh []byte, off uint64, stable uint32, data []byte) []byte {
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
	e, err := h.s.fds.acquire(b.ctx(), p, pre.Ino, true)
	if err != nil {
		return fail(status(r, err))
	}
	defer h.s.fds.release(e)
	h.s.maybePanic("write")
	n, err := e.f.WriteAt(data, int64(off))
	if n > 0 {
		e.dirty.Store(true)
		if pre.Mode&(fs.ModeSetuid|fs.ModeSetgid) != 0 {
			e.f.DropPrivsAfterWrite(b.ctx(), pre) // as nfsd's write as the caller would
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

// used is the space a file takes on disk, as fattr3.used wants it.
func used(a server.Attr) uint64 { return uint64(max(a.Blocks, 0)) * 512 }

func appendPostOp(out []byte, a *server.Attr, fsid uint64) []byte {
	if a == nil {
		return appendUint32(out, 0)
	}
	return appendFattr(appendUint32(out, 1), *a, fsid)
}

// appendTime appends t as nfstime3.
func appendTime(out []byte, t time.Time) []byte {
	out = appendUint32(out, uint32(t.Unix()))
	return appendUint32(out, uint32(t.Nanosecond()))
}

// appendFattr encodes fattr3 (RFC 1813 2.6) from the file system's own
// attributes: type, mode with setuid, setgid and sticky, link count, owner,
// size, space used, device, the backing directory's device as fsid, inode,
// atime, mtime and ctime.
func appendFattr(out []byte, a server.Attr, fsid uint64) []byte {
	fi := newFileInfo("", a)
	var typ uint32
	switch m := a.Mode; {
	case m.IsDir():
		typ = 2
	case m&fs.ModeSymlink != 0:
		typ = 5
	case m&fs.ModeCharDevice != 0:
		typ = 4
	case m&fs.ModeDevice != 0:
		typ = 3
	case m&fs.ModeSocket != 0:
		typ = 6
	case m&fs.ModeNamedPipe != 0:
		typ = 7
	default:
		typ = 1
	}
	out = appendUint32(out, typ)
	out = appendUint32(out, uint32(fi.Mode()))
	out = appendUint32(out, fi.sys.Nlink)
	out = appendUint32(out, a.UID)
	out = appendUint32(out, a.GID)
	out = binary.BigEndian.AppendUint64(out, uint64(a.Size))
	out = binary.BigEndian.AppendUint64(out, used(a))
	out = appendUint32(out, unix.Major(a.Rdev))
	out = appendUint32(out, unix.Minor(a.Rdev))
	out = binary.BigEndian.AppendUint64(out, fsid)
	out = binary.BigEndian.AppendUint64(out, a.Ino)
	out = appendTime(out, a.Atime)
	out = appendTime(out, a.Mtime)
	return appendTime(out, a.Ctime)
}

// fastReaddirplus lists a directory page with attributes and handles. Cookies
// and verifiers are READDIR's (".": 0, "..": 1, entry i: i+2; a verifier
// names a snapshot in the dirCache), so a client may switch between the two. Pages are filled to the client's dircount and maxcount by the real
// encoded sizes, and the entries' handles
// come from the listing's own attributes, recorded in one handle-map
// transaction, instead of a stat per entry.
func (h *connHandler) fastReaddirplus(r *request, fh []byte, cookie, verf uint64, dircount, maxcount uint32) []byte {
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
			if infos, err = h.s.readDir(b.ctx(), p); err != nil {
				r.override = 0
				_ = pathError(r, "readdir", p, err)
				return fail(r.override)
			}
			h.s.dirs.put(verf, p, infos)
		}
	} else {
		if infos, err = h.s.readDir(b.ctx(), p); err != nil {
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
func (h *connHandler) fastLookup(r *request, fh []byte, name string) []byte {
	fail := func(st uint32) []byte { return h.failReply(r, st) }
	b, p, dir, err := h.resolveStat(fh)
	if err != nil {
		return fail(status(r, err))
	}
	if !dir.IsDir() {
		return fail(nfs3ErrNotDir)
	}
	// Looking a name up searches the directory: nfsd asks MAY_EXEC of it.
	if err := h.s.fsys.CheckAccess(b.ctx(), "lookup", p, server.MayExec); err != nil {
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
)

// fastAccess answers ACCESS where the core checks the caller's permissions (a
// root daemon): the bits the kernel grants the caller on the file, mapped as
// Linux's nfsd maps them (a directory's MODIFY, EXTEND and DELETE need write
// and search on it, LOOKUP needs search; a file's EXECUTE needs execute; DELETE
// of a file is decided by its directory, so it is not granted here). A daemon
// that checks no caller grants every bit the policy grants (server.FS.Access).
func (h *connHandler) fastAccess(r *request, fh []byte, want uint32) []byte {
	fail := func(st uint32) []byte { return h.failReply(r, st) }
	b, p, a, err := h.resolveStat(fh)
	if err != nil {
		return fail(status(r, err))
	}
	// The mount's app too: the policy's rights are the app's (server/view.go).
	got, err := h.s.fsys.Access(b.ctx(), p, server.MayRead|server.MayWrite|server.MayExec)
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
func (h *connHandler) fastCommit(r *request, fh []byte) []byte {
	fail := func(st uint32) []byte {
		return h.replyEnd(append(h.replyStart(r, st), 0, 0, 0, 0, 0, 0, 0, 0))
	}
	b, p, err := h.resolveHandle(fh)
	if err != nil {
		return fail(status(r, err))
	}
	if !h.resolvedID.isDir && !h.commitInline() && h.commitLater(b.ctx(), r, p, h.resolvedID) {
		return answeredLater()
	}
	if err := h.s.commit(b.ctx(), p, h.resolvedID); err != nil {
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
func (h *connHandler) fastCreate(r *request, a fastArgs) []byte {
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
	bfs, path, err := h.FromHandle(a.fh)
	if err != nil {
		return fail(nfs3ErrStale)
	}
	b := bfs.(*billyFS)
	// A name past 255 bytes is refused by FromHandle (request.badName:
	// NAMETOOLONG) before anything is looked up.
	newFile := append(path, a.name)
	newPath := b.Join(newFile...)
	// One core call as the caller (EXCLUSIVE comes here as UNCHECKED,
	// decodeCreateHow; billyFS.Create keeps its verifier and retransmission
	// rules): the kernel decides, and a caller who may not search the
	// directory learns ACCES before whether the name exists (finding N9).
	f, err := b.Create(newPath)
	if err != nil {
		if server.KindOf(err) == server.KindIsDir {
			// The name is a directory: CREATE says EXIST whatever how
			// asks, as Linux's nfsd does (open(2) would say EISDIR).
			r.override = 0
			return fail(nfs3ErrExist)
		}
		return fail(status(r, err))
	}
	if err := f.Close(); err != nil {
		return fail(nfs3ErrAcces)
	}
	fh := h.ToHandle(b, newFile)
	if st := h.createdAttrs(r, b, newPath, a.attrs); st != nfs3OK {
		return fail(st)
	}
	out := h.replyStart(r, nfs3OK)
	out = appendUint32(out, 1) // handle follows
	out = appendOpaque(out, fh)
	out = h.appendTryStat(out, b, f.Name())
	out = appendUint32(out, 0) // dir_wcc: no pre-op attributes
	return h.replyEnd(h.appendTryStat(out, b, b.Join(path...)))
}

// createdAttrs applies a CREATE's sattr3 to the file at p, which the call
// made (h.fresh) or found: all of it to a new file, only the size to an
// existing one. It returns the call's status.
func (h *connHandler) createdAttrs(r *request, b *billyFS, p string, s sattr3) uint32 {
	fresh := h.fresh.r == r
	if !fresh && s.size == nil {
		return nfs3OK
	}
	cur, err := h.lstat(p)
	if err != nil {
		return status(r, err)
	}
	ctx := b.ctx()
	defer h.invalidate()
	sa := s.core()
	if fresh {
		// The mode first, and only when it changes anything (the create
		// made the file 0644 under the daemon's umask rules).
		special := fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky
		if sa.Mode != nil && *sa.Mode != cur.Mode&special {
			if _, err := h.s.fsys.SetAttr(ctx, p, server.SetAttr{Mode: sa.Mode}); err != nil {
				return status(r, err)
			}
		}
		if sa.UID != nil || sa.GID != nil {
			if _, err := h.s.fsys.SetAttr(ctx, p, server.SetAttr{UID: sa.UID, GID: sa.GID}); err != nil {
				return status(r, err)
			}
		}
	}
	if s.size != nil {
		if err := h.setSize(b, p, cur, *s.size); err != nil {
			return status(r, err)
		}
	}
	if fresh {
		times := server.SetAttr{Atime: sa.Atime, Mtime: sa.Mtime, AtimeNow: sa.AtimeNow, MtimeNow: sa.MtimeNow}
		if !setAttrEmpty(times) {
			if _, err := h.s.fsys.SetAttr(ctx, p, times); err != nil {
				return status(r, err)
			}
		}
	}
	return nfs3OK
}

// appendTryStat appends p's post_op_attr as go-nfs's tryStat makes it (none
// when the lstat fails).
func (h *connHandler) appendTryStat(out []byte, b *billyFS, p string) []byte {
	fi, err := b.Lstat(p)
	if err != nil {
		return appendPostOp(out, nil, h.s.fsid)
	}
	a := fi.(*fileInfo).a
	return appendPostOp(out, &a, h.s.fsid)
}
