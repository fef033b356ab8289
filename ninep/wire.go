package ninep

import (
	"encoding/binary"
	"errors"
)

// 9P2000.L message types the connection shim looks at (Linux include/net/9p/9p.h).
const (
	msgRlerror      = 7
	msgTlopen       = 12
	msgRlopen       = 13
	msgTlcreate     = 14
	msgRlcreate     = 15
	msgTsymlink     = 16
	msgTmknod       = 18
	msgTrename      = 20
	msgTgetattr     = 24
	msgRgetattr     = 25
	msgTsetattr     = 26
	msgTxattrwalk   = 30
	msgTxattrcreate = 32
	msgTreaddir     = 40
	msgTlock        = 52
	msgRlock        = 53
	msgTgetlock     = 54
	msgRgetlock     = 55
	msgTlink        = 70
	msgTmkdir       = 72
	msgTrenameat    = 74
	msgRrenameat    = 75
	msgTunlinkat    = 76
	msgTversion     = 100
	msgTauth        = 102
	msgTattach      = 104
	msgRattach      = 105
	msgTflush       = 108
	msgTwalk        = 110
	msgRwalk        = 111
	msgTread        = 116
	msgRread        = 117
	msgTwrite       = 118
	msgRwrite       = 119
	msgTclunk       = 120
	msgRclunk       = 121
	msgTremove      = 122
	// p9's own extensions (Linux never sends them), which make fids too.
	msgTwalkgetattr = 126
	msgRwalkgetattr = 127
	msgTucreate     = 128
	msgRucreate     = 129
)

const (
	headerLen = 7 // size[4] type[1] tag[2]
	// maxControlMsg bounds the messages the shim buffers whole (Tversion, Tauth,
	// Tattach, Txattr*, Tgetlock): two 16-bit strings plus fixed fields fit.
	maxControlMsg = 4 + 1 + 2 + 4 + 4 + 2 + 65535 + 2 + 65535 + 4 + 64
	noUID         = 0xFFFFFFFF
	noTag         = 0xFFFF
)

var errMalformed = errors.New("ninep: malformed 9P message")

// wireReader decodes the fields of one buffered message.
type wireReader struct {
	b   []byte
	bad bool
}

func (r *wireReader) u16() uint16 {
	if len(r.b) < 2 {
		r.bad = true
		return 0
	}
	v := binary.LittleEndian.Uint16(r.b)
	r.b = r.b[2:]
	return v
}

func (r *wireReader) u8() uint8 {
	if len(r.b) < 1 {
		r.bad = true
		return 0
	}
	v := r.b[0]
	r.b = r.b[1:]
	return v
}

func (r *wireReader) u64() uint64 {
	if len(r.b) < 8 {
		r.bad = true
		return 0
	}
	v := binary.LittleEndian.Uint64(r.b)
	r.b = r.b[8:]
	return v
}

func (r *wireReader) u32() uint32 {
	if len(r.b) < 4 {
		r.bad = true
		return 0
	}
	v := binary.LittleEndian.Uint32(r.b)
	r.b = r.b[4:]
	return v
}

func (r *wireReader) str() string {
	n := int(r.u16())
	if r.bad || len(r.b) < n {
		r.bad = true
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}

// wireWriter encodes one message; finish fills in its size.
type wireWriter struct{ b []byte }

func newMessage(typ uint8, tag uint16) *wireWriter {
	w := &wireWriter{b: make([]byte, 4, 64)}
	w.b = append(w.b, typ)
	w.b = binary.LittleEndian.AppendUint16(w.b, tag)
	return w
}

func (w *wireWriter) u8(v uint8)   { w.b = append(w.b, v) }
func (w *wireWriter) u32(v uint32) { w.b = binary.LittleEndian.AppendUint32(w.b, v) }
func (w *wireWriter) u64(v uint64) { w.b = binary.LittleEndian.AppendUint64(w.b, v) }

func (w *wireWriter) str(s string) {
	w.b = binary.LittleEndian.AppendUint16(w.b, uint16(len(s)))
	w.b = append(w.b, s...)
}

func (w *wireWriter) finish() []byte {
	binary.LittleEndian.PutUint32(w.b, uint32(len(w.b)))
	return w.b
}

// rlerror builds an Rlerror reply.
func rlerror(tag uint16, errno uint32) []byte {
	w := newMessage(msgRlerror, tag)
	w.u32(errno)
	return w.finish()
}
