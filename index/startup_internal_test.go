package index

import (
	"math"
	"math/rand"
	"slices"
	"testing"

	"github.com/semfs/semfs/index/signcode"
)

// TestNewHayASCIIMatchesGeneral: the fast path Open builds records' keyword
// entries and names with must give exactly what the general path (haystack,
// joinHay, names: NFKC and folding) gives, for every ASCII record.
func TestNewHayASCIIMatchesGeneral(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	const chars = "abcXYZ09.-_ /"
	word := func(max int) string {
		b := make([]byte, r.Intn(max+1))
		for i := range b {
			b[i] = chars[r.Intn(len(chars)-1)] // no '/'
		}
		return string(b)
	}
	paths := []string{"a", "a.b", ".bashrc", "x/.hidden", "a./b.", "A/a/A.a", "dir/file.tar.gz", "Quarterly Report.PDF"}
	for range 2000 {
		var segs []string
		for range 1 + r.Intn(4) {
			s := word(8)
			if s == "" || s == "." || s == ".." {
				s = "s"
			}
			segs = append(segs, s)
		}
		paths = append(paths, join(segs))
	}
	for i, p := range paths {
		if checkPath("t", p) != nil {
			continue
		}
		s := &stored{CreatedBy: word(6), Task: word(20)}
		for range r.Intn(4) {
			s.RelatedApps = append(s.RelatedApps, word(6))
		}
		if i%5 == 0 {
			s.RelatedApps = append(s.RelatedApps, s.CreatedBy, "") // repeats and empties
		}
		got, ok := newHayASCII(p, s)
		if !ok {
			t.Fatalf("%q: not taken as ASCII", p)
		}
		ns, own := nameParts(p, s.CreatedBy, s.RelatedApps)
		want := hayEntry{path: p, joined: joinHay(haystack(p, s)), names: ns, own: own, tagged: s.tagged()}
		if got.path != want.path || got.joined != want.joined || !slices.Equal(got.names, want.names) || got.own != want.own || got.tagged != want.tagged {
			t.Fatalf("%q %+v:\n got %q %q\nwant %q %q", p, s, got.joined, got.names, want.joined, want.names)
		}
	}
	if _, ok := newHayASCII("café/menu.txt", &stored{}); ok {
		t.Fatal("a non-ASCII path took the ASCII path")
	}
	if _, ok := newHayASCII("menu.txt", &stored{Task: "ﬁle"}); ok {
		t.Fatal("a non-ASCII task took the ASCII path")
	}
}

func join(segs []string) string {
	out := segs[0]
	for _, s := range segs[1:] {
		out += "/" + s
	}
	return out
}

// TestPutSignsMatchesComparison: the branch-free sign codes equal v[j] > 0
// bit by bit, for signed zeros, subnormals, infinities and lengths that are
// not a multiple of 64.
func TestPutSignsMatchesComparison(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	special := []float32{0, float32(math.Copysign(0, -1)), math.SmallestNonzeroFloat32, -math.SmallestNonzeroFloat32,
		float32(math.Inf(1)), float32(math.Inf(-1)), math.MaxFloat32, -math.MaxFloat32, 1, -1}
	for _, n := range []int{1, 63, 64, 65, 384, 512} {
		v := make([]float32, n)
		for i := range v {
			if r.Intn(4) == 0 {
				v[i] = special[r.Intn(len(special))]
			} else {
				v[i] = float32(r.NormFloat64())
			}
		}
		s := &vecSet{dims: n}
		got := make([]uint64, s.codeWords())
		for i := range got {
			got[i] = ^uint64(0) // must be overwritten
		}
		signcode.Put(got, v)
		for j, f := range v {
			if bit := got[j/64]>>(j%64)&1 == 1; bit != (f > 0) {
				t.Fatalf("n=%d: bit %d is %v for %v", n, j, bit, f)
			}
		}
		for j := n; j < len(got)*64; j++ {
			if got[j/64]>>(j%64)&1 == 1 {
				t.Fatalf("n=%d: bit %d past the end is set", n, j)
			}
		}
	}
}
