package nfs_test

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const sTooSmall = 10005

// TestReaddirCounts: READDIR lists as many entries as fit in count (the
// whole READDIR3resok, RFC 1813), as ganesha and Linux's nfsd do, and answers
// NFS3ERR_TOOSMALL only when not even the next entry fits; go-nfs refused
// every count below 1024, even for an empty directory. On generated
// directories (names of 1 to 255 bytes) and counts, every name comes back exactly once, each reply within count. A file
// is NOTDIR whatever the count.
func TestReaddirCounts(t *testing.T) {
	{
		dir := filepath.Join(t.TempDir(), "export")
		if err := os.Mkdir(dir, 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(dir, 0o777); err != nil { // the tests act as several uids
			t.Fatal(err)
		}
		e := newEnvAt(t, dir)
		c, root := e.client("/")
		if st, _ := c.create(root, "f", 0, 0); st != sOK {
			t.Fatalf("create f: %d", st)
		}
		_, f, _ := c.lookup(root, "f")
		if st, _ := c.call(pReaddir, (&enc{}).opaque(f).u64(0).u64(0).u32(64)); st != sNotDir {
			t.Errorf("READDIR of a file at count 64: %d, want NOTDIR", st)
		}
		rng := rand.New(rand.NewPCG(5, 12))
		for i := range 30 {
			name := "d" + strings.Repeat("x", i)
			if st, _ := c.mkdir(root, name); st != sOK {
				t.Fatalf("mkdir: %d", st)
			}
			_, d, _ := c.lookup(root, name)
			want := []string{".", ".."}
			for range rng.IntN(8) {
				n := strings.Repeat(string(rune('a'+rng.IntN(26))), 1+rng.IntN(255))
				if !slices.Contains(want, n) {
					want = append(want, n)
					if err := os.WriteFile(filepath.Join(dir, name, n), nil, 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			count := uint32(64 + rng.IntN(1024))
			var got []string
			var cookie, verf uint64
			for round := 0; ; round++ {
				if round > 100 {
					t.Fatalf("%s at count %d does not end", name, count)
				}
				st, dd := c.call(pReaddir, (&enc{}).opaque(d).u64(cookie).u64(verf).u32(count))
				if st == sTooSmall {
					// The next entry may not fit (a reply holds 104 bytes
					// and each entry 24 and its padded name): ask with more room.
					if count < 104+24+256 {
						count *= 2
						continue
					}
					t.Fatalf("%s at count %d, round %d: TOOSMALL", name, count, round)
				}
				if st != sOK {
					t.Fatalf("%s: status %d", name, st)
				}
				if size := dd.rest(); size > int(count) {
					t.Errorf("%s: a reply of %d bytes at count %d", name, size, count)
				}
				dd.postOp()
				verf = dd.u64()
				for dd.u32() == 1 {
					dd.u64()
					got = append(got, string(dd.opaque()))
					cookie = dd.u64()
				}
				if dd.u32() == 1 {
					break
				}
			}
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("%s at count %d: %d names, want %d", name, count, len(got), len(want))
			}
		}
	}
}
