package ninep_test

import (
	"fmt"
	"testing"

	"github.com/hugelgupf/p9/p9"
)

// The per-message cost of the front end (shim, p9, file, core) over loopback
// TCP with p9's client, as a Linux client drives it: one request in flight.
// Allocation counts include the client's; compare them before and after a
// change, not with zero.

// BenchmarkWrite64K: one Twrite of 64 KiB at msize 64 KiB (diod's cap).
func BenchmarkWrite64K(b *testing.B) {
	e := newEnv(b)
	_, root := dial(b, "tcp", e.tcp, "/", 0, 64<<10+24)
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
func BenchmarkRead64K(b *testing.B) {
	e := newEnv(b)
	_, root := dial(b, "tcp", e.tcp, "/", 0, 64<<10+24)
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
func BenchmarkWalkGetattrClunk(b *testing.B) {
	e := newEnv(b)
	_, root := dial(b, "tcp", e.tcp, "/", 0, 64<<10)
	d := walk(b, root)
	if _, err := d.Mkdir("c", 0o755, p9.NoUID, p9.NoGID); err != nil {
		b.Fatal(err)
	}
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
