package server_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/semfs/semfs/server"
)

// LstatMany answers each path as Lstat does, on generated trees
// (randomTree); a path through a symlink is refused, as by Lstat.
func TestLstatManyIsLstatOfEach(t *testing.T) {
	r := seeded(t, 30)
	for round := range 20 {
		root, paths := randomTree(t, r)
		fsys, err := server.New(root, server.Options{BackingCheck: -1})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		attrs, errs := fsys.LstatMany(ctx, paths)
		for i, p := range paths {
			a, err := fsys.Lstat(ctx, p)
			if (err == nil) != (errs[i] == nil) || err != nil && server.KindOf(err) != server.KindOf(errs[i]) {
				t.Fatalf("round %d: %q: LstatMany says %v, Lstat %v", round, p, errs[i], err)
			}
			if err != nil {
				var se *server.Error
				if e, ok := errs[i].(*server.Error); ok {
					se = e
				}
				if se == nil || se.Path != p {
					t.Fatalf("round %d: %q: error %v names another path", round, p, errs[i])
				}
				continue
			}
			a.Atime, attrs[i].Atime = time.Time{}, time.Time{}
			if a != attrs[i] {
				t.Fatalf("round %d: %q: LstatMany %+v, Lstat %+v", round, p, attrs[i], a)
			}
		}
		fsys.Close()
	}
}

// randomTree lays out a generated tree for the batched calls' tests: files
// (up to 40,000 bytes of letters), directories at several depths, FIFOs,
// symlinks to directories inside and outside the root; and returns its root
// and 60 paths into it, repeating and in any order: those names, paths
// through a file, a directory or a symlink (two beside each other, so that a
// parent that fails fails both), missing names and missing directories, and
// the virtual tree.
func randomTree(t *testing.T, r *rand.Rand) (root string, paths []string) {
	t.Helper()
	base := t.TempDir()
	root, outside := filepath.Join(base, "root"), filepath.Join(base, "outside")
	for _, d := range []string{root, outside, filepath.Join(outside, "d")} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(outside, "d", "f0"), []byte("secret"), 0o644)
	dirs := []string{""}
	var names []string
	for i := range 30 {
		parent := dirs[r.IntN(len(dirs))]
		p := filepath.Join(parent, fmt.Sprintf("n%d", i))
		full := filepath.Join(root, p)
		switch r.IntN(6) {
		case 0, 1:
			b := make([]byte, r.IntN(40000))
			for j := range b {
				b[j] = byte('a' + r.IntN(26))
			}
			os.WriteFile(full, b, 0o644)
		case 2:
			os.Mkdir(full, 0o755)
			dirs = append(dirs, p)
		case 3:
			os.Symlink(filepath.Join(root, dirs[r.IntN(len(dirs))]), full)
		case 4:
			if err := syscall.Mkfifo(full, 0o644); err != nil {
				t.Fatal(err)
			}
		default:
			os.Symlink(filepath.Join(outside, "d"), full)
		}
		names = append(names, p)
	}
	for range 60 {
		p := names[r.IntN(len(names))]
		switch r.IntN(7) {
		case 0:
			p += "/f0" // through a file, a directory or a symlink
		case 6:
			p += "/f1" // beside f0: a parent that fails fails both
		case 1:
			p = filepath.Join(filepath.Dir(p), "missing")
		case 2:
			p = ".semfs/query"
		}
		paths = append(paths, filepath.ToSlash(filepath.Clean(p)))
	}
	return root, paths
}
