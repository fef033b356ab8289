package ninep

import (
	"encoding/binary"

	"github.com/hugelgupf/p9/p9"
)

// setuid and setgid through Tsetattr. p9 decodes a mode's permission bits
// with a mask of 01777 (its permissionsMask), so chmod 4755 or 2755 from
// v9fs reached the core as 0755 (pjdfstest chmod/00, chmod/12). The
// connection shim reads the mode from the request before p9 does
// (noteSetattrMode) and leaves it on the fid's *file, whose SetAttr puts the
// two bits back (setattrPerm). This needs the shim's fid table, which the
// fast path keeps: on a connection whose table was given up (see makeWait),
// p9's bits are all there is.

// p9SetattrMode is P9_SETATTR_MODE in Tsetattr's valid mask.
const p9SetattrMode = 0x1

// rawModeSet marks a rawMode as noted (the mode itself may be 0).
const rawModeSet = 1 << 31

// noteSetattrMode keeps the mode of the buffered Tsetattr (fid[4] valid[4]
// mode[4] after the header) on its fid's file when it carries setuid or
// setgid.
func (c *conn) noteSetattrMode(size int) {
	const end = headerLen + 12
	if size < end {
		return
	}
	b, err := c.br.Peek(end)
	if err != nil {
		return
	}
	fid := binary.LittleEndian.Uint32(b[headerLen:])
	valid := binary.LittleEndian.Uint32(b[headerLen+4:])
	mode := binary.LittleEndian.Uint32(b[headerLen+8:])
	if valid&p9SetattrMode == 0 || mode&0o6000 == 0 {
		return
	}
	c.fmu.Lock()
	f := c.fids.p9File(fid)
	c.fmu.Unlock()
	if f != nil {
		f.rawMode.Store(mode | rawModeSet)
	}
}

// setattrPerm returns the permission bits of a Tsetattr's mode with the
// setuid and setgid bits the shim saw on the wire, when the mode p9 decoded
// is that very mode less them.
func (f *file) setattrPerm(m p9.FileMode) p9.FileMode {
	raw := f.rawMode.Swap(0)
	if raw&rawModeSet == 0 || p9.FileMode(raw)&0o1777 != m&0o1777 {
		return m
	}
	return m | p9.FileMode(raw&0o6000)
}
