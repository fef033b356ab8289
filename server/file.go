package server

import (
	"errors"
	"io"
	"os"
	"sync/atomic"
)

// File is an open regular file. ReadAt and WriteAt may be called concurrently.
// Written data is reported to the index as one ChangeWrite per quiet period, and at
// once when the File is closed (9P clunk), so updatedAt follows the data.
type File struct {
	fs      *FS
	f       *os.File
	path    string
	write   bool
	written atomic.Bool
}

func (f *FS) newFile(osf *os.File, p string, write bool) *File {
	return &File{fs: f, f: osf, path: p, write: write}
}

// Path is the core path the file was opened at.
func (fl *File) Path() string { return fl.path }

// ReadAt reads len(b) bytes at off; io.EOF as os.File does.
func (fl *File) ReadAt(b []byte, off int64) (int, error) {
	n, err := fl.f.ReadAt(b, off)
	if err != nil && n == 0 {
		if errors.Is(err, io.EOF) {
			return n, err
		}
		return n, wrap("read", fl.path, err)
	}
	return n, err
}

// WriteAt writes b at off. The data is in the page cache when it returns; Sync
// makes it durable.
func (fl *File) WriteAt(b []byte, off int64) (int, error) {
	if off < 0 {
		return 0, E("write", KindInvalid, fl.path, constError("negative offset"))
	}
	fl.fs.gate.RLock()
	n, err := fl.f.WriteAt(b, off)
	fl.fs.gate.RUnlock()
	if n > 0 {
		fl.written.Store(true)
		fl.fs.touches.add(fl.path)
	}
	if err != nil {
		return n, wrap("write", fl.path, err)
	}
	return n, nil
}

// Truncate changes the file's size.
func (fl *File) Truncate(size int64) error {
	fl.fs.gate.RLock()
	err := fl.f.Truncate(size)
	fl.fs.gate.RUnlock()
	if err != nil {
		return wrap("truncate", fl.path, err)
	}
	fl.written.Store(true)
	fl.fs.touches.add(fl.path)
	return nil
}

// Sync makes the file's data and metadata durable (fsync).
func (fl *File) Sync() error {
	return wrap("sync", fl.path, fl.f.Sync())
}

// Stat returns the open file's attributes.
func (fl *File) Stat() (Attr, error) {
	fi, err := fl.f.Stat()
	if err != nil {
		return Attr{}, wrap("stat", fl.path, err)
	}
	return attrOf(fi), nil
}

// Fd exposes the descriptor for zero-copy paths in front ends; the File keeps
// ownership.
func (fl *File) Fd() uintptr { return fl.f.Fd() }

// Close releases the file; if it was written, its ChangeWrite is sent now.
func (fl *File) Close() error {
	err := fl.f.Close()
	if fl.written.Load() {
		fl.fs.touches.flushPath(fl.path)
	}
	return wrap("close", fl.path, err)
}
