package server_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/semfs/semfs/server"
)

// OpenEach opens each path as OpenRead does, on generated trees: regular
// files (their bytes compared with the backing file's, read by the OS),
// directories, FIFOs (opened without blocking), symlinks inside and outside
// the root (never followed), missing names and directories, a file used as
// a directory and the virtual tree; paths repeat and come in any order.
// Every index is answered exactly once, and no descriptor outlives the call.
func TestOpenEachIsOpenReadOfEach(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 31))
	for round := range 20 {
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
		fsys, err := server.New(root, server.Options{BackingCheck: -1})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		var paths []string
		for range 60 {
			p := names[r.IntN(len(names))]
			switch r.IntN(7) {
			case 0:
				p += "/f0" // through a file, a directory or a symlink
			case 1:
				p = filepath.Join(filepath.Dir(p), "missing")
			case 2:
				p = ".semfs/query"
			}
			paths = append(paths, filepath.ToSlash(filepath.Clean(p)))
		}
		answered := make([]int, len(paths))
		fsys.OpenEach(ctx, paths, func(i int, rd *server.Reader, err error) {
			answered[i]++
			p := paths[i]
			f, ferr := fsys.OpenRead(ctx, p)
			if f != nil {
				defer f.Close()
			}
			if (err == nil) != (ferr == nil) || err != nil && server.KindOf(err) != server.KindOf(ferr) {
				t.Fatalf("round %d: %q: OpenEach says %v, OpenRead %v", round, p, err, ferr)
			}
			if (rd == nil) != (err != nil) {
				t.Fatalf("round %d: %q: reader %v with error %v", round, p, rd, err)
			}
			if err != nil {
				var se *server.Error
				if !errors.As(err, &se) || se.Path != p {
					t.Fatalf("round %d: %q: error %v names another path", round, p, err)
				}
				return
			}
			a, err := rd.Stat()
			if err != nil {
				t.Fatalf("round %d: %q: Stat: %v", round, p, err)
			}
			fi, err := f.Stat()
			if err != nil || a.Size != fi.Size() || !a.Mtime.Equal(fi.ModTime()) || a.Mode.IsRegular() != fi.Mode().IsRegular() {
				t.Fatalf("round %d: %q: Stat %+v, OpenRead's %v (%v)", round, p, a, fi, err)
			}
			if !a.Mode.IsRegular() {
				return
			}
			want, err := os.ReadFile(filepath.Join(root, p))
			if err != nil {
				t.Fatal(err)
			}
			// The whole file, then a random range (short at the end: io.EOF).
			got := make([]byte, len(want)+1)
			n, err := rd.ReadAt(got, 0)
			if n != len(want) || err != io.EOF || string(got[:n]) != string(want) {
				t.Fatalf("round %d: %q: ReadAt read %d bytes (%v), the file has %d", round, p, n, err, len(want))
			}
			off := r.IntN(len(want) + 1)
			buf := make([]byte, r.IntN(5000))
			n, err = rd.ReadAt(buf, int64(off))
			wn := min(len(buf), len(want)-off)
			if n != wn || string(buf[:n]) != string(want[off:off+wn]) || (n < len(buf)) != (err == io.EOF) {
				t.Fatalf("round %d: %q: ReadAt(%d, %d) = %d, %v", round, p, len(buf), off, n, err)
			}
		})
		for i, n := range answered {
			if n != 1 {
				t.Fatalf("round %d: %q answered %d times", round, paths[i], n)
			}
		}
		// The core keeps directories' descriptors (dirFDs): a second pass,
		// with them kept, must leave as many open as it found.
		fds := openFDs(t)
		fsys.OpenEach(ctx, paths, func(int, *server.Reader, error) {})
		if now := openFDs(t); now != fds {
			t.Fatalf("round %d: %d descriptors open before OpenEach, %d after", round, fds, now)
		}
		// Once ctx is done, nothing is opened: each path gets its error.
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		fsys.OpenEach(cctx, paths[:5], func(i int, rd *server.Reader, err error) {
			if rd != nil || err == nil {
				t.Fatalf("round %d: %q opened under a done context", round, paths[i])
			}
		})
		fsys.Close()
	}
}

// openFDs counts this process's open descriptors.
func openFDs(t *testing.T) int {
	es, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(es)
}
