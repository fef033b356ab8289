package server_test

import (
	"bytes"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/semfs/semfs/server"
	"github.com/semfs/semfs/server/servertest"
	"github.com/semfs/semfs/server/sockio"
)

// TestInlineCallsMatchTheirTwins: LstatInline, File.StatInline and
// File.ReadAtCached, which make their system calls raw, answer exactly what
// Lstat, File.Stat and File.ReadAt do, and keep the same containment: symlinks
// on the way are refused, never followed.
func TestInlineCallsMatchTheirTwins(t *testing.T) {
	f := newFixture(t)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(f.dir, "a"), []byte("data"), 0o640))
	must(os.MkdirAll(filepath.Join(f.dir, "d", "e"), 0o755))
	must(os.WriteFile(filepath.Join(f.dir, "d", "e", "b"), []byte("deeper"), 0o600))
	must(os.Symlink(f.outside, filepath.Join(f.dir, "out")))
	must(os.Symlink("d", filepath.Join(f.dir, "sd")))
	must(os.Symlink("..", filepath.Join(f.dir, "d", "up")))
	ctx := as("t")
	for _, p := range []string{"", "a", "d", "d/e", "d/e/b", "out", "sd", "d/up",
		"out/secret", "sd/e", "sd/e/b", "d/up/a", "missing", "d/missing", "a/x"} {
		want, werr := f.fs.Lstat(ctx, p)
		got, gerr := f.fs.LstatInline(ctx, p)
		if (werr == nil) != (gerr == nil) {
			t.Errorf("%q: LstatInline error %v, Lstat %v", p, gerr, werr)
			continue
		}
		if werr != nil {
			if server.KindOf(werr) != server.KindOf(gerr) || werr.Error() != gerr.Error() {
				t.Errorf("%q: LstatInline says %q, Lstat %q", p, gerr, werr)
			}
			continue
		}
		if got != want {
			t.Errorf("%q: LstatInline %+v, Lstat %+v", p, got, want)
		}
	}
	fl, err := f.fs.Open(ctx, "d/e/b", os.O_RDONLY)
	must(err)
	defer fl.Close()
	want, werr := fl.Stat()
	got, gerr := fl.StatInline()
	if werr != nil || gerr != nil || got != want {
		t.Fatalf("StatInline %+v %v, Stat %+v %v", got, gerr, want, werr)
	}
	// ReadAtCached (the file is in the page cache: just written) reads what
	// ReadAt reads, and says io.EOF where ReadAt does: a read the end cuts
	// short, one at or past the end; not one that ends at the end exactly.
	for _, r := range []struct{ off, n int }{{0, 6}, {0, 4}, {2, 10}, {6, 3}, {9, 1}, {0, 0}} {
		wb, gb := make([]byte, r.n), make([]byte, r.n)
		wn, werr := fl.ReadAt(wb, int64(r.off))
		gn, ok, gerr := fl.ReadAtCached(gb, int64(r.off))
		if !ok {
			t.Fatalf("ReadAtCached(%d at %d): not in the page cache", r.n, r.off)
		}
		if gn != wn || gerr != werr || string(gb[:gn]) != string(wb[:wn]) {
			t.Errorf("ReadAtCached(%d at %d) = %d %q %v; ReadAt %d %q %v", r.n, r.off, gn, gb[:gn], gerr, wn, wb[:wn], werr)
		}
	}
	f.checkOutside(t)
}

