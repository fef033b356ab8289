package ninep_test

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/hugelgupf/p9/linux"
)

// raw is a hand-driven 9P2000.L connection for what p9's client cannot send
// (xattrs, Tgetlock, Tauth, Tflush, pipelined attaches, a torn Twrite).
type raw struct {
	t  *testing.T
	c  net.Conn
	br *bufio.Reader
}

const (
	tLerror      = 7
	tStatfs      = 8
	tLopen       = 12
	tLcreate     = 14
	tGetattr     = 24
	tXattrwalk   = 30
	tXattrcreate = 32
	tReaddir     = 40
	tLock        = 52
	tGetlock     = 54
	tVersion     = 100
	tAuth        = 102
	tAttach      = 104
	tFlush       = 108
	tWalk        = 110
	tRead        = 116
	tWrite       = 118
	tClunk       = 120
	noFid        = 0xFFFFFFFF
)

func dialRaw(t *testing.T, network, addr string) *raw {
	t.Helper()
	c, err := net.Dial(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(20 * time.Second))
	return &raw{t: t, c: c, br: bufio.NewReader(c)}
}

// msg encodes a message: uint8/uint16/uint32/uint64 fields, strings as s, []byte
// appended verbatim.
func msg(typ uint8, tag uint16, fields ...any) []byte {
	b := []byte{0, 0, 0, 0, typ}
	b = binary.LittleEndian.AppendUint16(b, tag)
	for _, f := range fields {
		switch v := f.(type) {
		case uint8:
			b = append(b, v)
		case uint16:
			b = binary.LittleEndian.AppendUint16(b, v)
		case uint32:
			b = binary.LittleEndian.AppendUint32(b, v)
		case uint64:
			b = binary.LittleEndian.AppendUint64(b, v)
		case string:
			b = binary.LittleEndian.AppendUint16(b, uint16(len(v)))
			b = append(b, v...)
		case []byte:
			b = append(b, v...)
		default:
			panic(fmt.Sprintf("msg: field type %T", f))
		}
	}
	binary.LittleEndian.PutUint32(b, uint32(len(b)))
	return b
}

func (r *raw) send(b []byte) {
	r.t.Helper()
	if _, err := r.c.Write(b); err != nil {
		r.t.Fatalf("send: %v", err)
	}
}

// recv reads one reply.
func (r *raw) recv() (typ uint8, tag uint16, body []byte) {
	r.t.Helper()
	var hdr [7]byte
	if _, err := io.ReadFull(r.br, hdr[:]); err != nil {
		r.t.Fatalf("recv: %v", err)
	}
	size := binary.LittleEndian.Uint32(hdr[:])
	body = make([]byte, size-7)
	if _, err := io.ReadFull(r.br, body); err != nil {
		r.t.Fatalf("recv body: %v", err)
	}
	return hdr[4], binary.LittleEndian.Uint16(hdr[5:]), body
}

// call sends one request and returns its reply body, or the errno of an Rlerror.
func (r *raw) call(b []byte) ([]byte, error) {
	r.t.Helper()
	r.send(b)
	typ, tag, body := r.recv()
	if want := binary.LittleEndian.Uint16(b[5:]); tag != want {
		r.t.Fatalf("reply tag %d, want %d", tag, want)
	}
	if typ == tLerror {
		return nil, linux.Errno(binary.LittleEndian.Uint32(body))
	}
	if typ != b[4]+1 {
		r.t.Fatalf("reply type %d to %d", typ, b[4])
	}
	return body, nil
}

// mustCall is call for a request that must succeed: it returns the reply body.
func (r *raw) mustCall(b []byte) []byte {
	r.t.Helper()
	body, err := r.call(b)
	if err != nil {
		r.t.Fatalf("request %d: %v", b[4], err)
	}
	return body
}

// version negotiates plain 9P2000.L and returns the msize granted.
func (r *raw) version(msize uint32) uint32 {
	r.t.Helper()
	body, err := r.call(msg(tVersion, 0xFFFF, msize, "9P2000.L"))
	if err != nil {
		r.t.Fatalf("version: %v", err)
	}
	got := binary.LittleEndian.Uint32(body)
	if v := string(body[6:]); v != "9P2000.L" {
		r.t.Fatalf("Rversion %q, want 9P2000.L", v)
	}
	return got
}

func (r *raw) attach(tag uint16, fid uint32, aname string, nuname uint32) error {
	_, err := r.call(msg(tAttach, tag, fid, uint32(noFid), "", aname, nuname))
	return err
}

func (r *raw) walk(fid, newfid uint32, names ...string) error {
	f := []any{fid, newfid, uint16(len(names))}
	for _, n := range names {
		f = append(f, n)
	}
	_, err := r.call(msg(tWalk, 1, f...))
	return err
}
