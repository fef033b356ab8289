package nfs

import (
	"io/fs"
	"syscall"
)

// billyFile is a cached open file handed through the billy interface: made
// by Create for fastCreate, or opened by go-nfs's attribute setting for the
// size a MKDIR or SYMLINK asks (which fails: neither makes a regular file),
// and closed at the end of the same call. Close releases the descriptor to the
// cache instead of closing it. READ and WRITE never come here (fastpath.go
// answers them), so the data methods refuse.
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

// Truncate serves the size of go-nfs's attribute setting.
func (f *billyFile) Truncate(size int64) (err error) {
	defer f.b.h.guard("truncate", &err)
	defer f.b.h.invalidate()
	if err := f.e.f.Truncate(size); err != nil {
		return f.b.done("truncate", f.p, err)
	}
	f.e.dirty.Store(true)
	return f.b.done("truncate", f.p, nil)
}
