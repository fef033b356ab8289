package nfs

import (
	"bytes"
	"encoding/binary"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/semfs/semfs/server"
	"github.com/willscott/go-nfs-client/nfs/rpc"
	"github.com/willscott/go-nfs-client/nfs/xdr"
)

// callSeeds are call record bodies (no record mark) the fuzz targets start from:
// well-formed calls of several procedures and the hostile ones of issue 11.
func callSeeds() [][]byte {
	hdr := func(prog, vers, proc uint32, unix bool) []byte {
		b := binary.BigEndian.AppendUint32(nil, 7) // xid
		for _, v := range []uint32{0, 2, prog, vers, proc} {
			b = binary.BigEndian.AppendUint32(b, v)
		}
		if unix {
			cred := appendOpaque(binary.BigEndian.AppendUint32(nil, 1), []byte("host"))
			for _, v := range []uint32{1000, 1000, 1, 1000} {
				cred = binary.BigEndian.AppendUint32(cred, v)
			}
			b = appendOpaque(binary.BigEndian.AppendUint32(b, authUnix), cred)
		} else {
			b = binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(b, 0), 0)
		}
		return binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(b, 0), 0)
	}
	fh := bytes.Repeat([]byte{1}, 32)
	u32 := func(b []byte, vs ...uint32) []byte {
		for _, v := range vs {
			b = binary.BigEndian.AppendUint32(b, v)
		}
		return b
	}
	return [][]byte{
		hdr(progNFS, 3, 0, false),
		u32(hdr(progNFS, 3, procGetattr, false), 0xfffffff0, 0, 0), // the 84-byte GETATTR
		appendOpaque(hdr(progNFS, 3, procGetattr, true), fh),
		appendOpaque(appendOpaque(hdr(progNFS, 3, procLookup, true), fh), []byte("name")),
		u32(appendOpaque(hdr(progNFS, 3, procLookup, true), fh), 0xffffffff),
		appendOpaque(u32(appendOpaque(hdr(progNFS, 3, procWrite, true), fh), 0, 0, 4, 0), []byte("data")),
		u32(appendOpaque(appendOpaque(hdr(progNFS, 3, procMknod, true), fh), []byte("dev")), 4, 0, 0, 0, 0, 0, 0, 1, 3),
		u32(appendOpaque(appendOpaque(hdr(progNFS, 3, procCreate, true), fh), []byte("f")), 2, 1, 2),
		appendOpaque(hdr(progMount, 3, mountProcMnt, false), []byte("/@app")),
		u32(hdr(progMount, 3, mountProcMnt, false), 0x7fffffff),
		u32(hdr(progNFS, 3, procSymlink, false)[:24], 1, 0xfffffff0),
	}
}

// FuzzCheckCall: the call checker never panics, any refusal is one well-formed
// reply record to the same xid, and a call it lets through decodes with
// go-nfs's own header decoder (so go-nfs neither refuses it nor leaves the
// connection open) and names no handle beyond NFS3_FHSIZE.
func FuzzCheckCall(f *testing.F) {
	for _, s := range callSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		rec, err := checkCall(body, nil)
		switch {
		case err != nil:
			if rec != nil {
				t.Fatal("both a reply and an error")
			}
			return
		case rec != nil:
			if len(rec) < 16 || binary.BigEndian.Uint32(rec) != uint32(len(rec)-4)|lastFragment {
				t.Fatalf("malformed reply record %x", rec)
			}
			if !bytes.Equal(rec[4:8], body[:4]) {
				t.Fatalf("reply xid %x, call xid %x", rec[4:8], body[:4])
			}
			return
		}
		if len(body) < 40 {
			t.Fatalf("%d-byte call let through (go-nfs refuses under 40 and keeps the connection)", len(body))
		}
		var h rpc.Header
		r := bytes.NewReader(body[8:])
		if err := xdr.Read(r, &h); err != nil {
			t.Fatalf("go-nfs cannot decode a header the checker accepted: %v", err)
		}
		req, _ := parseCall(body, true)
		if h.Prog == progNFS && h.Proc != 0 {
			n, err := xdr.ReadUint32(r)
			if err != nil || n > maxHandleOpaque || int(n) > r.Len() {
				t.Fatalf("proc %d: handle length %d let through (%d bytes left)", h.Proc, n, r.Len())
			}
			if req.argsOff == 0 {
				t.Fatal("parseCall found no arguments in a call the checker accepted")
			}
		}
	})
}

// fuzzServer is one real server on a temporary backing directory, shared by
// every input of a fuzz run (starting one per input would dominate its cost).
func fuzzServer(tb testing.TB) *Server {
	dir := tb.TempDir()
	export := filepath.Join(dir, "export")
	if err := os.Mkdir(export, 0o755); err != nil {
		tb.Fatal(err)
	}
	reg, err := server.OpenRegistry(filepath.Join(dir, "registry.json"))
	if err != nil {
		tb.Fatal(err)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	fsys, err := server.New(export, server.Options{Registry: reg, Logger: quiet})
	if err != nil {
		tb.Fatal(err)
	}
	s, err := NewServer(fsys, Options{StateDir: filepath.Join(dir, "state"), Logger: quiet,
		Limits: server.Limits{IdleTimeout: 5 * time.Second, BodyTimeout: 5 * time.Second}})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		s.Close()
		fsys.Close()
	})
	return s
}

// FuzzRecordStream pushes an arbitrary byte stream through a real server
// connection (net.Pipe), then hangs up: the server must survive it and close
// the connection, leaving no connection behind.
func FuzzRecordStream(f *testing.F) {
	mark := func(b []byte) []byte {
		return append(binary.BigEndian.AppendUint32(nil, uint32(len(b))|lastFragment), b...)
	}
	for _, s := range callSeeds() {
		f.Add(mark(s))
		f.Add(append(mark(s), mark(s)...))
		f.Add(append(binary.BigEndian.AppendUint32(nil, uint32(len(s))), s...)) // no last-fragment bit
		f.Add(mark(s)[:len(s)/2])
	}
	s := fuzzServer(f)
	f.Fuzz(func(t *testing.T, stream []byte) {
		client, conn := net.Pipe()
		s.serveConn(conn, nil)
		drained := make(chan struct{})
		go func() {
			io.Copy(io.Discard, client)
			close(drained)
		}()
		client.SetWriteDeadline(time.Now().Add(5 * time.Second))
		client.Write(stream)
		client.Close()
		<-drained
		if n := s.waitConns(0, 10*time.Second); n != 0 {
			t.Fatalf("%d connections still open after the client hung up", n)
		}
	})
}
