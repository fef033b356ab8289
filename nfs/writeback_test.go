package nfs_test

import (
	"github.com/semfs/semfs/integration/require"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// dirtyPages is the number of dirty (not yet written back) page-cache pages of
// the file at path (cachestat(2), Linux 6.5+); ok false when the kernel lacks
// the call.
func dirtyPages(t *testing.T, path string) (n uint64, ok bool) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cs unix.Cachestat_t
	err = unix.Cachestat(uint(f.Fd()), &unix.CachestatRange{}, &cs, 0)
	if err == unix.ENOSYS {
		return 0, false
	}
	if err != nil {
		t.Fatal(err)
	}
	return cs.Dirty, true
}

// TestUnstableWriteOfSmallFileStartsWriteback: the data of an UNSTABLE WRITE
// that ends a small file is on its way to the disk once the next call on the
// connection is answered (the COMMIT that follows then has only the metadata
// left to write), while an UNSTABLE overwrite inside a larger file stays in the
// page cache for the kernel to coalesce. Each check is made against a file the
// test writes itself in the same directory just before, which must be dirty:
// otherwise the file system keeps no dirty pages (tmpfs) or the kernel is
// writing everything back at that moment, and the check would prove nothing.
func TestUnstableWriteOfSmallFileStartsWriteback(t *testing.T) {
	e := newEnv(t)
	c, root := e.client("/")
	control := func(name string) bool {
		t.Helper()
		p := filepath.Join(e.dir, name)
		if err := os.WriteFile(p, make([]byte, 4096), 0o644); err != nil {
			t.Fatal(err)
		}
		n, ok := dirtyPages(t, p)
		if !ok {
			require.Environment(t, "cachestat(2) not available (Linux >= 6.5)")
		}
		return n > 0
	}

	if !control("control1") {
		require.Environment(t, "a freshly written local file has no dirty pages here (tmpfs, or writeback under way)")
	}
	st, fh := c.create(root, "new", 0, 0)
	if st != sOK {
		t.Fatal("CREATE", st)
	}
	if st, _, _, _ := c.write(fh, 0, make([]byte, 4096), 0); st != sOK {
		t.Fatal("WRITE", st)
	}
	c.getattr(fh) // answered after the WRITE's writeback was started
	if n, _ := dirtyPages(t, filepath.Join(e.dir, "new")); n != 0 {
		t.Fatalf("a new 4 KiB file written UNSTABLE has %d dirty pages after the next call; want its writeback started", n)
	}

	// A larger file, then an overwrite at its start: left to the kernel.
	st, big := c.create(root, "big", 0, 0)
	if st != sOK {
		t.Fatal("CREATE", st)
	}
	chunk := make([]byte, 8192)
	for off := uint64(0); off < 128<<10; off += uint64(len(chunk)) {
		if st, _, _, _ := c.write(big, off, chunk, 0); st != sOK {
			t.Fatal("WRITE", st)
		}
	}
	if st, _ := c.commit(big); st != sOK {
		t.Fatal("COMMIT", st)
	}
	if st, _, _, _ := c.write(big, 0, []byte("overwritten"), 0); st != sOK {
		t.Fatal("WRITE", st)
	}
	c.getattr(big)
	if !control("control2") {
		return // the kernel is writing back everything now: nothing to tell
	}
	if n, _ := dirtyPages(t, filepath.Join(e.dir, "big")); n == 0 {
		t.Fatal("an UNSTABLE overwrite inside a 128 KiB file was written back at once; want it left in the page cache")
	}
}
