package servertest

import (
	"os"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Evict drops p's pages from the page cache and reports whether they are all
// gone (mincore), so that the next read of p must wait for the disk: the front
// ends answer a read of cached pages on the connection's reader and hand any
// other to a goroutine, and their tests need both kinds.
//
// Pages a server sent with sendfile stay referenced by the socket until the
// peer has acknowledged them, and the kernel drops no referenced page: Evict
// tries again for up to two seconds before it gives up.
func Evict(t testing.TB, p string) bool {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() == 0 {
		return true
	}
	m, err := unix.Mmap(int(f.Fd()), 0, int(fi.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(m)
	vec := make([]byte, (len(m)+os.Getpagesize()-1)/os.Getpagesize())
	for deadline := time.Now().Add(2 * time.Second); ; {
		if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
			t.Fatal(err)
		}
		if !resident(t, m, vec) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// resident reports whether any page of the mapping m is in memory (mincore(2):
// bit 0 of each byte of vec says so of one page).
func resident(t testing.TB, m, vec []byte) bool {
	t.Helper()
	if _, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(len(m)), uintptr(unsafe.Pointer(&vec[0]))); errno != 0 {
		t.Fatal(errno)
	}
	for _, v := range vec {
		if v&1 != 0 {
			return true
		}
	}
	return false
}
