package nfs

import (
	"encoding/binary"
	"io/fs"

	"github.com/semfs/semfs/server"
)

// readdirFixed is the part of READDIR3resok that is there whatever the
// listing holds: dir_attributes (a post_op_attr with attributes), the
// cookie verifier, the end of the entry list and eof.
const readdirFixed = 4 + 84 + 8 + 4 + 4

// fastReaddir answers READDIR itself. go-nfs's refuses any count below 1024
// with NFS3ERR_TOOSMALL, even for an empty directory (and before NOTDIR for a
// file), and sizes its reply by a guess of 512 bytes an entry; ganesha and
// Linux's nfsd list as many entries as fit in count (the whole READDIR3resok,
// RFC 1813 3.3.16) and answer TOOSMALL only when not one does. Cookies and
// verifiers are READDIRPLUS's (fastReaddirplus): "." 0, ".." 1, the i-th
// entry i+2, from the same per-verifier snapshot, so a client may switch
// between the two. "." and ".." go out together or not at all, since a
// client resuming after "." would send cookie 0 and start again.
func (h *call) fastReaddir(fh []byte, cookie, verf uint64, count uint32) []byte {
	r := h.r
	fail := func(st uint32) []byte { return h.failReply(r, st) }
	count = min(count, maxTransfer)
	b, p, a, err := h.resolveStat(fh)
	if err != nil {
		return fail(status(r, err))
	}
	if !a.IsDir() {
		return fail(nfs3ErrNotDir)
	}
	listFail := func(err error) []byte {
		r.override = 0
		_ = pathError(r, "readdir", p, err)
		return fail(r.override)
	}
	var infos []fs.FileInfo
	if cookie != 0 && verf != 0 {
		if infos = h.s.dirs.get(p, verf); infos == nil {
			// The snapshot is gone: go on in a fresh listing under the same
			// verifier, as fastReaddirplus does.
			if infos, err = h.s.readDir(h.ctx(b), p); err != nil {
				return listFail(err)
			}
			h.s.dirs.put(verf, p, infos)
		}
	} else {
		if infos, err = h.s.readDir(h.ctx(b), p); err != nil {
			return listFail(err)
		}
		verf = h.s.dirs.add(p, infos)
	}
	room := int(count) - readdirFixed
	entryLen := func(name string) int { return 4 + 8 + 4 + int(pad4(uint32(len(name)))) + 8 }
	out := appendPostOp(h.replyStart(r, nfs3OK), &a, h.s.fsid)
	out = binary.BigEndian.AppendUint64(out, verf)
	emit := func(name string, ck, fileid uint64) {
		room -= entryLen(name)
		out = appendUint32(out, 1) // an entry follows
		out = binary.BigEndian.AppendUint64(out, fileid)
		out = appendOpaque(out, []byte(name))
		out = binary.BigEndian.AppendUint64(out, ck)
	}
	emitted, eof := 0, true
	start := 0
	if cookie == 0 {
		if room < entryLen(".")+entryLen("..") {
			return fail(nfs3ErrTooSmall)
		}
		var parentIno uint64
		if p != "" {
			dir, _ := server.Split(p)
			if pa, err := h.lstat(dir); err == nil {
				parentIno = pa.Ino
			}
		}
		emit(".", 0, a.Ino)
		emit("..", 1, parentIno)
		emitted = 2
	} else if cookie > 1 {
		start = int(min(cookie-1, uint64(len(infos))))
	}
	for i := start; i < len(infos); i++ {
		fi, ok := infos[i].(*fileInfo)
		if !ok {
			continue
		}
		if entryLen(fi.name) > room {
			eof = false
			break
		}
		emit(fi.name, uint64(i+2), fi.a.Ino)
		emitted++
	}
	if emitted == 0 && !eof {
		return fail(nfs3ErrTooSmall) // not even the next entry fits
	}
	out = appendUint32(out, 0) // no more entries
	if eof {
		out = appendUint32(out, 1)
	} else {
		out = appendUint32(out, 0)
	}
	return h.replyEnd(out)
}