// TestTryWriteAtMatchesWriteAt: File.TryWriteAt makes its pwrite raw; what it
// writes, what it returns and how it fails are WriteAt's: a write at an
// offset, a descriptor opened read-only (EBADF), an O_APPEND descriptor (the
// kernel appends whatever the offset), an offset past the largest file
// (EFBIG), a negative offset, a closed file.
func TestTryWriteAtMatchesWriteAt(t *testing.T) {
	f := newFixture(t)
	ctx := as("t")
	type result struct {
		n       int
		kind    server.Kind
		msg     string
		content string
	}
	run := func(name string, flags int, off int64, data string, try bool, closeFirst bool) result {
		t.Helper()
		if err := os.WriteFile(filepath.Join(f.dir, name), []byte("0123456789"), 0o644); err != nil {
			t.Fatal(err)
		}
		fl, err := f.fs.Open(ctx, name, flags)
		if err != nil {
			t.Fatal(err)
		}
		if closeFirst {
			fl.Close()
		} else {
			defer fl.Close()
		}
		var r result
		if try {
			var ok bool
			r.n, ok, err = fl.TryWriteAt([]byte(data), off)
			if !ok {
				t.Fatalf("%s: TryWriteAt declined with no snapshot running", name)
			}
		} else {
			r.n, err = fl.WriteAt([]byte(data), off)
		}
		if err != nil {
			r.kind, r.msg = server.KindOf(err), err.Error()
		}
		b, _ := os.ReadFile(filepath.Join(f.dir, name))
		r.content = string(b)
		return r
	}
	for _, c := range []struct {
		name   string
		flags  int
		off    int64
		data   string
		closed bool
	}{
		{"inside", os.O_RDWR, 2, "ab", false},
		{"past end", os.O_WRONLY, 14, "tail", false},
		{"read-only", os.O_RDONLY, 0, "x", false},
		{"append", os.O_WRONLY | os.O_APPEND, 0, "end", false},
		{"too far", os.O_WRONLY, 1 << 62, "x", false},
		{"negative", os.O_WRONLY, -1, "x", false},
		{"closed", os.O_WRONLY, 0, "x", true},
	} {
		want := run("w-"+c.name, c.flags, c.off, c.data, false, c.closed)
		got := run("t-"+c.name, c.flags, c.off, c.data, true, c.closed)
		want.msg = strings.ReplaceAll(want.msg, "w-"+c.name, "NAME")
		got.msg = strings.ReplaceAll(got.msg, "t-"+c.name, "NAME")
		if got != want {
			t.Errorf("%s: TryWriteAt %+v, WriteAt %+v", c.name, got, want)
		}
	}
	f.checkOutside(t)
}

// TestSendCached: File.SendCached sends the file's bytes behind the header
// when the page cache holds them all, and sends nothing, ok=false, when it
// does not (dropped pages: the caller then reads them where it may wait), on
// a closed file, or for an empty range.
func TestSendCached(t *testing.T) {
	f := newFixture(t)
	ctx := as("t")
	data := make([]byte, 1<<20+5)
	for i := range data {
		data[i] = byte(i * 13)
	}
	p := filepath.Join(f.dir, "big")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	fl, err := f.fs.Open(ctx, "big", os.O_RDONLY)
	if err != nil {
		t.Fatal(err)
	}
	defer fl.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err == nil {
			defer c.Close()
			_, _ = io.Copy(c, c) // echo
		}
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s := sockio.New(c)
	send := func(off int64, n int) (bool, []byte) {
		t.Helper()
		ok, short, err := fl.SendCached(s, []byte("hd"), off, n, nil)
		if err != nil || short {
			t.Fatalf("SendCached(%d, %d): short %v, %v", off, n, short, err)
		}
		if !ok {
			return false, nil
		}
		got := make([]byte, 2+n)
		_ = c.SetReadDeadline(time.Now().Add(time.Minute)) // failure bound only
		if _, err := io.ReadFull(c, got); err != nil {
			t.Fatal(err)
		}
		return true, got
	}
	// Drop the pages (clean: written back first). Before any send: pages
	// sent stay referenced by the TCP send queue until acknowledged.
	if !servertest.Evict(t, p) {
		t.Log("the pages of big could not be dropped; the uncached case is not checked")
	} else if ok, _ := send(4096, 64<<10); ok {
		t.Fatal("SendCached sent a range the page cache did not hold")
	}
	if _, err := fl.ReadAt(make([]byte, len(data)), 0); err != nil {
		t.Fatal(err)
	}
	if ok, got := send(5, 1<<20); !ok || string(got[:2]) != "hd" || !bytes.Equal(got[2:], data[5:5+1<<20]) {
		t.Fatalf("SendCached of a cached range: ok %v, equal %v", ok, ok && bytes.Equal(got[2:], data[5:5+1<<20]))
	}
	if ok, _ := send(0, 0); ok {
		t.Fatal("SendCached sent an empty range")
	}
	fl.Close()
	if ok, _ := send(0, 10); ok {
		t.Fatal("SendCached sent from a closed file")
	}
}
