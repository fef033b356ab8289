package passage

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
)

// DirSource is a Source over the plain directory root, its files read as
// this process (tests, evaluation, tools); the daemon's reads go through the
// core as the caller instead (cmd/semfs).
func DirSource(x *Index, root string) Source {
	return Source{
		X: x,
		Stat: func(_ context.Context, paths []string) []FileState {
			out := make([]FileState, len(paths))
			for i, p := range paths {
				fi, err := os.Lstat(filepath.Join(root, p))
				switch {
				case err != nil:
					out[i].Err = err
				case !fi.Mode().IsRegular():
					out[i].Err = errors.New(p + ": not a regular file")
				default:
					out[i] = FileState{Size: fi.Size(), MTime: fi.ModTime().UnixNano()}
				}
			}
			return out
		},
		ReadEach: func(_ context.Context, paths []string, each func(int, io.ReaderAt, FileState)) {
			for i, p := range paths {
				readDirFile(filepath.Join(root, p), func(r io.ReaderAt, st FileState) { each(i, r, st) })
			}
		},
	}
}

// readDirFile opens name and calls each with it and its state, then closes it.
func readDirFile(name string, each func(io.ReaderAt, FileState)) {
	f, err := os.Open(name)
	if err != nil {
		each(nil, FileState{Err: err})
		return
	}
	defer f.Close()
	fi, err := f.Stat()
	switch {
	case err != nil:
		each(nil, FileState{Err: err})
	case !fi.Mode().IsRegular():
		each(nil, FileState{Err: errors.New(name + ": not a regular file")})
	default:
		each(f, FileState{Size: fi.Size(), MTime: fi.ModTime().UnixNano()})
	}
}
