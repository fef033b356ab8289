package passage

import (
	"context"
	"errors"
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
		Open: func(_ context.Context, p string) (*os.File, error) { return os.Open(filepath.Join(root, p)) },
	}
}
