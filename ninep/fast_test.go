package ninep_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hugelgupf/p9/linux"
	"github.com/hugelgupf/p9/p9"
	"github.com/semfs/semfs/integration/require"
	"github.com/semfs/semfs/ninep"
	"github.com/semfs/semfs/server"
	"github.com/semfs/semfs/server/servertest"
)

const (
	tRemove   = 122
	tRenameat = 74
	tFsync    = 50
	oExcl     = uint32(0o200)
	oRdonly   = uint32(0)
	oWronly   = uint32(1)
	oRdwr     = uint32(2)
	maskAll   = uint64(0x3fff)
	fastMsize = 64 << 10
)

// exchange sends one request and returns its whole reply (type, tag, body), so
// that two servers' replies can be compared byte for byte.
func (r *raw) exchange(b []byte) []byte {
	r.t.Helper()
	r.send(b)
	typ, tag, body := r.recv()
	return append(binary.LittleEndian.AppendUint16([]byte{typ}, tag), body...)
}

// p9Only serves e's core with a second server that answers every request
// through p9 (no fast path), on its own TCP address.
func p9Only(t testing.TB, e *env) (*ninep.Server, string) {
	t.Helper()
	ref := ninep.NewServer(e.fs, ninep.Options{})
	ninep.NoFastPath(ref)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); ref.Serve(ln) }()
	t.Cleanup(func() { ref.Close(); <-done })
	return ref, ln.Addr().String()
}

// TestFastPathAnswersAsP9: the shim answers Tgetattr, Tread and Twrite itself
// (fast.go). The same requests, step by step, go to the same files over a
// connection where it does and one where p9 answers everything; every reply must
// be byte-identical, errors included: unopened fids, the wrong access mode, a
// directory, fids never made, clunked, failed walks, fids reused, a fid a walk
// or a create replaced, counts past the msize and a Twrite whose count lies.
func TestFastPathAnswersAsP9(t *testing.T) {
	e := newEnv(t)
	ref, refAddr := p9Only(t, e)

	content := bytes.Repeat([]byte("semfs fast path "), 10000/16)
	if err := os.WriteFile(filepath.Join(e.export, "f"), content, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(e.export, "d"), 0o755); err != nil {
		t.Fatal(err)
	}

	fast, slow := dialRaw(t, "tcp", e.tcp), dialRaw(t, "tcp", refAddr)
	for _, r := range []*raw{fast, slow} {
		r.version(fastMsize)
		if err := r.attach(1, 1, "@fast", 0); err != nil {
			t.Fatal(err)
		}
	}
	walk := func(fid, newfid uint32, names ...string) []byte {
		f := []any{fid, newfid, uint16(len(names))}
		for _, n := range names {
			f = append(f, n)
		}
		return msg(tWalk, 3, f...)
	}
	steps := []struct {
		name string
		req  []byte
		ok   bool // the reply must not be an Rlerror
		shim bool // the shim answers it (fast path or shim-only fid), not p9
	}{
		{"walk f", walk(1, 2, "f"), true, true},
		{"getattr walked file", msg(tGetattr, 4, uint32(2), maskAll), true, true},
		{"getattr root", msg(tGetattr, 4, uint32(1), maskAll), true, true},
		{"read unopened", msg(tRead, 5, uint32(2), uint64(0), uint32(100)), false, false},
		{"write unopened", msg(tWrite, 5, uint32(2), uint64(0), uint32(3), []byte("abc")), false, false},
		{"open f read-only", msg(tLopen, 6, uint32(2), oRdonly), true, false},
		{"read", msg(tRead, 7, uint32(2), uint64(0), uint32(4096)), true, true},
		{"short read", msg(tRead, 7, uint32(2), uint64(9000), uint32(4096)), true, true},
		{"read past end", msg(tRead, 7, uint32(2), uint64(20000), uint32(100)), true, true},
		{"read count past msize (clamped)", msg(tRead, 7, uint32(2), uint64(0), uint32(fastMsize)), true, true},
		{"read count far past msize (clamped)", msg(tRead, 7, uint32(2), uint64(0), uint32(0xFFFFFFFF)), true, true},
		{"write on read-only fid", msg(tWrite, 8, uint32(2), uint64(0), uint32(5), []byte("semfs")), false, false},
		{"walk f again", walk(1, 4, "f"), true, true},
		{"open f write-only", msg(tLopen, 6, uint32(4), oWronly), true, true},
		{"write same bytes", msg(tWrite, 8, uint32(4), uint64(0), uint32(5), []byte("semfs")), true, true},
		{"read on write-only fid", msg(tRead, 7, uint32(4), uint64(0), uint32(10)), false, false},
		{"getattr after writes", msg(tGetattr, 4, uint32(2), maskAll), true, true},
		{"write count lies", msg(tWrite, 8, uint32(4), uint64(0), uint32(9), []byte("semfs")), false, false},
		{"walk d", walk(1, 3, "d"), true, true},
		{"open d", msg(tLopen, 6, uint32(3), oRdonly), true, false},
		{"read directory fid", msg(tRead, 7, uint32(3), uint64(0), uint32(100)), false, false},
		{"clunk d", msg(tClunk, 9, uint32(3)), true, false},
		{"getattr clunked fid", msg(tGetattr, 4, uint32(3), maskAll), false, false},
		{"getattr never made", msg(tGetattr, 4, uint32(99), maskAll), false, false},
		{"read never made", msg(tRead, 7, uint32(99), uint64(0), uint32(10)), false, false},
		{"failed walk", walk(1, 5, "missing"), false, false},
		{"getattr after failed walk", msg(tGetattr, 4, uint32(5), maskAll), false, false},
		{"walk d again (fid 3 reused)", walk(1, 3, "d"), true, true},
		{"getattr reused fid", msg(tGetattr, 4, uint32(3), maskAll), true, true},
		{"create in d (fid 3 becomes the file)", msg(tLcreate, 10, uint32(3), "new", oRdwr, uint32(0o640), uint32(0)), true, true},
		{"getattr created fid", msg(tGetattr, 4, uint32(3), maskAll), true, true},
		{"write created fid", msg(tWrite, 8, uint32(3), uint64(0), uint32(4), []byte("new!")), true, true},
		{"read created fid", msg(tRead, 7, uint32(3), uint64(0), uint32(100)), true, true},
		{"create on a created fid (p9's EINVAL)", msg(tLcreate, 10, uint32(3), "x", oRdwr, uint32(0o640), uint32(0)), false, false},
		{"read created fid p9 knows", msg(tRead, 7, uint32(3), uint64(0), uint32(100)), true, true},
		// Creates the shim answers, and what it leaves to p9.
		{"clone d", walk(1, 10, "d"), true, true},
		{"exclusive create of an existing name", msg(tLcreate, 10, uint32(10), "new", oRdwr|oExcl, uint32(0o600), uint32(0)), false, true},
		{"create with a name p9 refuses", msg(tLcreate, 10, uint32(10), "..", oRdwr, uint32(0o600), uint32(0)), false, false},
		{"walk f as fid 11", walk(1, 11, "f"), true, true},
		{"create from a file fid", msg(tLcreate, 10, uint32(11), "z", oRdwr, uint32(0o600), uint32(0)), false, true},
		{"walk d as fid 12", walk(1, 12, "d"), true, true},
		{"create two, sticky and setuid asked", msg(tLcreate, 10, uint32(12), "two", oWronly, uint32(0o5640), uint32(0)), true, true},
		{"write two", msg(tWrite, 8, uint32(12), uint64(0), uint32(3), []byte("two")), true, true},
		{"getattr two", msg(tGetattr, 4, uint32(12), maskAll), true, true},
		{"fsync two (p9 learns the created fid)", msg(tFsync, 6, uint32(12), uint32(0)), true, false},
		{"read write-only created fid", msg(tRead, 7, uint32(12), uint64(0), uint32(10)), false, false},
		{"write two, known to p9", msg(tWrite, 8, uint32(12), uint64(3), uint32(1), []byte("!")), true, true},
		{"clunk two, open", msg(tClunk, 9, uint32(12)), true, false},
		{"walk d as fid 13", walk(1, 13, "d"), true, true},
		{"create three", msg(tLcreate, 10, uint32(13), "three", oRdwr|uint32(0o1000), uint32(0o644), uint32(0)), true, true},
		{"write three", msg(tWrite, 8, uint32(13), uint64(0), uint32(5), []byte("three")), true, true},
		{"clunk three", msg(tClunk, 9, uint32(13)), true, true},
		{"getattr clunked three", msg(tGetattr, 4, uint32(13), maskAll), false, false},
		{"write clunked three", msg(tWrite, 8, uint32(13), uint64(0), uint32(1), []byte("x")), false, false},
		{"walk d as fid 14", walk(1, 14, "d"), true, true},
		{"create three again, O_TRUNC", msg(tLcreate, 10, uint32(14), "three", oRdwr|uint32(0o1000), uint32(0o644), uint32(0)), true, true},
		{"walk from a created fid (p9 learns it first)", walk(14, 15), true, true},
		{"clunk the walk", msg(tClunk, 9, uint32(15)), true, true},
		{"clunk three again", msg(tClunk, 9, uint32(14)), true, false},
		// Opens the shim answers, and what it leaves to p9.
		{"walk f as fid 16", walk(1, 16, "f"), true, true},
		{"open f read-write", msg(tLopen, 6, uint32(16), oRdwr), true, true},
		{"read opened fid", msg(tRead, 7, uint32(16), uint64(16), uint32(64)), true, true},
		{"write opened fid", msg(tWrite, 8, uint32(16), uint64(0), uint32(5), []byte("semfs")), true, true},
		{"getattr opened fid", msg(tGetattr, 4, uint32(16), maskAll), true, true},
		{"open it again (p9's EINVAL)", msg(tLopen, 6, uint32(16), oRdonly), false, false},
		{"read after p9 learned it", msg(tRead, 7, uint32(16), uint64(0), uint32(64)), true, true},
		{"fsync it", msg(tFsync, 6, uint32(16), uint32(0)), true, false},
		{"clunk it, open", msg(tClunk, 9, uint32(16)), true, false},
		{"walk f as fid 17", walk(1, 17, "f"), true, true},
		{"open f read-only", msg(tLopen, 6, uint32(17), oRdonly), true, true},
		{"write on read-only opened fid", msg(tWrite, 8, uint32(17), uint64(0), uint32(1), []byte("s")), false, false},
		{"walk f as fid 18", walk(1, 18, "f"), true, true},
		{"open f, then fsync (p9 learns it)", msg(tLopen, 6, uint32(18), oRdonly), true, true},
		{"fsync the opened fid", msg(tFsync, 6, uint32(18), uint32(0)), true, false},
		{"read it, known to p9", msg(tRead, 7, uint32(18), uint64(0), uint32(16)), true, true},
		{"walk f as fid 19", walk(1, 19, "f"), true, true},
		{"open f", msg(tLopen, 6, uint32(19), oRdonly), true, true},
		{"clunk the opened fid", msg(tClunk, 9, uint32(19)), true, true},
		{"read the clunked fid", msg(tRead, 7, uint32(19), uint64(0), uint32(16)), false, false},
		{"walk d as fid 20", walk(1, 20, "d"), true, true},
		{"open a directory (p9's)", msg(tLopen, 6, uint32(20), oRdonly), true, false},
		{"walk f as fid 21", walk(1, 21, "f"), true, true},
		{"open with O_TRUNC (p9's)", msg(tLopen, 6, uint32(21), oRdwr|uint32(0o1000)), true, false},
		{"clone root", walk(1, 6), true, true},
		{"getattr clone", msg(tGetattr, 4, uint32(6), maskAll), true, true},
		{"walk in place to d/new", walk(6, 6, "d", "new"), true, false},
		{"getattr walked in place", msg(tGetattr, 4, uint32(6), maskAll), true, true},
		{"read walked-in-place unopened", msg(tRead, 7, uint32(6), uint64(0), uint32(10)), false, false},
		// A walked-only fid's clunk is the shim's; the fid must then be gone
		// for every request that names it, until its number is reused.
		{"walk d as fid 8", walk(1, 8, "d"), true, true},
		{"clunk walked-only fid", msg(tClunk, 9, uint32(8)), true, true},
		{"getattr clunked walked-only fid", msg(tGetattr, 4, uint32(8), maskAll), false, false},
		{"walk from clunked fid", walk(8, 9, "new"), false, false},
		{"open clunked fid", msg(tLopen, 6, uint32(8), oRdonly), false, false},
		{"renameat into clunked dir fid", msg(tRenameat, 11, uint32(1), "f", uint32(8), "g"), false, false},
		{"clunk clunked fid", msg(tClunk, 9, uint32(8)), false, false},
		{"reuse clunked number", walk(1, 8, "f"), true, true},
		{"getattr reused number", msg(tGetattr, 4, uint32(8), maskAll), true, true},
		{"clunk reused number", msg(tClunk, 9, uint32(8)), true, true},
	}
	// Where the shim answers as Linux and diod do and p9 would not: p9
	// refuses a create in a fid that is not a directory with EINVAL before
	// asking any file of ours (TestAnswersAsLinux).
	asLinux := map[string]linux.Errno{"create from a file fid": linux.ENOTDIR}
	for _, s := range steps {
		before := ninep.FastAnswered(e.srv)
		got, want := fast.exchange(s.req), slow.exchange(s.req)
		if shim := ninep.FastAnswered(e.srv) > before; shim != s.shim {
			t.Errorf("%s: answered by the shim %v, want %v", s.name, shim, s.shim)
		}
		if errno, ok := asLinux[s.name]; ok {
			if len(got) != 7 || got[0] != 7 || binary.LittleEndian.Uint32(got[3:]) != uint32(errno) {
				t.Fatalf("%s: replied %x, want Rlerror %v", s.name, head(got), errno)
			}
			continue
		}
		if !bytes.Equal(got, want) && !sameButStamp(got, want) {
			t.Fatalf("%s: fast path replied (%d bytes)\n  %x\np9 replied (%d bytes)\n  %x", s.name, len(got), head(got), len(want), head(want))
		}
		if isErr := got[0] == 7; isErr == s.ok {
			t.Fatalf("%s: reply %x, want ok=%v", s.name, head(got), s.ok)
		}
	}
	if n := ninep.FastAnswered(ref); n != 0 {
		t.Errorf("reference answered %d requests itself", n)
	}
	for name, want := range map[string]string{"new": "new!", "two": "two!", "three": ""} {
		b, err := os.ReadFile(filepath.Join(e.export, "d", name))
		if err != nil || string(b) != want {
			t.Fatalf("d/%s = %q, %v; want %q", name, b, err, want)
		}
	}
}

