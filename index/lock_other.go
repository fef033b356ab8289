//go:build !unix

package index

import (
	"os"
	"path/filepath"
)

// lockDir: no advisory lock on this platform; the file only marks the directory.
func lockDir(dir string) (*os.File, error) {
	return os.OpenFile(filepath.Join(dir, "lock"), os.O_RDWR|os.O_CREATE, 0o600)
}
