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
	// A caller other than root (a kernel client's user), in a directory
	// below the root: a root daemon checks its permissions on every call.
	if err := os.MkdirAll(filepath.Join(e.dir, "a", "b"), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.dir, "a", "b", "f"), []byte("x"), 0o644); err != nil {
		b.Fatal(err)
	}
	u, uroot := e.client("/")
	u.as(1000, 1000)
	_, a, _ := u.lookup(uroot, "a")
	_, ab, _ := u.lookup(a, "b")
	_, abf, _ := u.lookup(ab, "f")
	b.Run("LOOKUP-uid1000", func(b *testing.B) {
		for b.Loop() {
			if st, _, _ := u.lookup(ab, "f"); st != sOK {
				b.Fatal(st)
			}
		}
	})
	b.Run("ACCESS-uid1000", func(b *testing.B) {
		for b.Loop() {
			if st, got := u.access(abf, 0x3f); st != sOK || got != 0x01 {
				b.Fatal(st, got)
			}
		}
	})
}
