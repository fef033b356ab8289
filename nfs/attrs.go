package nfs

import (
	"encoding/binary"
	"io/fs"

	"github.com/semfs/semfs/server"
)

// go-nfs v0.0.4 builds every fattr3 with ToFileAttribute, which takes
// shortcuts: atime and ctime are the mtime, space used is the size and fsid is
// 0. A client then never sees a read move atime or a chmod move ctime (make,
// rsync and backup tools decide by ctime), and du reports sizes, not blocks.
// The adapter's own answers encode the real values (appendFattr); for the
// procedures go-nfs still answers (READLINK, MKDIR, SYMLINK, REMOVE, RMDIR,
// RENAME, LINK, FSSTAT, FSINFO, PATHCONF) the adapter remembers the
// attributes it handed go-nfs for the call (request.seen) and the rewriter
// writes the real values over go-nfs's, by fileid, in every fattr3 and wcc
// pre-op attribute of the reply.

// used is the space a file takes on disk, as fattr3.used wants it.
func used(a server.Attr) uint64 { return uint64(max(a.Blocks, 0)) * 512 }

// saw records attributes the adapter hands go-nfs for r (nil r: none).
func (r *request) saw(a server.Attr) {
	if r != nil && r.lib {
		r.seen = append(r.seen, a)
	}
}

// sawAll records a listing's attributes for r.
func (r *request) sawAll(infos []fs.FileInfo) {
	if r == nil || !r.lib {
		return
	}
	for _, fi := range infos {
		if f, ok := fi.(*fileInfo); ok {
			r.seen = append(r.seen, f.a)
		}
	}
}

// fattr3 field offsets (RFC 1813 2.6).
const (
	fattrUsed   = 28
	fattrFsid   = 44
	fattrFileid = 52
	fattrAtime  = 60
	fattrMtime  = 68
	fattrCtime  = 76
	fattrLen    = 84
)

// completeAttrs writes the real atime, ctime, space used and fsid into the
// attributes of go-nfs's reply msg (record body, xid first) to r. A reply it
// cannot walk is left as it is.
func completeAttrs(r *request, msg []byte, fsid uint64) {
	if r.prog != progNFS || r.vers != 3 || !r.lib {
		return
	}
	byIno := make(map[uint64]*server.Attr, len(r.seen))
	for i := range r.seen {
		byIno[r.seen[i].Ino] = &r.seen[i]
	}
	x := newXDRReader(msg)
	_ = x.uint32() // xid
	if x.uint32() != 1 || x.uint32() != 0 {
		return
	}
	_ = x.uint32()
	_ = x.opaque(400)
	if x.uint32() != 0 || !x.ok {
		return
	}
	ok := x.uint32() == nfs3OK
	fattr := func() {
		off := x.off
		x.skip(fattrLen)
		if !x.ok {
			return
		}
		b := msg[off : off+fattrLen]
		binary.BigEndian.PutUint64(b[fattrFsid:], fsid)
		a := byIno[binary.BigEndian.Uint64(b[fattrFileid:])]
		if a == nil {
			return
		}
		binary.BigEndian.PutUint64(b[fattrUsed:], used(*a))
		putTime(b[fattrAtime:], a.Atime.Unix(), a.Atime.Nanosecond())
		putTime(b[fattrMtime:], a.Mtime.Unix(), a.Mtime.Nanosecond())
		putTime(b[fattrCtime:], a.Ctime.Unix(), a.Ctime.Nanosecond())
	}
	postOp := func() {
		if x.uint32() == 1 && x.ok {
			fattr()
		}
	}
	// wcc_data: the pre-op attributes carry no fileid; go-nfs took them from
	// the first lstat of the object, whose size and mtime they repeat.
	wcc := func() {
		if x.uint32() == 1 && x.ok {
			off := x.off
			x.skip(24)
			if x.ok {
				size := binary.BigEndian.Uint64(msg[off:])
				for _, a := range r.seen {
					if uint64(a.Size) == size && uint32(a.Mtime.Unix()) == binary.BigEndian.Uint32(msg[off+8:]) &&
						uint32(a.Mtime.Nanosecond()) == binary.BigEndian.Uint32(msg[off+12:]) {
						putTime(msg[off+16:], a.Ctime.Unix(), a.Ctime.Nanosecond())
						break
					}
				}
			}
		}
		postOp()
	}
	postOpFH := func() {
		if x.uint32() == 1 {
			_ = x.opaque(maxHandleOpaque)
		}
	}
	switch r.proc {
	case procRemove, procRmdir:
		wcc()
	case procReadlink, procFsinfo, procFsstat, procPathconf:
		postOp()
	case procMkdir, procSymlink:
		if ok {
			postOpFH()
			postOp()
		}
		wcc()
	case procRename:
		wcc()
		wcc()
	case procLink:
		postOp()
		wcc()
	}
}

func putTime(b []byte, sec int64, nsec int) {
	binary.BigEndian.PutUint32(b, uint32(sec))
	binary.BigEndian.PutUint32(b[4:], uint32(nsec))
}
