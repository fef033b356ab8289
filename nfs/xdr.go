package nfs

import "encoding/binary"

// xdrReader decodes the few XDR items the record stream needs (RFC 4506) from a
// byte slice. It never panics: once a read runs past the end, ok turns false and
// every later read returns zero values, so a parser checks ok once at the end.
type xdrReader struct {
	b   []byte
	off int
	ok  bool
}

func newXDRReader(b []byte) *xdrReader { return &xdrReader{b: b, ok: true} }

func (r *xdrReader) uint32() uint32 {
	if !r.ok || r.off+4 > len(r.b) {
		r.ok = false
		return 0
	}
	v := binary.BigEndian.Uint32(r.b[r.off:])
	r.off += 4
	return v
}

func (r *xdrReader) uint64() uint64 {
	hi := r.uint32()
	lo := r.uint32()
	return uint64(hi)<<32 | uint64(lo)
}

// opaque reads a variable-length opaque (or string) of at most max bytes.
func (r *xdrReader) opaque(max int) []byte {
	n := r.uint32()
	if !r.ok || n > uint32(max) || r.off+int(pad4(n)) > len(r.b) {
		r.ok = false
		return nil
	}
	v := r.b[r.off : r.off+int(n)]
	r.off += int(pad4(n))
	return v
}

// fixed reads n bytes of fixed-length opaque data.
func (r *xdrReader) fixed(n int) []byte {
	if !r.ok || r.off+int(pad4(uint32(n))) > len(r.b) {
		r.ok = false
		return nil
	}
	v := r.b[r.off : r.off+n]
	r.off += int(pad4(uint32(n)))
	return v
}

// skip advances n bytes.
func (r *xdrReader) skip(n int) {
	if !r.ok || r.off+n > len(r.b) {
		r.ok = false
		return
	}
	r.off += n
}

func pad4(n uint32) uint32 { return (n + 3) &^ 3 }

func appendUint32(b []byte, v uint32) []byte { return binary.BigEndian.AppendUint32(b, v) }

func appendOpaque(b []byte, v []byte) []byte {
	b = appendUint32(b, uint32(len(v)))
	b = append(b, v...)
	for i := len(v); i%4 != 0; i++ {
		b = append(b, 0)
	}
	return b
}
