package ninep

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/semfs/semfs/server"
)

// lockedLog is a log sink safe for the connection's goroutines.
type lockedLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

const fuzzMsize = 8192

// fuzzSeeds are request streams worth starting from: each kind of message the
// shim decodes or bounds, well formed and not.
func fuzzSeeds() [][]byte {
	m := func(typ uint8, tag uint16, build func(w *wireWriter)) []byte {
		w := newMessage(typ, tag)
		if build != nil {
			build(w)
		}
		return w.finish()
	}
	walk := func(fid, newfid uint32, names ...string) []byte {
		return m(msgTwalk, 2, func(w *wireWriter) {
			w.u32(fid)
			w.u32(newfid)
			w.b = binary.LittleEndian.AppendUint16(w.b, uint16(len(names)))
			for _, n := range names {
				w.str(n)
			}
		})
	}
	read := func(typ uint8, fid uint32, count uint32) []byte {
		return m(typ, 3, func(w *wireWriter) { w.u32(fid); w.u64(0); w.u32(count) })
	}
	cat := func(bs ...[]byte) []byte {
		var out []byte
		for _, b := range bs {
			out = append(out, b...)
		}
		return out
	}
	lcreate := m(msgTlcreate, 4, func(w *wireWriter) { w.u32(2); w.str("f"); w.u32(2); w.u32(0o644); w.u32(0) })
	write := m(msgTwrite, 5, func(w *wireWriter) { w.u32(2); w.u64(0); w.u32(5); w.b = append(w.b, "hello"...) })
	lie := m(msgTwrite, 5, func(w *wireWriter) { w.u32(2); w.u64(0); w.u32(0xFFFFFFFF); w.b = append(w.b, "hello"...) })
	getlock := m(msgTgetlock, 6, func(w *wireWriter) {
		w.u32(2)
		w.u8(0)
		w.u64(0)
		w.u64(0)
		w.u32(1)
		w.str("c")
	})
	xattr := m(msgTxattrcreate, 7, func(w *wireWriter) { w.u32(2); w.str("user.x"); w.u64(1 << 62); w.u32(0) })
	many := make([]string, 17)
	for i := range many {
		many[i] = "d"
	}
	return [][]byte{
		nil,
		cat(walk(1, 2), walk(2, 3, "d"), m(msgTclunk, 9, func(w *wireWriter) { w.u32(2) }), lcreate, write,
			m(50, 6, func(w *wireWriter) { w.u32(3); w.u32(0) })),
		cat(walk(1, 2, "f"), m(msgTlopen, 4, func(w *wireWriter) { w.u32(2); w.u32(0) }), read(msgTread, 2, 0xFFFFFFFF)),
		cat(walk(1, 2), m(msgTlopen, 4, func(w *wireWriter) { w.u32(2); w.u32(0) }), read(msgTreaddir, 2, 1<<20)),
		walk(1, 2, many...),
		cat(walk(1, 2, "d"), lcreate, lie),
		cat(walk(1, 2, "f"), getlock, xattr),
		{0xFF, 0xFF, 0xFF, 0xFF, msgTread, 0, 0},
		{3, 0, 0, 0},
		m(msgTattach, 1, func(w *wireWriter) { w.u32(5); w.u32(noUID); w.b = binary.LittleEndian.AppendUint16(w.b, 60000) }),
		m(msgTversion, 0xFFFF, func(w *wireWriter) { w.u32(1 << 30); w.str("9P2000.L") }),
	}
}

// fuzzPrologue negotiates and attaches fid 1, as every real client starts.
func fuzzPrologue() []byte {
	v := newMessage(msgTversion, noTag)
	v.u32(fuzzMsize)
	v.str("9P2000.L")
	a := newMessage(msgTattach, 1)
	a.u32(1)
	a.u32(noUID)
	a.str("")
	a.str("/")
	a.u32(noUID)
	return append(v.finish(), a.finish()...)
}

// FuzzShimDecoder drives the shim's reader (conn.Read, the decoding and
// bounding every request goes through before p9) over an arbitrary request
// stream, with no p9 behind it, and checks what it would hand p9: never a
// panic (recovered ones are logged), and only messages within the bounds
// (bounds.go): every size within [7, msize], Tread and Treaddir counts within
// the msize, Twalks of at most 16 names.
func FuzzShimDecoder(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add(s)
	}
	// The shim asks the core a few things before p9 sees a request (which
	// extended attributes exist): a bare core over an empty directory.
	fsys, err := server.New(f.TempDir(), server.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Sink: server.SinkFunc(func(context.Context, server.Change) error { return nil })})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { fsys.Close() })
	f.Fuzz(func(t *testing.T, in []byte) {
		// A hang is a finding too: crash with the input, which the fuzzer keeps.
		wd := time.AfterFunc(10*time.Second, func() { panic(fmt.Sprintf("hang on %x", in)) })
		defer wd.Stop()
		logs := &lockedLog{}
		srv := NewServer(fsys, Options{Logger: slog.New(slog.NewTextHandler(logs, nil)), MaxMsize: fuzzMsize})
		srv.noFast = true // no fid tables: nothing waits for p9's replies but the Tversion (below)
		a, b := net.Pipe()
		c := newConn(srv, 1, a)
		var wg sync.WaitGroup
		wg.Add(2)
		go func() {
			defer wg.Done()
			b.Write(append(fuzzPrologue(), in...))
			b.Close()
		}()
		go func() { defer wg.Done(); io.Copy(io.Discard, b) }()
		var out []byte
		buf := make([]byte, 64<<10)
		for {
			n, err := c.Read(buf)
			out = append(out, buf[:n]...)
			if err != nil {
				break
			}
			if v := c.versioning.Load(); v != nil {
				c.versionReplied(v.tag) // as p9's Rversion would (conn.versioning)
			}
			if len(out) > 4*(len(in)+1024) {
				t.Fatalf("the shim handed p9 %d bytes for %d", len(out), len(in))
			}
		}
		a.Close()
		wg.Wait()
		if strings.Contains(logs.String(), "panic") {
			t.Fatalf("panic in the shim:\n%s", logs.String())
		}
		for len(out) >= headerLen {
			size := int(binary.LittleEndian.Uint32(out))
			typ := out[4]
			if size < headerLen || size > fuzzMsize {
				t.Fatalf("handed p9 a message of size %d (type %d)", size, typ)
			}
			if size > len(out) {
				break // the stream ended inside it
			}
			msg := out[:size]
			switch typ {
			case msgTread, msgTreaddir:
				if size >= countOffset+4 {
					if n := binary.LittleEndian.Uint32(msg[countOffset:]); n > fuzzMsize-rreadFixed {
						t.Fatalf("handed p9 a count of %d (type %d)", n, typ)
					}
				}
			case msgTwalk, msgTwalkgetattr:
				if size >= walkNamesOffset+2 {
					if n := binary.LittleEndian.Uint16(msg[walkNamesOffset:]); n > maxWalkElems {
						t.Fatalf("handed p9 a walk of %d names", n)
					}
				}
			}
			out = out[size:]
		}
	})
}
