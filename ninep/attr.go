package ninep

import (
	"io/fs"
	"time"

	"github.com/hugelgupf/p9/p9"
	"github.com/semfs/semfs/server"
)

// blockSize is the st_blksize reported to clients: the unit Linux's v9fs uses to
// size its reads when no iounit is given.
const blockSize = 4096

// attrMask is what toAttr fills: everything but btime, gen and data_version,
// which the core does not know.
var attrMask = p9.AttrMask{
	Mode: true, NLink: true, UID: true, GID: true, RDev: true, ATime: true,
	MTime: true, CTime: true, INo: true, Size: true, Blocks: true,
}

// modeOf converts a core mode to the st_mode bits 9P2000.L carries.
func modeOf(m fs.FileMode) p9.FileMode {
	pm := p9.ModeFromOS(m)
	if m&fs.ModeSetuid != 0 {
		pm |= 0o4000
	}
	if m&fs.ModeSetgid != 0 {
		pm |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		pm |= p9.Sticky
	}
	return pm
}

// kindOf is the file type of a, as p9 keeps a fid's.
func kindOf(a server.Attr) p9.FileMode { return modeOf(a.Mode).FileType() }

// qidOf identifies a file to the client. Path is the inode. Version follows a
// regular file's mtime and size (as QEMU's server does), so that a Linux client
// with cache=loose sees a file another protocol rewrote as a new version; it is
// 0 for directories and other files, whose identity must stay put.
func qidOf(a server.Attr) p9.QID {
	m := modeOf(a.Mode)
	q := p9.QID{Type: m.QIDType(), Path: a.Ino}
	if a.Mode.IsRegular() {
		q.Version = uint32(a.Mtime.Unix()) ^ uint32(a.Size<<8)
	}
	return q
}

// toAttr converts core attributes to a 9P2000.L getattr reply.
func toAttr(a server.Attr) p9.Attr {
	ts := func(t time.Time) (uint64, uint64) { return uint64(t.Unix()), uint64(t.Nanosecond()) }
	out := p9.Attr{
		Mode:      modeOf(a.Mode),
		UID:       p9.UID(a.UID),
		GID:       p9.GID(a.GID),
		NLink:     p9.NLink(a.Nlink),
		RDev:      p9.Dev(a.Rdev),
		Size:      uint64(a.Size),
		BlockSize: blockSize,
		Blocks:    uint64(a.Blocks),
	}
	out.ATimeSeconds, out.ATimeNanoSeconds = ts(a.Atime)
	out.MTimeSeconds, out.MTimeNanoSeconds = ts(a.Mtime)
	out.CTimeSeconds, out.CTimeNanoSeconds = ts(a.Ctime)
	return out
}

// dirType is the d_type Linux's v9fs passes straight to getdents (DT_*), not the
// QID type byte that p9's own helpers put there.
func dirType(m fs.FileMode) uint8 {
	switch {
	case m.IsDir():
		return 4 // DT_DIR
	case m&fs.ModeSymlink != 0:
		return 10 // DT_LNK
	case m&fs.ModeNamedPipe != 0:
		return 1 // DT_FIFO
	case m&fs.ModeSocket != 0:
		return 12 // DT_SOCK
	case m&fs.ModeCharDevice != 0:
		return 2 // DT_CHR
	case m&fs.ModeDevice != 0:
		return 6 // DT_BLK
	}
	return 8 // DT_REG
}

// toSetAttr converts a 9P2000.L setattr into the core's. ctime cannot be set on
// Linux and changes by itself with any other change, so its bit is ignored.
func toSetAttr(valid p9.SetAttrMask, attr p9.SetAttr) server.SetAttr {
	var s server.SetAttr
	if valid.Permissions {
		m := perm(attr.Permissions)
		s.Mode = &m
	}
	if valid.UID && attr.UID.Ok() {
		u := uint32(attr.UID)
		s.UID = &u
	}
	if valid.GID && attr.GID.Ok() {
		g := uint32(attr.GID)
		s.GID = &g
	}
	if valid.Size {
		n := int64(attr.Size)
		s.Size = &n
	}
	// P9_ATTR_ATIME without P9_ATTR_ATIME_SET means "now" (utimensat UTIME_NOW).
	if valid.ATime {
		if valid.ATimeNotSystemTime {
			t := time.Unix(int64(attr.ATimeSeconds), int64(attr.ATimeNanoSeconds))
			s.Atime = &t
		} else {
			s.AtimeNow = true
		}
	}
	if valid.MTime {
		if valid.MTimeNotSystemTime {
			t := time.Unix(int64(attr.MTimeSeconds), int64(attr.MTimeNanoSeconds))
			s.Mtime = &t
		} else {
			s.MtimeNow = true
		}
	}
	return s
}

// setAttrEmpty reports whether s changes nothing.
func setAttrEmpty(s server.SetAttr) bool {
	return s.Mode == nil && s.UID == nil && s.GID == nil && s.Size == nil &&
		s.Atime == nil && s.Mtime == nil && !s.AtimeNow && !s.MtimeNow
}
