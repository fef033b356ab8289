package server

import (
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"sync/atomic"
)

// File is an open regular file. ReadAt and WriteAt may be called concurrently.
// Written data is reported to the index as one ChangeWrite per quiet period, and at
// once when the File is closed (9P clunk), so updatedAt follows the data.
type File struct {
	fs      *FS
	f       *os.File
	path    string // guarded by fs.openMu: renames move it
	write   bool
	written atomic.Bool
}

func (f *FS) newFile(osf *os.File, p string, write bool) *File {
	fl := &File{fs: f, f: osf, path: p, write: write}
	f.openMu.Lock()
	f.open[fl] = struct{}{}
	f.openMu.Unlock()
	return fl
}

// renameOpen moves the paths of open files at or below oldPath.
// Precondition: f.ns held, so no other rename interleaves.
func (f *FS) renameOpen(oldPath, newPath string) {
	f.openMu.Lock()
	defer f.openMu.Unlock()
	for fl := range f.open {
		if fl.path == oldPath {
			fl.path = newPath
		} else if strings.HasPrefix(fl.path, oldPath+"/") {
			fl.path = newPath + fl.path[len(oldPath):]
		}
	}
}

// Path is the file's current core path: where it was opened, moved by renames
// made through the FS since.
func (fl *File) Path() string {
	fl.fs.openMu.Lock()
	defer fl.fs.openMu.Unlock()
	return fl.path
}

// ReadAt reads len(b) bytes at off; io.EOF as os.File does.
func (fl *File) ReadAt(b []byte, off int64) (int, error) {
	n, err := fl.f.ReadAt(b, off)
	if err != nil && n == 0 {
		if errors.Is(err, io.EOF) {
			return n, err
		}
		return n, wrap("read", fl.Path(), err)
	}
	return n, err
}

// WriteAt writes b at off. The data is in the page cache when it returns; Sync
// makes it durable.
func (fl *File) WriteAt(b []byte, off int64) (int, error) {
	if off < 0 {
		return 0, E("write", KindInvalid, fl.Path(), constError("negative offset"))
	}
	fl.fs.gate.RLock()
	n, err := fl.f.WriteAt(b, off)
	fl.fs.gate.RUnlock()
	if n > 0 {
		fl.written.Store(true)
		fl.fs.touches.add(fl.Path())
	}
	if err != nil {
		return n, wrap("write", fl.Path(), err)
	}
	return n, nil
}

// Truncate changes the file's size.
func (fl *File) Truncate(size int64) error {
	fl.fs.gate.RLock()
	err := fl.f.Truncate(size)
	fl.fs.gate.RUnlock()
	if err != nil {
		return wrap("truncate", fl.Path(), err)
	}
	fl.written.Store(true)
	fl.fs.touches.add(fl.Path())
	return nil
}

// Sync makes the file's data and metadata durable (fsync), and the index's
// record of it as durable: the file's pending updatedAt is sent and the sink
// flushed.
func (fl *File) Sync() error {
	if err := fl.f.Sync(); err != nil {
		return wrap("sync", fl.Path(), err)
	}
	if fl.written.Load() {
		fl.fs.touches.flushPath(fl.Path())
	}
	return fl.fs.flushSink(context.Background())
}

// Stat returns the open file's attributes.
func (fl *File) Stat() (Attr, error) {
	return statx(int(fl.f.Fd()), "", "stat", fl.Path())
}

// Close releases the file; if it was written, its ChangeWrite is sent now.
func (fl *File) Close() error {
	fl.fs.openMu.Lock()
	delete(fl.fs.open, fl)
	fl.fs.openMu.Unlock()
	err := fl.f.Close()
	if fl.written.Load() {
		fl.fs.touches.flushPath(fl.Path())
	}
	return wrap("close", fl.Path(), err)
}
