package nfs_test

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkFastPath: the calls the fast path answers, one at a time over one
// connection (the raw client), as a kernel client's hot loop sends them.
func BenchmarkFastPath(b *testing.B) {
	e := newEnv(b)
	if err := os.WriteFile(filepath.Join(e.dir, "f"), make([]byte, 1<<20), 0o644); err != nil {
		b.Fatal(err)
	}
	c, root := e.client("/")
	c.as(0, 0)
	_, fh, _ := c.lookup(root, "f")
	b.Run("GETATTR", func(b *testing.B) {
		for b.Loop() {
			if st, _ := c.getattr(fh); st != sOK {
				b.Fatal(st)
			}
		}
	})
	b.Run("READ64K", func(b *testing.B) {
		b.SetBytes(64 << 10)
		for b.Loop() {
			if st, _, _ := c.read(fh, 0, 64<<10); st != sOK {
				b.Fatal(st)
			}
		}
	})
	b.Run("LOOKUP", func(b *testing.B) {
		for b.Loop() {
			if st, _, _ := c.lookup(root, "f"); st != sOK {
				b.Fatal(st)
			}
		}
	})
}
