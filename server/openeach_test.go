package server_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/semfs/semfs/server"
)

// OpenEach opens each path as OpenRead does, on generated trees (randomTree:
// a FIFO opens without blocking, a symlink is never followed), and reads a
// file's bytes as the OS does (compared with the backing file's). Every index
// is answered exactly once, and no descriptor outlives the call.
func TestOpenEachIsOpenReadOfEach(t *testing.T) {
	r := seeded(t, 31)
	for round := range 20 {
		root, paths := randomTree(t, r)
		fsys, err := server.New(root, server.Options{BackingCheck: -1})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
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
			// Read from the start in chunks of random sizes (ReadAt moves
			// nothing): the file's bytes, then io.EOF.
			var seq []byte
			for {
				chunk := make([]byte, 1+r.IntN(3000))
				n, err := rd.Read(chunk)
				seq = append(seq, chunk[:n]...)
				if err == io.EOF && n == 0 {
					break
				}
				if err != nil || n == 0 || len(seq) > len(want) {
					t.Fatalf("round %d: %q: Read after %d bytes: %d, %v", round, p, len(seq)-n, n, err)
				}
			}
			if string(seq) != string(want) {
				t.Fatalf("round %d: %q: Read read %d bytes, the file has %d", round, p, len(seq), len(want))
			}
		})
		for i, n := range answered {
			if n != 1 {
				t.Fatalf("round %d: %q answered %d times", round, paths[i], n)
			}
		}
		// The core keeps directories' descriptors (dirFDs): a pass with them
		// kept must leave no more open than it found. A leak grows the count
		// at every pass; anything else in the process opening a file at that
		// moment would have to do so three times over to look like one.
		leaked := true
		for try := 0; try < 3 && leaked; try++ {
			fds := openFDs(t)
			fsys.OpenEach(ctx, paths, func(int, *server.Reader, error) {})
			leaked = openFDs(t) > fds
		}
		if leaked {
			t.Fatalf("round %d: each pass of OpenEach left more descriptors open", round)
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
