package content

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// statsOracle counts the regular files under data as the rules put
// them (read from the files, not from the index): over max bytes "too big", a
// NUL in the first 8 KiB "binary", invalid UTF-8 "not UTF-8", else indexed.
func statsOracle(t *testing.T, data string, max int64) (files int, bytesIn int64, skipped map[string]int) {
	t.Helper()
	skipped = map[string]int{"too big": 0, "binary": 0, "not UTF-8": 0}
	filepath.Walk(data, func(p string, fi os.FileInfo, err error) error {
		if err != nil || !fi.Mode().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case int64(len(b)) > max:
			skipped["too big"]++
		case bytes.IndexByte(b[:min(len(b), 8<<10)], 0) >= 0:
			skipped["binary"]++
		case !utf8.Valid(b):
			skipped["not UTF-8"]++
		default:
			files++
			bytesIn += int64(len(b))
		}
		return nil
	})
	return files, bytesIn, skipped
}

// Stats keeps its skipped counts as entries come and go (writes that change a
// file's class, renames of files and directories, removals, a reload), instead
// of walking every entry at each status poll: after each generated round they
// equal the files' own classification.
func TestStatsCountEveryState(t *testing.T) {
	data, idx := t.TempDir(), t.TempDir()
	const max = 1 << 10 // open's cap
	x := open(t, data, idx)
	defer func() { x.Close() }()
	r := rand.New(rand.NewPCG(25, 7))
	body := func() string {
		switch r.IntN(4) {
		case 0:
			return strings.Repeat("too big ", max/8+1+r.IntN(50))
		case 1:
			return "bin\x00ary " + fmt.Sprint(r.IntN(100))
		case 2:
			return "caf\xe9 " + fmt.Sprint(r.IntN(100))
		}
		return "text " + fmt.Sprint(r.IntN(100)) + "\n"
	}
	paths := func() []string {
		var ps []string
		for _, f := range walk(t, data) {
			ps = append(ps, f.Path)
		}
		return ps
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for round := range 12 {
		for range 20 {
			ps := paths()
			switch op := r.IntN(10); {
			case op < 6 || len(ps) == 0:
				p := fmt.Sprintf("d%d/f%d", r.IntN(3), r.IntN(12))
				write(t, data, p, body())
				x.Apply([]Change{{Op: Written, Path: p}})
			case op < 8:
				p := ps[r.IntN(len(ps))]
				os.Remove(filepath.Join(data, p))
				x.Apply([]Change{{Op: Removed, Path: p}})
			case op < 9:
				from, to := fmt.Sprintf("d%d", r.IntN(3)), fmt.Sprintf("d%d", r.IntN(3))
				if _, err := os.Stat(filepath.Join(data, from)); err != nil || from == to {
					continue
				}
				os.RemoveAll(filepath.Join(data, to))
				if err := os.Rename(filepath.Join(data, from), filepath.Join(data, to)); err != nil {
					t.Fatal(err)
				}
				x.Apply([]Change{{Op: Renamed, Path: from, NewPath: to, IsDir: true}})
			default:
				p := ps[r.IntN(len(ps))]
				np := fmt.Sprintf("d%d/g%d", r.IntN(3), r.IntN(12))
				os.MkdirAll(filepath.Dir(filepath.Join(data, np)), 0o755)
				if err := os.Rename(filepath.Join(data, p), filepath.Join(data, np)); err != nil {
					t.Fatal(err)
				}
				x.Apply([]Change{{Op: Renamed, Path: p, NewPath: np}})
			}
		}
		if round%4 == 3 {
			// A reload: the counts come from the saved entries.
			if err := x.Close(); err != nil {
				t.Fatal(err)
			}
			x = open(t, data, idx)
			x.Reconcile(x.Begin(), nil, walk(t, data))
		}
		if err := x.Settle(ctx); err != nil {
			t.Fatal(err)
		}
		files, n, skipped := statsOracle(t, data, max)
		st := x.Stats()
		if st.Files != files || st.Bytes != n || fmt.Sprint(st.Skipped) != fmt.Sprint(skipped) {
			t.Fatalf("round %d: stats %+v, the files say %d files, %d bytes, skipped %v", round, st, files, n, skipped)
		}
	}
}

// readAll, given the size the indexer saw at open, reads exactly what a read
// to EOF reads, capped at limit+1 bytes, with its buffer reused across files of
// every size around the cap; and when the file grew past that size since, it
// still reads on to EOF.
func TestReadAllEqualsReadFile(t *testing.T) {
	dir := t.TempDir()
	const limit = 4096
	r := rand.New(rand.NewPCG(3, 25))
	var buf []byte
	for i := range 200 {
		n := []int{0, 1, 2, limit - 1, limit, limit + 1, limit + 2, 2 * limit, r.IntN(3 * limit)}[r.IntN(9)]
		want := make([]byte, n)
		for j := range want {
			want[j] = byte('a' + r.IntN(26))
		}
		p := filepath.Join(dir, fmt.Sprint(i))
		if err := os.WriteFile(p, want, 0o644); err != nil {
			t.Fatal(err)
		}
		size := int64(n)
		switch r.IntN(4) {
		case 0:
			size = -1 // grep's read: to EOF
		case 1:
			size = int64(r.IntN(n + 1)) // the file grew since its size was taken
		}
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		buf, err = readAll(f, buf, size, limit)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if w := want[:min(n, limit+1)]; !bytes.Equal(buf, w) {
			t.Fatalf("file of %d bytes (size given %d): read %d bytes, want %d", n, size, len(buf), len(w))
		}
	}
}

// sortPairs orders generated pairs as a stable sort by trigram does (the
// batch's files stay in order within a trigram), over batches of every size
// around the buffers' reuse.
func TestSortPairsIsAStableSortByTrigram(t *testing.T) {
	ix := newIndexer(1 << 20)
	r := rand.New(rand.NewPCG(25, 25))
	for round := range 50 {
		n := []int{0, 1, 2, 100, r.IntN(20000)}[r.IntN(5)]
		ix.pairs = ix.pairs[:0]
		for i := range n {
			var t uint32
			switch r.IntN(3) {
			case 0:
				t = r.Uint32() & 0xffffff
			case 1:
				t = uint32(r.IntN(64)) << 12 // differ in the high twelve bits only
			default:
				t = uint32(r.IntN(64)) // in the low twelve only
			}
			ix.pairs = append(ix.pairs, uint64(t)<<32|uint64(i))
		}
		want := slices.Clone(ix.pairs)
		slices.SortStableFunc(want, func(a, b uint64) int { return cmp.Compare(a>>32, b>>32) })
		if got := ix.sortPairs(); !slices.Equal(got, want) {
			t.Fatalf("round %d: %d pairs sorted differently", round, n)
		}
	}
}
