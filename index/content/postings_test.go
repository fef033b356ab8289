package content

import (
	"math/rand/v2"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
)

// TestPostingsAgainstMap checks the two-level table against a Go map, the
// structure it replaced, on generated trigrams (adds, removals by each, visit
// order).
func TestPostingsAgainstMap(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 25))
	ps := newPostings()
	want := map[uint32]*roaring.Bitmap{}
	for round := range 20 {
		for range 500 {
			// Few prefixes, so pages fill, empty and come back.
			tri := uint32(r.IntN(4))<<16 | uint32(r.IntN(3))<<8 | uint32(r.IntN(256))
			if round%3 == 2 {
				tri = r.Uint32() & 0xffffff
			}
			id := r.Uint32N(1000)
			ps.getOrNew(tri).Add(id)
			if want[tri] == nil {
				want[tri] = roaring.New()
			}
			want[tri].Add(id)
		}
		drop := r.Uint32N(1000)
		last, first := uint32(0), true
		ps.each(func(tri uint32, b *roaring.Bitmap) bool {
			if !first && tri <= last {
				t.Fatalf("each: %06x after %06x: not in trigram order", tri, last)
			}
			last, first = tri, false
			if !b.Equals(want[tri]) {
				t.Fatalf("posting %06x = %v, want %v", tri, b, want[tri])
			}
			if b.Contains(drop) {
				delete(want, tri)
				return false
			}
			return true
		})
		if ps.len() != len(want) {
			t.Fatalf("round %d: len %d, want %d", round, ps.len(), len(want))
		}
		for tri, b := range want {
			if g := ps.get(tri); g == nil || !g.Equals(b) {
				t.Fatalf("get(%06x) = %v, want %v", tri, g, b)
			}
		}
		for range 200 {
			tri := r.Uint32() & 0xffffff
			if (ps.get(tri) == nil) != (want[tri] == nil) {
				t.Fatalf("get(%06x): present %v, want %v", tri, ps.get(tri) != nil, want[tri] != nil)
			}
		}
	}
}
