package nfs

import (
	"encoding/binary"
	"io/fs"
	"time"

	"github.com/semfs/semfs/server"
	"golang.org/x/sys/unix"
)

// Encoding replies (RFC 5531 accepted replies, RFC 1813 results) into the
// connection's reusable buffer.

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

// failBodyLen is the size of an NFSv3 failure result's body with no attributes
// (RFC 1813: post_op_attr, wcc_data or nothing), by procedure.
func failBodyLen(proc uint32) int {
	switch proc {
	case 1: // GETATTR
		return 0
	case procSetattr, procWrite, procCreate, procMkdir, procSymlink, procMknod, procRemove, procRmdir, procCommit:
		return 8 // wcc_data
	case procRename:
		return 16 // two wcc_data
	case procLink:
		return 12 // post_op_attr + wcc_data
	}
	return 4 // post_op_attr: LOOKUP, ACCESS, READLINK, READ, READDIR(PLUS), FSSTAT, FSINFO, PATHCONF
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

// appendTryStat appends p's post_op_attr (none when the lstat fails).
func (h *call) appendTryStat(out []byte, p string) []byte {
	a, err := h.lstat(p)
	if err != nil {
		return appendPostOp(out, nil, h.s.fsid)
	}
	return appendPostOp(out, &a, h.s.fsid)
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
