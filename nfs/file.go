package nfs

import (
	"io"
	"io/fs"
	"syscall"
)

// billyFile is one go-nfs use of a cached open file: created by OpenFile or
// Create, closed at the end of the same call. Close releases the descriptor to
// the cache instead of closing it. For a WRITE that asked DATA_SYNC or FILE_SYNC,
// Close fsyncs, so go-nfs's FILE_SYNC answer is true; an UNSTABLE WRITE is
// answered UNSTABLE by the record stream and made durable by COMMIT.
type billyFile struct {
	b      *billyFS
	e      *fdEntry
	p      string
	off    int64
	closed bool
}

// Name is the core path: go-nfs stats it after CREATE.
func (f *billyFile) Name() string { return f.p }

func (f *billyFile) Write(data []byte) (n int, err error) {
	defer f.b.h.guard("write", &err)
	defer f.b.h.invalidate()
	f.b.h.s.maybePanic("write")
	n, err = f.e.f.WriteAt(data, f.off)
	f.off += int64(n)
	if n > 0 {
		f.e.dirty.Store(true)
	}
	return n, f.b.done("write", f.p, err)
}

func (f *billyFile) Read(data []byte) (int, error) {
	n, err := f.ReadAt(data, f.off)
	f.off += int64(n)
	return n, err
}

func (f *billyFile) ReadAt(data []byte, off int64) (n int, err error) {
	defer f.b.h.guard("read", &err)
	f.b.h.s.maybePanic("read")
	n, err = f.e.f.ReadAt(data, off)
	if err == io.EOF {
		return n, err
	}
	return n, f.b.done("read", f.p, err)
}

func (f *billyFile) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += f.off
	case io.SeekEnd:
		a, err := f.e.f.Stat()
		if err != nil {
			return 0, f.b.done("seek", f.p, err)
		}
		offset += a.Size
	}
	if offset < 0 {
		return 0, &fs.PathError{Op: "seek", Path: "/" + f.p, Err: syscall.EINVAL}
	}
	f.off = offset
	return offset, nil
}

func (f *billyFile) Close() (err error) {
	defer f.b.h.guard("close", &err)
	if f.closed {
		return nil
	}
	f.closed = true
	defer f.b.h.s.fds.release(f.e)
	r := f.b.req()
	if r.proc == procWrite && r.stable != stableUnstable && f.e.dirty.Load() {
		f.e.dirty.Store(false)
		if err := f.e.f.Sync(); err != nil {
			f.e.dirty.Store(true)
			return f.b.done("write", f.p, err)
		}
	}
	return nil
}

func (f *billyFile) Lock() error   { return nil }
func (f *billyFile) Unlock() error { return nil }

// Truncate serves SETATTR's size.
func (f *billyFile) Truncate(size int64) (err error) {
	defer f.b.h.guard("truncate", &err)
	defer f.b.h.invalidate()
	if err := f.e.f.Truncate(size); err != nil {
		return f.b.done("truncate", f.p, err)
	}
	f.e.dirty.Store(true)
	return f.b.done("truncate", f.p, nil)
}
