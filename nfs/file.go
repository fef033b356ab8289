package nfs

import (
	"io/fs"
	"syscall"
)

// billyFile is a new file's cached descriptor handed through the billy
// interface: made by billyFS.Create for fastCreate and closed at the end of
// the same call. Close releases the descriptor to the cache instead of
// closing it. READ, WRITE and SETATTR never come here (fastpath.go,
// setattr.go answer them), so the data methods refuse.
type billyFile struct {
	b      *billyFS
	e      *fdEntry
	p      string
	closed bool
}

// Name is the core path: fastCreate stats it after CREATE.
func (f *billyFile) Name() string { return f.p }

// errNoData: READ and WRITE are answered natively, never through billy.
func (f *billyFile) errNoData(op string) error {
	return &fs.PathError{Op: op, Path: "/" + f.p, Err: syscall.EINVAL}
}

func (f *billyFile) Write([]byte) (int, error)         { return 0, f.errNoData("write") }
func (f *billyFile) Read([]byte) (int, error)          { return 0, f.errNoData("read") }
func (f *billyFile) ReadAt([]byte, int64) (int, error) { return 0, f.errNoData("read") }
func (f *billyFile) Seek(int64, int) (int64, error)    { return 0, f.errNoData("seek") }

func (f *billyFile) Close() (err error) {
	if f.closed {
		return nil
	}
	f.closed = true
	f.b.h.s.fds.release(f.e)
	return nil
}

func (f *billyFile) Lock() error   { return nil }
func (f *billyFile) Unlock() error { return nil }

func (f *billyFile) Truncate(int64) error { return f.errNoData("truncate") }
