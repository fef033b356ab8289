package ninep_test

import (
	"fmt"
	"testing"

	"github.com/hugelgupf/p9/p9"
)

// The per-message cost of the front end (shim, p9, file, core) over loopback
// TCP with p9's client, as a Linux client drives it: one request in flight.
// Allocation counts include the client's; compare them before and after a
// change, not with zero. Each runs twice: "fast" is the server as shipped,
// "p9" a server over the same core that answers everything through p9 (no
// fast path, fast.go), to show what the shim's own answers save.
//
//	go test ./ninep/ -run '^$' -bench . -benchtime 2s

// benchAddr returns the TCP address of e's server, or of a p9-only one.
func benchAddr(b *testing.B, e *env, fast bool) string {
	if fast {
		return e.tcp
	}
	_, addr := p9Only(b, e)
	return addr
}

// benchDir attaches to a fresh server (or its p9-only twin) at msize 64 KiB
// and makes directory "c"; it returns the root.
func benchDir(b *testing.B, fast bool) p9.File {
	e := newEnv(b)
	_, root := dial(b, "tcp", benchAddr(b, e, fast), "/", 0, 64<<10)
	if _, err := walk(b, root).Mkdir("c", 0o755, p9.NoUID, p9.NoGID); err != nil {
		b.Fatal(err)
	}
	return root
}

func both(b *testing.B, run func(b *testing.B, fast bool)) {
	b.Run("fast", func(b *testing.B) { run(b, true) })
	b.Run("p9", func(b *testing.B) { run(b, false) })
}

// BenchmarkWrite64K: one Twrite of 64 KiB at msize 64 KiB (diod's cap).
func BenchmarkWrite64K(b *testing.B) { both(b, benchWrite64K) }

func benchWrite64K(b *testing.B, fast bool) {
	e := newEnv(b)
	_, root := dial(b, "tcp", benchAddr(b, e, fast), "/", 0, 64<<10+24)
	d := walk(b, root)
	f, _, _, err := d.Create("big", p9.ReadWrite, 0o644, p9.NoUID, p9.NoGID)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := f.WriteAt(buf, int64(i%256)*int64(len(buf))); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRead64K: one Tread of 64 KiB at msize 64 KiB, hot page cache.
func BenchmarkRead64K(b *testing.B) { both(b, benchRead64K) }

func benchRead64K(b *testing.B, fast bool) {
	e := newEnv(b)
	_, root := dial(b, "tcp", benchAddr(b, e, fast), "/", 0, 64<<10+24)
	buf := make([]byte, 64<<10)
	create(b, root, "big", make([]byte, 16<<20))
	f := walk(b, root, "big")
	if _, _, err := f.Open(p9.ReadOnly); err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if n, err := f.ReadAt(buf, int64(i%256)*int64(len(buf))); err != nil || n != len(buf) {
			b.Fatal(n, err)
		}
	}
}

// BenchmarkWalkGetattrClunk: what `ls -l` does per entry (Twalk, Tgetattr, Tclunk).
func BenchmarkWalkGetattrClunk(b *testing.B) { both(b, benchWalkGetattrClunk) }

func benchWalkGetattrClunk(b *testing.B, fast bool) {
	root := benchDir(b, fast)
	c := walk(b, root, "c")
	for i := range 100 {
		create(b, c, fmt.Sprintf("f%05d", i), make([]byte, 4096))
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		_, f, err := c.Walk([]string{fmt.Sprintf("f%05d", i%100)})
		if err != nil {
			b.Fatal(err)
		}
		if _, _, _, err := f.GetAttr(p9.AttrMaskAll); err != nil {
			b.Fatal(err)
		}
		if err := f.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGetattr: one Tgetattr on an open fid one directory down.
func BenchmarkGetattr(b *testing.B) { both(b, benchGetattr) }

func benchGetattr(b *testing.B, fast bool) {
	root := benchDir(b, fast)
	create(b, walk(b, root, "c"), "f", []byte("x"))
	f := walk(b, root, "c", "f")
	b.ReportAllocs()
	for b.Loop() {
		if _, _, _, err := f.GetAttr(p9.AttrMaskAll); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCreate4K: what creating a small file costs (clone walk of the
// directory, Tlcreate, one 4 KiB Twrite, Tclunk), as `cp` over a mount does.
func BenchmarkCreate4K(b *testing.B) { both(b, benchCreate4K) }

func benchCreate4K(b *testing.B, fast bool) {
	root := benchDir(b, fast)
	c := walk(b, root, "c")
	data := make([]byte, 4096)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		_, d, err := c.Walk(nil)
		if err != nil {
			b.Fatal(err)
		}
		f, _, _, err := d.Create(fmt.Sprintf("f%07d", i), p9.WriteOnly, 0o644, p9.NoUID, p9.NoGID)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := f.WriteAt(data, 0); err != nil {
			b.Fatal(err)
		}
		if err := f.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOpenRead4K: what reading a small file costs once its dentry is
// cached, as Linux does it (clone walk of the file's fid, Tlopen, one 4 KiB
// Tread, Tclunk).
func BenchmarkOpenRead4K(b *testing.B) { both(b, benchOpenRead4K) }

func benchOpenRead4K(b *testing.B, fast bool) {
	root := benchDir(b, fast)
	create(b, walk(b, root, "c"), "f", make([]byte, 4096))
	f := walk(b, root, "c", "f")
	if _, err := f.StatFS(); err != nil { // p9 learns the fid, as it does a dentry's
		b.Fatal(err)
	}
	buf := make([]byte, 4096)
	b.ReportAllocs()
	for b.Loop() {
		_, c, err := f.Walk(nil)
		if err != nil {
			b.Fatal(err)
		}
		if _, _, err := c.Open(p9.ReadOnly); err != nil {
			b.Fatal(err)
		}
		if n, err := c.ReadAt(buf, 0); err != nil || n != len(buf) {
			b.Fatal(n, err)
		}
		if err := c.Close(); err != nil {
			b.Fatal(err)
		}
	}
}
