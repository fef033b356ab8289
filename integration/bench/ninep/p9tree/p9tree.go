// Package p9tree does to whole trees through a 9P client what a mount's
// tools do: the benchmarks' loads (p9load's remove, BenchmarkFollow's rm -r)
// share it.
package p9tree

import (
	"fmt"

	"github.com/hugelgupf/p9/p9"
	"golang.org/x/sys/unix"
)

// RemoveAll removes name, a directory under parent, and everything below
// it, as rm -r does through a mount: the directory's entries read with
// Treaddir of count bytes, each file unlinked (Tunlinkat), each
// subdirectory removed the same way, then the directory itself. It returns
// how many files (not directories) it removed.
func RemoveAll(parent p9.File, name string, count uint32) (files int, err error) {
	_, d, err := parent.Walk([]string{name})
	if err != nil {
		return 0, fmt.Errorf("walk %s: %w", name, err)
	}
	defer d.Close()
	_, lister, err := d.Walk(nil)
	if err != nil {
		return 0, fmt.Errorf("clone %s: %w", name, err)
	}
	if _, _, err := lister.Open(p9.ReadOnly); err != nil {
		lister.Close()
		return 0, fmt.Errorf("open %s: %w", name, err)
	}
	var ents []p9.Dirent
	for off := uint64(0); ; {
		batch, err := lister.Readdir(off, count)
		if err != nil {
			lister.Close()
			return 0, fmt.Errorf("readdir %s: %w", name, err)
		}
		if len(batch) == 0 {
			break
		}
		off = batch[len(batch)-1].Offset
		ents = append(ents, batch...)
	}
	lister.Close()
	for _, e := range ents {
		switch {
		case e.Name == "." || e.Name == "..":
		case e.QID.Type == p9.TypeDir:
			n, err := RemoveAll(d, e.Name, count)
			files += n
			if err != nil {
				return files, err
			}
		default:
			if err := d.UnlinkAt(e.Name, 0); err != nil {
				return files, fmt.Errorf("unlink %s/%s: %w", name, e.Name, err)
			}
			files++
		}
	}
	if err := parent.UnlinkAt(name, unix.AT_REMOVEDIR); err != nil {
		return files, fmt.Errorf("rmdir %s: %w", name, err)
	}
	return files, nil
}
