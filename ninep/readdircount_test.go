package ninep_test

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hugelgupf/p9/linux"
	"github.com/hugelgupf/p9/p9"
)

// TestReaddirSmallCount: Treaddir in rounds of a count too small for some
// entries never loses one. On generated directories (names of 1 to 255
// bytes) and counts, each round returns the entries that fit; when the next
// one does not fit even alone, it answers EINVAL (as getdents(2)) and the
// caller, asking again from the same offset with a larger count, gets it. Every
// name comes back exactly once. Before, the entry that did not fit was
// dropped by p9's encoder and the empty reply read as the end of the listing.
func TestReaddirSmallCount(t *testing.T) {
	e := newEnv(t)
	_, root := dial(t, "unix", e.unix, "", 0, 65536)
	rng := rand.New(rand.NewPCG(7, 29))
	for i := range 40 {
		dir := filepath.Join(e.export, "d"+string(rune('a'+i%26))+strings.Repeat("x", i/26))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		want := map[string]bool{}
		for range rng.IntN(6) {
			name := strings.Repeat(string(rune('a'+rng.IntN(26))), 1+rng.IntN(255))
			if !want[name] {
				want[name] = true
				if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
		count := []uint32{32, 64, 128, 256, 512}[rng.IntN(5)]
		d := walk(t, root, filepath.Base(dir))
		if _, _, err := d.Open(p9.ReadOnly); err != nil {
			t.Fatal(err)
		}
		var got []string
		var off uint64
		for c, rounds := count, 0; ; rounds++ {
			if rounds > 100 {
				t.Fatalf("%s at count %d: listing does not end", dir, count)
			}
			ents, err := d.Readdir(off, c)
			var errno linux.Errno
			if errors.As(err, &errno) && errno == linux.EINVAL {
				c *= 2 // the next entry does not fit: ask again with more room
				continue
			}
			if err != nil {
				t.Fatalf("%s at offset %d count %d: %v", dir, off, c, err)
			}
			if len(ents) == 0 {
				break
			}
			for _, en := range ents {
				got = append(got, en.Name)
				off = en.Offset
			}
			c = count
		}
		d.Close()
		var names []string
		for _, n := range got {
			if n != "." && n != ".." {
				names = append(names, n)
			}
		}
		slices.Sort(names)
		wantNames := make([]string, 0, len(want))
		for n := range want {
			wantNames = append(wantNames, n)
		}
		slices.Sort(wantNames)
		if len(got) != len(names)+2 || !slices.Equal(names, wantNames) {
			t.Errorf("%s at count %d: listed %d entries %v, want . .. and %v", dir, count, len(got), lens(got), lens(wantNames))
		}
	}
}

// lens shows names by their lengths (they are a letter repeated).
func lens(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		if len(n) > 3 {
			n = n[:1] + "×" + strconv.Itoa(len(n))
		}
		out[i] = n
	}
	return out
}