// TestFastPathClunkBound: a client that never reuses fid numbers gets at most
// the bound of clunks answered by the shim, then p9's own; every clunked fid
// answers EBADF either way, and a reused number is a live fid again.
func TestFastPathClunkBound(t *testing.T) {
	e := newEnv(t)
	if err := os.WriteFile(filepath.Join(e.export, "f"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := attachFast(t, e)
	const n, bound = 1100, 1024
	var byShim uint64
	for i := range uint32(n) {
		if err := r.walk(1, 100+i, "f"); err != nil {
			t.Fatal(err)
		}
		if _, err := r.call(msg(tStatfs, 2, 100+i)); err != nil { // p9 learns the shim-only fid
			t.Fatal(err)
		}
		before := ninep.FastAnswered(e.srv)
		if _, err := r.call(msg(tClunk, 2, 100+i)); err != nil {
			t.Fatalf("clunk %d: %v", i, err)
		}
		byShim += ninep.FastAnswered(e.srv) - before
	}
	if byShim != bound {
		t.Fatalf("shim answered %d clunks, want the bound %d", byShim, bound)
	}
	for i := range uint32(n) {
		if _, err := r.call(msg(tGetattr, 2, 100+i, maskAll)); err != linux.EBADF {
			t.Fatalf("getattr of clunked fid %d: %v, want EBADF", 100+i, err)
		}
	}
	if err := r.walk(1, 100, "f"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.call(msg(tGetattr, 2, uint32(100), maskAll)); err != nil {
		t.Fatalf("getattr of reused fid: %v", err)
	}
}

// attachFast dials e's server over TCP, negotiates fastMsize and attaches fid 1
// as app "fast".
func attachFast(t *testing.T, e *env) *raw {
	t.Helper()
	r := dialRaw(t, "tcp", e.tcp)
	r.version(fastMsize)
	if err := r.attach(1, 1, "@fast", 0); err != nil {
		t.Fatal(err)
	}
	return r
}

func head(b []byte) []byte { return b[:min(len(b), 48)] }

// sameButStamp reports whether two Rlopen or Rlcreate replies differ only in
// their qid's version, and that only in its low byte: the version holds the
// mtime's seconds (qidOf), so two opens with O_TRUNC or two creates, one by
// each path a moment apart, may stamp the file a second apart (seen under
// make test's load).
func sameButStamp(a, b []byte) bool {
	const rlopen, rlcreate = 13, 15
	if len(a) != len(b) || len(a) < 8 || a[0] != b[0] || (a[0] != rlopen && a[0] != rlcreate) {
		return false
	}
	// type[1] tag[2] qid.type[1] qid.version[4]: the version's low byte is a[4].
	d := int(b[4]) - int(a[4])
	return (d == 1 || d == -255) && bytes.Equal(a[:4], b[:4]) && bytes.Equal(a[5:], b[5:])
}

// TestFastPathForgetsRemovedFid: after Tremove (a clunk that also unlinks) the
// fid is p9's EBADF, not a stale file the shim answers for.
func TestFastPathForgetsRemovedFid(t *testing.T) {
	e := newEnv(t)
	if err := os.WriteFile(filepath.Join(e.export, "gone"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := attachFast(t, e)
	if err := r.walk(1, 2, "gone"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.call(msg(tGetattr, 2, uint32(2), maskAll)); err != nil {
		t.Fatal(err)
	}
	if _, err := r.call(msg(tRemove, 2, uint32(2))); err != nil {
		t.Fatal(err)
	}
	if _, err := r.call(msg(tGetattr, 2, uint32(2), maskAll)); err != linux.EBADF {
		t.Fatalf("getattr of removed fid: %v, want EBADF", err)
	}
	if _, err := os.Lstat(filepath.Join(e.export, "gone")); !os.IsNotExist(err) {
		t.Fatalf("file still there: %v", err)
	}
}

// TestFastPathConcurrentFids: many goroutines share one connection, each making,
// writing, reading back, stat'ing and clunking its own fids while the others do
// the same, so fid numbers are reused all the time. Every byte read must be the
// one its own goroutine wrote. (Run with -race: the shim's fid table is shared
// by p9's goroutines and the receiving one.)
func TestFastPathConcurrentFids(t *testing.T) {
	e := newEnv(t)
	_, root := dial(t, "tcp", e.tcp, "@fast", 0, fastMsize)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 40 {
				if err := fastRoundTrip(root, fmt.Sprintf("g%d-%d", g, i), bytes.Repeat([]byte{byte('a' + g)}, 100+i*997)); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

func fastRoundTrip(root p9.File, name string, data []byte) error {
	_, dir, err := root.Walk(nil)
	if err != nil {
		return err
	}
	f, _, _, err := dir.Create(name, p9.ReadWrite, 0o644, 0, 0)
	if err != nil {
		dir.Close()
		return fmt.Errorf("create %s: %w", name, err)
	}
	if n, err := f.WriteAt(data, 0); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	} else if n != len(data) {
		return fmt.Errorf("write %s: %d bytes of %d", name, n, len(data))
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("clunk %s: %w", name, err)
	}
	_, g, err := root.Walk([]string{name})
	if err != nil {
		return fmt.Errorf("walk %s: %w", name, err)
	}
	defer g.Close()
	_, _, attr, err := g.GetAttr(p9.AttrMaskAll)
	if err != nil {
		return fmt.Errorf("getattr %s: %w", name, err)
	}
	if attr.Size != uint64(len(data)) {
		return fmt.Errorf("getattr %s: size %d, want %d", name, attr.Size, len(data))
	}
	if _, _, err := g.Open(p9.ReadOnly); err != nil {
		return fmt.Errorf("open %s: %w", name, err)
	}
	got := make([]byte, len(data)+10)
	n, err := g.ReadAt(got, 0)
	if err != nil {
		return fmt.Errorf("read %s: %w", name, err)
	}
	if !bytes.Equal(got[:n], data) {
		return fmt.Errorf("read %s: %d bytes, not the %d written", name, n, len(data))
	}
	return nil
}

// TestFastPathWaitsForNothing: while a snapshot holds the core's writes, a
// Twrite the shim would answer waits elsewhere: in p9 for a fid p9 knows, in a
// goroutine of the shim's for a file it created itself (p9 does not know that
// fid); and a read on the same connection is still answered meanwhile ("reads
// go on" holds per mount too). A Tflush of the waiting write is answered after
// the write's own reply.
func TestFastPathWaitsForNothing(t *testing.T) {
	e := newEnv(t)
	for _, name := range []string{"r", "k"} {
		if err := os.WriteFile(filepath.Join(e.export, name), []byte("readable"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := attachFast(t, e)
	if err := r.walk(1, 2); err != nil {
		t.Fatal(err)
	}
	before := ninep.FastAnswered(e.srv)
	if _, err := r.call(msg(tLcreate, 1, uint32(2), "w", oRdwr, uint32(0o644), uint32(0))); err != nil {
		t.Fatal(err)
	}
	if ninep.FastAnswered(e.srv) == before {
		t.Fatal("the create was not the shim's: fid 2 is not one p9 does not know")
	}
	if err := r.walk(1, 3, "r"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.call(msg(tLopen, 1, uint32(3), oRdonly)); err != nil {
		t.Fatal(err)
	}
	if _, err := r.call(msg(tRead, 1, uint32(3), uint64(0), uint32(100))); err != nil { // now cached
		t.Fatal(err)
	}
	openInP9(t, r, 4, "k", oRdwr)
	thaw, frozen := freeze(t, e)
	before = ninep.FastAnswered(e.srv)
	r.send(msg(tWrite, 5, uint32(2), uint64(0), uint32(5), []byte("hello")))
	r.send(msg(tWrite, 8, uint32(4), uint64(0), uint32(4), []byte("KEPT")))
	r.send(msg(tRead, 6, uint32(3), uint64(0), uint32(100)))
	typ, tag, body := r.recv()
	if tag != 6 || typ != tRead+1 || string(body[4:]) != "readable" {
		t.Fatalf("first reply during the freeze: type %d tag %d %q, want the Rread (tag 6)", typ, tag, body)
	}
	flushes := ninep.Flushes(e.srv)
	r.send(msg(tFlush, 9, uint16(5)))
	// The flush must reach p9 while the write it names still waits.
	for deadline := time.Now().Add(20 * time.Second); ninep.Flushes(e.srv) == flushes; {
		if time.Now().After(deadline) {
			t.Fatal("the Tflush never reached p9")
		}
		runtime.Gosched()
	}
	thaw()
	if err := <-frozen; err != nil {
		t.Fatal(err)
	}
	var order []uint16
	for range 3 {
		typ, tag, body = r.recv()
		order = append(order, tag)
		switch tag {
		case 5, 8:
			if typ != tWrite+1 || binary.LittleEndian.Uint32(body) != map[uint16]uint32{5: 5, 8: 4}[tag] {
				t.Fatalf("after the freeze: type %d tag %d %x, want Rwrite", typ, tag, body)
			}
		case 9:
			if typ != tFlush+1 {
				t.Fatalf("after the freeze: type %d tag 9, want Rflush", typ)
			}
		default:
			t.Fatalf("after the freeze: unexpected tag %d", tag)
		}
	}
	if i, j := slices.Index(order, 5), slices.Index(order, 9); i > j {
		t.Fatalf("replies in order %v: the Rflush came before the reply to the write it flushed", order)
	}
	// The read, and the write on the created fid (from a goroutine).
	if got := ninep.FastAnswered(e.srv) - before; got != 2 {
		t.Fatalf("fast path answered %d of the three, want 2", got)
	}
	for name, want := range map[string]string{"w": "hello", "k": "KEPTable"} {
		if b, err := os.ReadFile(filepath.Join(e.export, name)); err != nil || string(b) != want {
			t.Fatalf("%s = %q, %v; want %q", name, b, err, want)
		}
	}
}

// TestFastPathRequestWaitsForP9Open: a request naming a fid whose Tlopen p9 is
// still handling waits for that open's reply (startOpening, awaitNamed). p9
// v0.4.1 marks the fid opened after its open returns, outside the fid's lock,
// while it serves the connection's next requests: a Tread or Treaddir sent
// before the Rlopen found the fid not yet open (EINVAL) or raced with the
// marking (a data race under -race). Here a snapshot holds p9's truncating
// open in the core, so without the wait the pipelined Tread is answered first,
// with an error; with it, the Rlopen comes first and the read succeeds.
func TestFastPathRequestWaitsForP9Open(t *testing.T) {
	e := newEnv(t)
	if err := os.WriteFile(filepath.Join(e.export, "k"), []byte("old bytes"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := attachFast(t, e)
	if err := r.walk(1, 4, "k"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.call(msg(tStatfs, 1, uint32(4))); err != nil { // p9 learns the fid
		t.Fatal(err)
	}
	thaw, frozen := freeze(t, e)
	r.send(msg(tLopen, 7, uint32(4), oRdwr|uint32(0o1000))) // O_TRUNC: p9's, and held by the snapshot
	r.send(msg(tRead, 8, uint32(4), uint64(0), uint32(100)))
	// Without the wait p9 answers the read at once (the fid is not open yet):
	// a reply now is that. A second is thousands of times what p9 takes.
	if err := r.c.SetReadDeadline(time.Now().Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := r.br.Peek(1); err == nil {
		typ, tag, body := r.recv()
		t.Fatalf("a reply while p9's open is held: type %d tag %d %x; the read after the open was answered before it", typ, tag, body)
	} else if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatal(err)
	}
	if err := r.c.SetReadDeadline(time.Time{}); err != nil {
		t.Fatal(err)
	}
	thaw()
	if err := <-frozen; err != nil {
		t.Fatal(err)
	}
	if typ, tag, body := r.recv(); tag != 7 || typ != tLopen+1 {
		t.Fatalf("first reply: type %d tag %d %q, want the Rlopen (tag 7): the read was answered before the open it follows", typ, tag, body)
	}
	if typ, tag, body := r.recv(); tag != 8 || typ != tRead+1 || binary.LittleEndian.Uint32(body) != 0 {
		t.Fatalf("second reply: type %d tag %d %q, want an empty Rread (tag 8) of the truncated file", typ, tag, body)
	}
}

// TestFastPathLeavesColdReadsToP9: a Tread of data not in the page cache is
// p9's (the shim never waits for the disk); once the data is cached the shim
// answers the same read.
func TestFastPathLeavesColdReadsToP9(t *testing.T) {
	e := newEnv(t)
	p := filepath.Join(e.export, "cold")
	data := bytes.Repeat([]byte("0123456789abcdef"), 64<<10) // 1 MiB
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	r := attachFast(t, e)
	openInP9(t, r, 2, "cold", oRdonly)
	read := func(i int) (fast uint64) {
		t.Helper()
		before := ninep.FastAnswered(e.srv)
		body, err := r.call(msg(tRead, 1, uint32(2), uint64(512<<10), uint32(32<<10)))
		if err != nil {
			t.Fatal(err)
		}
		if got := body[4:]; !bytes.Equal(got, data[512<<10:544<<10]) {
			t.Fatalf("read %d: wrong data (%d bytes)", i, len(got))
		}
		return ninep.FastAnswered(e.srv) - before
	}
	// The kernel starts readahead on a RWF_NOWAIT miss, and on a fast disk it
	// can complete before the miss is reported: the read is then answered
	// from the cache, rightly (seen once in CI). So: evicted again, up to five
	// times, one cold read must go to p9; a shim that answered cold reads
	// itself would answer all five.
	cold := false
	for i := 0; i < 5 && !cold; i++ {
		if !servertest.Evict(t, p) {
			require.Environment(t, fmt.Sprintf("the page cache of %s cannot be dropped here (tmpfs?): no cold read to send", p))
		}
		cold = read(i) == 0
	}
	if !cold {
		t.Fatal("the fast path answered five reads of evicted data, want p9 to answer them")
	}
	if got := read(5); got != 1 {
		t.Fatalf("the cached read: fast path answered %d, want 1", got)
	}
	// A fid p9 does not know (opened by the shim): the cold read is answered
	// from a goroutine of the shim's, with the same data.
	if err := r.walk(1, 3, "cold"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.call(msg(tLopen, 1, uint32(3), oRdonly)); err != nil {
		t.Fatal(err)
	}
	if !servertest.Evict(t, p) {
		t.Fatal("the page cache could be dropped once, not twice")
	}
	body, err := r.call(msg(tRead, 1, uint32(3), uint64(256<<10), uint32(32<<10)))
	if err != nil {
		t.Fatal(err)
	}
	if got := body[4:]; !bytes.Equal(got, data[256<<10:288<<10]) {
		t.Fatalf("cold read of a shim-opened fid: wrong data (%d bytes)", len(got))
	}
	if _, err := r.call(msg(tRead, 1, uint32(3), uint64(len(data)), uint32(100))); err != nil {
		t.Fatalf("read at end of file: %v", err)
	}
}

// TestFastPathShimOnlyFids: fids the shim walked without p9 (shimfids.go) behave as
// p9's would once anything but a stat or a clunk names them, across a rename
// of their directory, and fail cleanly (ESTALE) when p9 can no longer walk
// them: their source fid was replaced, or the file went away in between.
func TestFastPathShimOnlyFids(t *testing.T) {
	e := newEnv(t)
	if err := os.MkdirAll(filepath.Join(e.export, "a"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"a/x", "y"} {
		if err := os.WriteFile(filepath.Join(e.export, n), []byte("data of "+n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := attachFast(t, e)
	answered := func() uint64 { return ninep.FastAnswered(e.srv) }
	read := func(fid uint32) string {
		t.Helper()
		if _, err := r.call(msg(tLopen, 1, fid, oRdonly)); err != nil {
			t.Fatalf("open fid %d: %v", fid, err)
		}
		body, err := r.call(msg(tRead, 1, fid, uint64(0), uint32(100)))
		if err != nil {
			t.Fatalf("read fid %d: %v", fid, err)
		}
		return string(body[4:])
	}

	// Walked and stat'ed by the shim alone.
	n0 := answered()
	if err := r.walk(1, 2, "a"); err != nil {
		t.Fatal(err)
	}
	if err := r.walk(1, 3, "a", "x"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.call(msg(tGetattr, 1, uint32(3), maskAll)); err != nil {
		t.Fatal(err)
	}
	if got := answered() - n0; got != 3 {
		t.Fatalf("shim answered %d of walk, walk, getattr; want 3", got)
	}
	// A rename on the connection: p9 learns both shim-only fids first, so fid 3
	// follows its directory as any fid p9 knows does.
	if _, err := r.call(msg(tRenameat, 1, uint32(1), "a", uint32(1), "b")); err != nil {
		t.Fatal(err)
	}
	if got := read(3); got != "data of a/x" {
		t.Fatalf("fid 3 after its directory moved reads %q", got)
	}
	// A walk from a shim-only fid: p9 learns the source first.
	if err := r.walk(1, 4, "b"); err != nil {
		t.Fatal(err)
	}
	if err := r.walk(4, 5, "x"); err != nil {
		t.Fatal(err)
	}
	if got := read(5); got != "data of a/x" {
		t.Fatalf("fid 5 reads %q", got)
	}

	// The source fid replaced (a new attach under fid 1): p9 learns the shim-only fid
	// walked from the old one first, so it stays usable, as it would be in p9.
	if err := r.walk(1, 6, "y"); err != nil {
		t.Fatal(err)
	}
	if err := r.attach(1, 1, "@fast", 0); err != nil {
		t.Fatal(err)
	}
	if got := read(6); got != "data of y" { // open and read are the shim's
		t.Fatalf("fid 6 reads %q", got)
	}
	if _, err := r.call(msg(tStatfs, 1, uint32(6))); err != nil {
		t.Fatalf("statfs of a shim-only fid whose source was replaced: %v", err)
	}
	if _, err := r.call(msg(tClunk, 1, uint32(6))); err != nil {
		t.Fatalf("clunk: %v", err)
	}
	if _, err := r.call(msg(tGetattr, 1, uint32(6), maskAll)); err != linux.EBADF {
		t.Fatalf("getattr of a clunked fid: %v, want EBADF", err)
	}

	// The file gone between the shim's walk and p9's.
	if err := r.walk(1, 7, "y"); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(e.export, "y")); err != nil {
		t.Fatal(err)
	}
	if _, err := r.call(msg(tLopen, 1, uint32(7), oRdonly)); err != linux.ENOENT {
		t.Fatalf("open of a shim-only fid whose file went away: %v, want ENOENT, as p9 says", err)
	}
	if _, err := r.call(msg(tStatfs, 1, uint32(7))); err != linux.ESTALE {
		t.Fatalf("statfs of a shim-only fid whose file went away: %v, want ESTALE", err)
	}

	// A shim-only fid on a number p9 still holds stale (a clunk the shim answered):
	// its clunk leaves the number EBADF, and p9 learning it replaces the stale one.
	if err := r.walk(1, 8); err != nil {
		t.Fatal(err)
	}
	if _, err := r.call(msg(tStatfs, 1, uint32(8))); err != nil { // p9 learns the shim-only fid
		t.Fatal(err)
	}
	if _, err := r.call(msg(tClunk, 1, uint32(8))); err != nil {
		t.Fatal(err)
	}
	if err := r.walk(1, 8, "b", "x"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.call(msg(tClunk, 1, uint32(8))); err != nil {
		t.Fatal(err)
	}
	if _, err := r.call(msg(tGetattr, 1, uint32(8), maskAll)); err != linux.EBADF {
		t.Fatalf("getattr after the shim-only fid's clunk: %v, want EBADF", err)
	}
	if err := r.walk(1, 8, "b", "x"); err != nil {
		t.Fatal(err)
	}
	if got := read(8); got != "data of a/x" {
		t.Fatalf("fid 8 reads %q", got)
	}
}

// TestFastPathCreatedShimOnlyFids: files the shim created itself (shimfids.go, Creates)
// are recorded and attributed like any create, written and clunked by the shim
// with the clunk's update sent; taught to p9 (the walk, then the handed-over
// Tlcreate) before a rename on the connection, and then followed by it;
// kept usable when the directory fid they came from is replaced;
// closed with their update sent when the client goes away; and a create that
// would wait for a snapshot waits in p9 while the connection reads on.
func TestFastPathCreatedShimOnlyFids(t *testing.T) {
	e := newEnv(t)
	if err := os.Mkdir(filepath.Join(e.export, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := attachFast(t, e)
	answered := func() uint64 { return ninep.FastAnswered(e.srv) }
	create := func(r *raw, dir, fid uint32, dirName, name string) {
		t.Helper()
		if err := r.walk(dir, fid, dirName); err != nil {
			t.Fatal(err)
		}
		r.mustCall(msg(tLcreate, 2, fid, name, oRdwr, uint32(0o644), uint32(0)))
	}
	write := func(r *raw, fid uint32, off uint64, s string) {
		t.Helper()
		r.mustCall(msg(tWrite, 3, fid, off, uint32(len(s)), []byte(s)))
	}
	content := func(p string) string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(e.export, p))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}

	// The shim alone: walk, create, write, clunk.
	n0 := answered()
	create(r, 1, 2, "d", "one")
	write(r, 2, 0, "one")
	r.mustCall(msg(tClunk, 4, uint32(2)))
	if got := answered() - n0; got != 4 {
		t.Fatalf("shim answered %d of walk, create, write, clunk; want 4", got)
	}
	if c := e.rec.find(t, server.ChangeCreate, "d/one"); c.App != "fast" {
		t.Fatalf("d/one created by %q, want fast", c.App)
	}
	e.rec.find(t, server.ChangeWrite, "d/one")
	if got := content("d/one"); got != "one" {
		t.Fatalf("d/one = %q", got)
	}

	// A rename on the connection: p9 learns the created fid first and moves it.
	create(r, 1, 3, "d", "two")
	write(r, 3, 0, "two")
	r.mustCall(msg(tRenameat, 5, uint32(1), "d", uint32(1), "e"))
	write(r, 3, 3, "!")
	r.mustCall(msg(tFsync, 6, uint32(3), uint32(0)))
	r.mustCall(msg(tClunk, 4, uint32(3)))
	if got := content("e/two"); got != "two!" {
		t.Fatalf("e/two = %q", got)
	}
	e.rec.find(t, server.ChangeWrite, "e/two")

	// The directory fid it came from replaced: p9 learns the created fid first,
	// so it stays usable; its clunk sends the update.
	create(r, 1, 4, "e", "three")
	write(r, 4, 0, "3")
	if err := r.attach(7, 1, "@fast", 0); err != nil {
		t.Fatal(err)
	}
	if _, err := r.call(msg(tFsync, 6, uint32(4), uint32(0))); err != nil {
		t.Fatalf("fsync of a created fid whose directory fid was replaced: %v", err)
	}
	r.mustCall(msg(tClunk, 4, uint32(4)))
	if got := content("e/three"); got != "3" {
		t.Fatalf("e/three = %q", got)
	}
	e.rec.find(t, server.ChangeWrite, "e/three")

	// The client goes away with a written created file open.
	r2 := attachFast(t, e)
	create(r2, 1, 2, "e", "four")
	write(r2, 2, 0, "four")
	r2.c.Close()
	e.rec.find(t, server.ChangeWrite, "e/four")

	// A snapshot holds the core: the create waits in p9; a getattr is answered
	// meanwhile.
	if err := r.walk(1, 5, "e"); err != nil {
		t.Fatal(err)
	}
	thaw, frozen := freeze(t, e)
	r.send(msg(tLcreate, 7, uint32(5), "five", oRdwr, uint32(0o644), uint32(0)))
	r.send(msg(tGetattr, 8, uint32(1), maskAll))
	if typ, tag, _ := r.recv(); tag != 8 || typ != tGetattr+1 {
		t.Fatalf("first reply during the freeze: type %d tag %d, want the Rgetattr (tag 8)", typ, tag)
	}
	thaw()
	if err := <-frozen; err != nil {
		t.Fatal(err)
	}
	if typ, tag, _ := r.recv(); tag != 7 || typ != tLcreate+1 {
		t.Fatalf("after the freeze: type %d tag %d, want the Rlcreate (tag 7)", typ, tag)
	}
	write(r, 5, 0, "five")
	r.mustCall(msg(tClunk, 4, uint32(5)))
	if got := content("e/five"); got != "five" {
		t.Fatalf("e/five = %q", got)
	}
	e.rec.find(t, server.ChangeWrite, "e/five")
}

// TestFastPathOpenedShimOnlyFids: a file opened by the shim itself (a Tlopen on a
// shim-only fid) keeps what it was written with when p9 must learn it (the walk, then
// the handed-over Tlopen, whose file.Open takes over the shim's open file rather
// than open another), so its clunk sends the write to the index; and no
// descriptor is left behind by any way such a fid ends: clunk, p9 learning it,
// stale, or the client going away.
func TestFastPathOpenedShimOnlyFids(t *testing.T) {
	e := newEnv(t)
	for _, n := range []string{"a", "b"} {
		if err := os.WriteFile(filepath.Join(e.export, n), []byte("data of "+n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fds := func() int {
		ents, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Skip("no /proc/self/fd")
		}
		return len(ents)
	}
	r := attachFast(t, e)
	base := fds()

	// Written through the shim's open, then learned by p9, then clunked by p9.
	if err := r.walk(1, 2, "a"); err != nil {
		t.Fatal(err)
	}
	r.mustCall(msg(tLopen, 1, uint32(2), oRdwr))
	r.mustCall(msg(tWrite, 1, uint32(2), uint64(0), uint32(4), []byte("DATA")))
	r.mustCall(msg(tFsync, 1, uint32(2), uint32(0)))
	r.mustCall(msg(tClunk, 1, uint32(2)))
	e.rec.find(t, server.ChangeWrite, "a")
	if b, err := os.ReadFile(filepath.Join(e.export, "a")); err != nil || string(b) != "DATA of a" {
		t.Fatalf("a = %q, %v", b, err)
	}

	// Unlinked by another client while open, opened as Linux opens (a clone of
	// the file's fid): p9 learns the open file itself, not one opened again by
	// path, so the fid still works, as an open file does.
	if err := os.WriteFile(filepath.Join(e.export, "gone"), []byte("still here"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := r.walk(1, 5, "gone"); err != nil {
		t.Fatal(err)
	}
	r.mustCall(msg(tStatfs, 1, uint32(5))) // p9 learns fid 5, as Linux's dentry fids are
	if err := r.walk(5, 6); err != nil {
		t.Fatal(err)
	}
	r.mustCall(msg(tLopen, 1, uint32(6), oRdwr))
	if err := os.Remove(filepath.Join(e.export, "gone")); err != nil {
		t.Fatal(err)
	}
	r.mustCall(msg(tFsync, 1, uint32(6), uint32(0)))
	if body := r.mustCall(msg(tRead, 1, uint32(6), uint64(0), uint32(100))); string(body[4:]) != "still here" {
		t.Fatalf("unlinked open file reads %q", body[4:])
	}
	r.mustCall(msg(tClunk, 1, uint32(6)))
	r.mustCall(msg(tClunk, 1, uint32(5)))

	// Read and clunked by the shim alone.
	if err := r.walk(1, 3, "b"); err != nil {
		t.Fatal(err)
	}
	n0 := ninep.FastAnswered(e.srv)
	r.mustCall(msg(tLopen, 1, uint32(3), oRdonly))
	if body := r.mustCall(msg(tRead, 1, uint32(3), uint64(0), uint32(100))); string(body[4:]) != "data of b" {
		t.Fatalf("b reads %q", body[4:])
	}
	r.mustCall(msg(tClunk, 1, uint32(3)))
	if got := ninep.FastAnswered(e.srv) - n0; got != 3 {
		t.Fatalf("shim answered %d of open, read, clunk; want 3", got)
	}

	// The fid it was walked from replaced before p9 learned it: p9 learns it
	// first, so it stays usable.
	if err := r.walk(1, 4, "b"); err != nil {
		t.Fatal(err)
	}
	r.mustCall(msg(tLopen, 1, uint32(4), oRdonly))
	if err := r.attach(1, 1, "@fast", 0); err != nil {
		t.Fatal(err)
	}
	if _, err := r.call(msg(tStatfs, 1, uint32(4))); err != nil {
		t.Fatalf("statfs of an opened fid whose source was replaced: %v", err)
	}
	r.mustCall(msg(tClunk, 1, uint32(4)))

	// The client goes away with one open.
	r2 := attachFast(t, e)
	if err := r2.walk(1, 2, "b"); err != nil {
		t.Fatal(err)
	}
	r2.mustCall(msg(tLopen, 1, uint32(2), oRdonly))
	r2.c.Close()

	deadline := time.Now().Add(5 * time.Second)
	for fds() > base {
		if time.Now().After(deadline) {
			t.Fatalf("%d descriptors open, %d before the opens", fds(), base)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestFastPathAnswersAsP9AcrossConnections extends TestFastPathAnswersAsP9 to
// two connections per side, pipelined (every request of a batch is sent, on
// both connections, before a reply is read; replies are matched by tag), with
// renames and removals made in between by another client of the tree (the
// host: neither server is told, so both must notice alike). Every reply must
// be byte-identical to p9's; the requests are the ones the shim answers
// (Twalk, Tgetattr, Tread, Twrite, Tclunk, Tlopen) and the ones it leaves to
// p9 on the same fids.
func TestFastPathAnswersAsP9AcrossConnections(t *testing.T) {
	e := newEnv(t)
	_, refAddr := p9Only(t, e)
	content := bytes.Repeat([]byte("semfs fast path "), 10000/16)
	for _, d := range []string{"d", "e"} {
		if err := os.Mkdir(filepath.Join(e.export, d), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(e.export, d, "f"), content, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(e.export, "g"), content, 0o644); err != nil {
		t.Fatal(err)
	}
	var sides [2][2]*raw
	for side, addr := range []string{e.tcp, refAddr} {
		for c := range sides[side] {
			r := dialRaw(t, "tcp", addr)
			r.version(fastMsize)
			if err := r.attach(1, 1, "/", 0); err != nil {
				t.Fatal(err)
			}
			sides[side][c] = r
		}
	}
	walk := func(fid, newfid uint32, names ...string) []byte {
		f := []any{fid, newfid, uint16(len(names))}
		for _, n := range names {
			f = append(f, n)
		}
		return msg(tWalk, 0, f...)
	}
	type step struct {
		name string
		conn int
		req  []byte
	}
	host := func(f func() error) func() {
		return func() {
			if err := f(); err != nil {
				t.Fatal(err)
			}
		}
	}
	batches := []struct {
		before func()
		steps  []step
	}{
		{steps: []step{ // fids made one at a time: a pipelined walk races p9's goroutines
			{"A walk d/f", 0, walk(1, 2, "d", "f")},
			{"A walk d", 0, walk(1, 3, "d")},
			{"A walk g", 0, walk(1, 4, "g")},
			{"A walk e/f", 0, walk(1, 5, "e", "f")},
			{"A walk g again", 0, walk(1, 6, "g")},
			{"B walk d/f", 1, walk(1, 2, "d", "f")},
			{"B walk e", 1, walk(1, 3, "e")},
			{"B walk g", 1, walk(1, 4, "g")},
		}},
		{steps: []step{
			{"A open g", 0, msg(tLopen, 0, uint32(4), oRdonly)},
			{"A open e/f rw", 0, msg(tLopen, 0, uint32(5), oRdwr)},
			{"B open g rw", 1, msg(tLopen, 0, uint32(4), oRdwr)},
		}},
		{steps: []step{
			{"A getattr d/f", 0, msg(tGetattr, 0, uint32(2), maskAll)},
			{"A getattr d", 0, msg(tGetattr, 0, uint32(3), maskAll)},
			{"A read g", 0, msg(tRead, 0, uint32(4), uint64(0), uint32(4096))},
			{"A read g past end", 0, msg(tRead, 0, uint32(4), uint64(20000), uint32(10))},
			{"A read unopened", 0, msg(tRead, 0, uint32(2), uint64(0), uint32(10))},
			{"A getattr never made", 0, msg(tGetattr, 0, uint32(77), maskAll)},
			{"B getattr d/f", 1, msg(tGetattr, 0, uint32(2), maskAll)},
			{"B read g", 1, msg(tRead, 0, uint32(4), uint64(100), uint32(100))},
			{"B write g same bytes", 1, msg(tWrite, 0, uint32(4), uint64(0), uint32(5), content[:5])},
			{"A write read-only fid", 0, msg(tWrite, 0, uint32(4), uint64(0), uint32(1), []byte("x"))},
			{"A write e/f same bytes", 0, msg(tWrite, 0, uint32(5), uint64(16), uint32(4), content[16:20])},
		}},
		// The host renames d away and puts another d/f in its place, and
		// removes g, which A and B hold open.
		{before: func() {
			host(func() error { return os.Rename(filepath.Join(e.export, "d"), filepath.Join(e.export, "d-old")) })()
			host(func() error { return os.Mkdir(filepath.Join(e.export, "d"), 0o755) })()
			host(func() error { return os.WriteFile(filepath.Join(e.export, "d", "f"), []byte("THE OTHER FILE"), 0o644) })()
			host(func() error { return os.Remove(filepath.Join(e.export, "g")) })()
		}, steps: []step{
			{"A getattr replaced d/f", 0, msg(tGetattr, 0, uint32(2), maskAll)},
			{"A getattr replaced d", 0, msg(tGetattr, 0, uint32(3), maskAll)},
			{"B getattr replaced d/f", 1, msg(tGetattr, 0, uint32(2), maskAll)},
			{"A read removed, open g", 0, msg(tRead, 0, uint32(4), uint64(0), uint32(64))},
			{"B read removed, open g", 1, msg(tRead, 0, uint32(4), uint64(8), uint32(64))},
			{"A getattr removed, open g", 0, msg(tGetattr, 0, uint32(4), maskAll)},
			{"A getattr removed, walked g", 0, msg(tGetattr, 0, uint32(6), maskAll)},
		}},
		{steps: []step{
			{"A open replaced d/f", 0, msg(tLopen, 0, uint32(2), oRdonly)},
			{"B open replaced d/f", 1, msg(tLopen, 0, uint32(2), oRdwr)},
			{"A open removed g", 0, msg(tLopen, 0, uint32(6), oRdonly)},
			{"B write removed, open g", 1, msg(tWrite, 0, uint32(4), uint64(0), uint32(5), content[:5])},
		}},
		{steps: []step{
			{"A walk the new d/f", 0, walk(1, 7, "d", "f")},
			{"B walk from the replaced d", 1, walk(3, 8, "f")},
			{"A clunk replaced d/f", 0, msg(tClunk, 0, uint32(2))},
			{"B clunk open g", 1, msg(tClunk, 0, uint32(4))},
		}},
		{steps: []step{
			{"A getattr new d/f", 0, msg(tGetattr, 0, uint32(7), maskAll)},
			{"A getattr clunked", 0, msg(tGetattr, 0, uint32(2), maskAll)},
			{"B read clunked", 1, msg(tRead, 0, uint32(4), uint64(0), uint32(10))},
			{"A clunk open g", 0, msg(tClunk, 0, uint32(4))},
			{"A clunk e/f", 0, msg(tClunk, 0, uint32(5))},
		}},
	}
	tag := uint16(100)
	for bi, b := range batches {
		if b.before != nil {
			b.before()
		}
		var replies [2]map[uint16][]byte
		for side := range sides {
			replies[side] = map[uint16][]byte{}
			sent := [2]int{}
			for i, s := range b.steps {
				req := append([]byte(nil), s.req...)
				binary.LittleEndian.PutUint16(req[5:], tag+uint16(i))
				if bi == 0 { // fid-making: one at a time
					typ, rtag, body := sides[side][s.conn].call0(req)
					replies[side][rtag] = append(binary.LittleEndian.AppendUint16([]byte{typ}, rtag), body...)
					continue
				}
				sides[side][s.conn].send(req)
				sent[s.conn]++
			}
			for c := range sides[side] {
				for range sent[c] {
					typ, rtag, body := sides[side][c].recv()
					replies[side][rtag] = append(binary.LittleEndian.AppendUint16([]byte{typ}, rtag), body...)
				}
			}
		}
		for i, s := range b.steps {
			got, want := replies[0][tag+uint16(i)], replies[1][tag+uint16(i)]
			for _, r := range [][]byte{got, want} {
				if len(r) >= 92 && r[0] == tGetattr+1 {
					// atime: the shim's reads from the page cache do not
					// move it (see the package doc); p9's do.
					clear(r[3+73 : 3+89])
				}
			}
			if got == nil || want == nil {
				t.Fatalf("batch %d, %s: no reply (%v, %v)", bi, s.name, got != nil, want != nil)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("batch %d, %s: fast path replied (%d bytes)\n  %x\np9 replied (%d bytes)\n  %x", bi, s.name, len(got), got, len(want), want)
			}
		}
		tag += uint16(len(b.steps))
	}
	if ninep.FastAnswered(e.srv) == 0 {
		t.Error("the shim answered nothing")
	}
}

// call0 sends one request and returns its reply.
func (r *raw) call0(b []byte) (uint8, uint16, []byte) {
	r.send(b)
	return r.recv()
}

// TestFastPathWaitsForAFidMakingRequest: a fid-making request that stays
// unanswered (a Tlcreate waiting in p9 while a snapshot holds the core) makes
// the next one wait for it, however long (tags.go: its reply is sure to
// come), with a log line once it has waited makeWait, and the shim does not
// give up: the attach is answered after the create, and the fast path goes on.
func TestFastPathWaitsForAFidMakingRequest(t *testing.T) {
	e := newEnv(t)
	ninep.ShortMakeWait(e.srv, 20*time.Millisecond)
	r := attachFast(t, e)
	thaw, frozen := createHeldInP9(t, e, r)
	r.send(msg(tAttach, 6, uint32(11), uint32(noFid), "", "@fast", uint32(0)))
	// The attach waits behind the create: the log says so once makeWait has
	// passed (the only way to know it is waiting, not yet read).
	waitLog(t, e, "is taking long", "no log line for the attach waiting behind the create")
	thaw()
	if err := <-frozen; err != nil {
		t.Fatal(err)
	}
	for _, want := range []uint16{5, 6} {
		if typ, tag, body := r.recv(); tag != want || typ != map[uint16]uint8{5: tLcreate + 1, 6: tAttach + 1}[tag] {
			t.Fatalf("after the thaw: type %d tag %d %x, want the reply to tag %d (the create's first)", typ, tag, body, want)
		}
	}
	if got := e.srv.FastPathGiveUps(); got != 0 {
		t.Fatalf("FastPathGiveUps = %d: the shim gave up", got)
	}
	if _, err := os.Stat(filepath.Join(e.export, "new")); err != nil {
		t.Fatalf("the create p9 answered: %v", err)
	}
	before := ninep.FastAnswered(e.srv)
	if _, err := r.call(msg(tGetattr, 1, uint32(11), maskAll)); err != nil {
		t.Fatalf("getattr after the wait: %v", err)
	}
	if ninep.FastAnswered(e.srv) == before {
		t.Fatal("the shim answered nothing after the wait")
	}
}

// TestFastPathGiveUpIsCounted: on a connection that lost track of its tags
// (a malformed request, which p9 answers with NOTAG), a fid-making request
// that stays unanswered makes the shim give up following the connection's
// fids once the next one has waited makeWait: it is counted (the
// semfs_fast_path_given_up_total metric reads FastPathGiveUps), the
// connection goes on, served by p9, and the create is answered once the
// snapshot lets go.
func TestFastPathGiveUpIsCounted(t *testing.T) {
	e := newEnv(t)
	ninep.ShortMakeWait(e.srv, 20*time.Millisecond)
	r := attachFast(t, e)
	loseTags(t, r)
	thaw, frozen := createHeldInP9(t, e, r)
	if e.srv.FastPathGiveUps() != 0 {
		t.Fatal("given up before anything waited")
	}
	// The next fid-making request waits, then the shim gives up.
	if err := r.attach(2, 11, "@fast", 0); err != nil {
		t.Fatalf("an attach after giving up: %v", err)
	}
	if got := e.srv.FastPathGiveUps(); got != 1 {
		t.Fatalf("FastPathGiveUps = %d, want 1", got)
	}
	thaw()
	if err := <-frozen; err != nil {
		t.Fatal(err)
	}
	if typ, tag, body := r.recv(); typ != tLcreate+1 || tag != 5 {
		t.Fatalf("after the thaw: type %d tag %d %x, want the Rlcreate (tag 5)", typ, tag, body)
	}
	if _, err := os.Stat(filepath.Join(e.export, "new")); err != nil {
		t.Fatalf("the create p9 answered: %v", err)
	}
	before := ninep.FastAnswered(e.srv)
	if _, err := r.call(msg(tGetattr, 1, uint32(11), maskAll)); err != nil {
		t.Fatalf("getattr after giving up: %v", err)
	}
	if _, err := r.call(msg(tWrite, 1, uint32(2), uint64(0), uint32(2), []byte("ok"))); err != nil {
		t.Fatalf("write to the created file after giving up: %v", err)
	}
	if ninep.FastAnswered(e.srv) != before {
		t.Fatal("the shim answered a request after giving up")
	}
}

// TestFastPathGivesUpWithoutLosingReplies: requests p9 answers on fids the
// shim walked (a chmod, a mkdir in one, a rename: p9 is taught each fid by a
// request of the shim's own, whose reply it drops), beside the concurrent
// workload of TestFastPathConcurrentFids, on a connection whose shim gives
// up following p9's fids at the first wait (its tags lost, as after a
// malformed request, and makeWait of a nanosecond). Each request must get exactly its own reply:
// an error (a fid the shim walked but can no longer teach p9 answers ESTALE
// once it gave up, see makeWait) or a success whose data is right, never a
// reply of another request's. Before the shim stopped giving up on its own
// requests, their replies reached the client under the tag of the request
// held back behind them ("unexpected message type").
func TestFastPathGivesUpWithoutLosingReplies(t *testing.T) {
	e := newEnv(t)
	ninep.LoseTags(e.srv)
	ninep.ShortMakeWait(e.srv, time.Nanosecond)
	_, root := dial(t, "tcp", e.tcp, "@fast", 0, fastMsize)
	var wg sync.WaitGroup
	errs := make(chan error, 10)
	var replied atomic.Int64 // requests answered by an error
	run := func(do func(i int) error) {
		defer wg.Done()
		for i := range 40 {
			err := do(i)
			var errno linux.Errno
			switch {
			case err == nil:
			case errors.As(err, &errno):
				replied.Add(1)
			default:
				errs <- err
				return
			}
		}
	}
	for g := range 8 {
		wg.Add(1)
		go run(func(i int) error {
			return fastRoundTrip(root, fmt.Sprintf("g%d-%d", g, i), bytes.Repeat([]byte{byte('a' + g)}, 100+i*997))
		})
	}
	for g := range 2 {
		wg.Add(1)
		go run(func(i int) error { return taughtRoundTrip(root, fmt.Sprintf("t%d-%d", g, i)) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if e.srv.FastPathGiveUps() == 0 {
		t.Fatal("the shim never gave up: the test tested nothing")
	}
	t.Logf("%d round trips ended by an error reply", replied.Load())
}

// taughtRoundTrip makes directory name, then through fids walked afresh
// chmods it, makes a subdirectory in it, renames that, and checks each.
func taughtRoundTrip(root p9.File, name string) error {
	if _, err := root.Mkdir(name, 0o755, 0, 0); err != nil {
		return fmt.Errorf("mkdir %s: %w", name, err)
	}
	_, d, err := root.Walk([]string{name})
	if err != nil {
		return fmt.Errorf("walk %s: %w", name, err)
	}
	defer d.Close()
	if err := d.SetAttr(p9.SetAttrMask{Permissions: true}, p9.SetAttr{Permissions: 0o700}); err != nil {
		return fmt.Errorf("chmod %s: %w", name, err)
	}
	if _, err := d.Mkdir("sub", 0o755, 0, 0); err != nil {
		return fmt.Errorf("mkdir %s/sub: %w", name, err)
	}
	if err := d.RenameAt("sub", d, "sub2"); err != nil {
		return fmt.Errorf("rename %s/sub: %w", name, err)
	}
	_, c, err := root.Walk([]string{name, "sub2"})
	if err != nil {
		return fmt.Errorf("walk %s/sub2: %w", name, err)
	}
	c.Close()
	_, _, a, err := d.GetAttr(p9.AttrMaskAll)
	if err != nil || a.Mode.Permissions() != 0o700 {
		return fmt.Errorf("getattr %s: mode %o, %v; want 0700", name, a.Mode.Permissions(), err)
	}
	return nil
}

// reuseTagInFlight sets up the request a client sends under the tag of one
// p9 has in flight: a Twrite (tag 8) on a file p9 holds open waits in p9
// while a snapshot holds the core, and a Tstatfs under tag 8 names a fid
// only the shim knows, which p9 would have to be taught first. It returns
// the thaw and Freeze's error.
func reuseTagInFlight(t *testing.T, e *env, r *raw) (thaw func(), frozen <-chan error) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(e.export, "k"), []byte("kept"), 0o644); err != nil {
		t.Fatal(err)
	}
	openInP9(t, r, 4, "k", oRdwr)
	before := ninep.FastAnswered(e.srv)
	if err := r.walk(1, 2); err != nil { // a clone only the shim knows
		t.Fatal(err)
	}
	if ninep.FastAnswered(e.srv) == before {
		t.Fatal("the walk was not the shim's")
	}
	thaw, frozen = freeze(t, e)
	r.send(msg(tWrite, 8, uint32(4), uint64(0), uint32(4), []byte("KEPT"))) // waits in p9 under tag 8
	r.send(msg(tStatfs, 8, uint32(2)))                                      // tag 8 again
	return thaw, frozen
}

// TestRequestReusingATagInFlightIsDropped: the shim drops a request whose tag
// p9 has in flight, unanswered, as p9 itself would (tags.go), with a log
// line, and the connection goes on: the held write is answered after the
// thaw, and the fid the dropped request named is still usable.
func TestRequestReusingATagInFlightIsDropped(t *testing.T) {
	e := newEnv(t)
	r := attachFast(t, e)
	thaw, frozen := reuseTagInFlight(t, e, r)
	waitLog(t, e, "reused the tag of one in flight", "no log line for the request that reused tag 8")
	thaw()
	if err := <-frozen; err != nil {
		t.Fatal(err)
	}
	r.send(msg(tStatfs, 9, uint32(2)))
	// The write's reply and the statfs's, in either order (the write may
	// still be finishing when the statfs arrives), and nothing else: the
	// dropped request got no reply under tag 8.
	want := map[uint16]uint8{8: tWrite + 1, 9: tStatfs + 1}
	for range 2 {
		typ, tag, body := r.recv()
		if w, ok := want[tag]; !ok || typ != w {
			t.Fatalf("after the thaw: type %d tag %d %x, want one Rwrite (tag 8) and one Rstatfs (tag 9)", typ, tag, body)
		}
		delete(want, tag)
	}
}

// TestShimsOwnRequestUnansweredEndsTheConnection: on a connection that lost
// track of its tags (a malformed request p9 answered with NOTAG), the same
// reuse reaches the shim's teaching of fid 2, under tag 8, which p9 drops
// (it answers no second request under a tag in flight), so the reply the
// shim waits for never comes. The shim must not give up on it and pass the
// requests behind it on as if it had been answered; it ends the connection,
// with a log line, once it has waited ownWait.
//
// p9 starts a request's tag only after it has handed the socket to its next
// reader (p9/server.go, handleRequest), so of two requests under one tag sent
// back to back either may be the one it starts: now and then (seen under
// -race) it starts the shim's walk and drops the client's write instead, and
// the statfs is answered; or (seen once under -race) it answers the shim's
// walk before it starts the write, and then drops the statfs behind the
// held write: nothing is answered, and the shim waits for nothing. That is
// p9's right with a client reusing a tag, but it tests nothing here, so the
// scenario is tried again on a fresh server, and the test fails if the
// held-walk order never comes.
func TestShimsOwnRequestUnansweredEndsTheConnection(t *testing.T) {
	const tries = 10
	for try := range tries {
		if ownRequestUnanswered(t) {
			return
		}
		t.Logf("try %d: p9 started the shim's walk before the client's write; again", try+1)
	}
	t.Fatalf("in %d tries p9 never held the write before the shim's walk", tries)
}

// ownRequestUnanswered runs the scenario once; false when p9 took the walk
// first (the statfs was answered, or nothing was and the shim had nothing to
// give up on, as the p9 order allows).
func ownRequestUnanswered(t *testing.T) bool {
	t.Helper()
	e := newEnv(t)
	ninep.ShortOwnWait(e.srv, 200*time.Millisecond)
	r := attachFast(t, e)
	loseTags(t, r)
	thaw, frozen := reuseTagInFlight(t, e, r)
	defer func() {
		thaw()
		if err := <-frozen; err != nil {
			t.Fatal(err)
		}
	}()
	// While the snapshot holds the write, nothing can be answered but
	// through the other order: the read ends with the server closing the
	// connection.
	// The shim gives up after ownWait (200 ms here); 10 s leaves -race room.
	r.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	gaveUp := func() bool { return strings.Contains(e.logs.String(), "did not answer the shim's own walk") }
	if _, err := r.br.Peek(1); err == nil {
		typ, tag, body := r.recv()
		if typ == tStatfs+1 && tag == 8 && !gaveUp() {
			return false
		}
		t.Fatalf("a reply while the write is held: type %d tag %d %x; want the connection closed", typ, tag, body)
	} else if errors.Is(err, os.ErrDeadlineExceeded) {
		switch logs := e.logs.String(); {
		case gaveUp():
			t.Fatal("the shim gave up on its walk and the connection stayed open")
		case strings.Contains(logs, "is taking long"):
			t.Fatalf("the shim still waits for its walk, unbounded, on a connection whose tags were lost:\n%s", logs)
		}
		return false // p9 answered the walk and dropped the statfs
	}
	if !strings.Contains(e.logs.String(), "did not answer the shim's own walk") {
		t.Errorf("no log line said why the connection was closed:\n%s", e.logs.String())
	}
	return true
}

// freeze holds e's core as a snapshot does (FS.Freeze) until thaw is called
// (at the latest at cleanup, so that a failure leaves nothing frozen);
// frozen then gives Freeze's error.
func freeze(t *testing.T, e *env) (thaw func(), frozen <-chan error) {
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	thaw = func() { once.Do(func() { close(release) }) }
	t.Cleanup(thaw)
	done := make(chan error, 1)
	go func() {
		done <- e.fs.Freeze(t.Context(), func() error { close(entered); <-release; return nil })
	}()
	<-entered
	return thaw, done
}

// openInP9 walks fid to name from the root fid 1 and opens it with flags, so
// that p9 holds it open: the statfs between makes the shim teach p9 the fid
// its walk made, and the open then goes to p9.
func openInP9(t *testing.T, r *raw, fid uint32, name string, flags uint32) {
	t.Helper()
	if err := r.walk(1, fid, name); err != nil {
		t.Fatal(err)
	}
	if _, err := r.call(msg(tStatfs, 1, fid)); err != nil { // p9 learns the fid
		t.Fatal(err)
	}
	if _, err := r.call(msg(tLopen, 1, fid, flags)); err != nil {
		t.Fatal(err)
	}
}

// waitLog waits until e's log holds s, or fails with missing (after 20 s: a
// line that never comes).
func waitLog(t *testing.T, e *env, s, missing string) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(e.logs.String(), s); {
		if time.Now().After(deadline) {
			t.Fatal(missing)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// createHeldInP9 has p9 learn fid 2 (the root, walked by the shim), holds the
// core as a snapshot does, and sends a Tlcreate (tag 5) on fid 2, which waits
// in p9 until thaw.
func createHeldInP9(t *testing.T, e *env, r *raw) (thaw func(), frozen <-chan error) {
	t.Helper()
	if err := r.walk(1, 2); err != nil {
		t.Fatal(err)
	}
	if _, err := r.call(msg(tStatfs, 1, uint32(2))); err != nil { // p9 learns the fid
		t.Fatal(err)
	}
	thaw, frozen = freeze(t, e)
	r.send(msg(tLcreate, 5, uint32(2), "new", oRdwr, uint32(0o644), uint32(0)))
	return thaw, frozen
}

// loseTags sends a Tstatfs with half a fid, which p9 cannot decode and
// answers with tag NOTAG: the connection's tags are lost (tags.go).
func loseTags(t *testing.T, r *raw) {
	t.Helper()
	r.send(sized(append(msg(tStatfs, 3), 0, 0), 7+2))
	if typ, tag, _ := r.recv(); typ != tLerror || tag != 0xFFFF {
		t.Fatalf("a Tstatfs with half a fid: type %d tag %d, want Rlerror NOTAG", typ, tag)
	}
}
