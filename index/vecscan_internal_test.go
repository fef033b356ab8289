package index

import (
	"math/rand"
	"testing"
)

// TestCoarseScanFindsNearest: over exactMax vectors the scan goes through sign
// bits first; the vectors planted near the query still come back first with
// their exact similarity, the candidates' similarities are exact, and the
// sampled mean and deviation are close to the exact ones.
func TestCoarseScanFindsNearest(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	const dims, n = 128, exactMax + 5000
	s := newVecSet(dims)
	q := randUnit(r, dims)
	var near []int
	for i := range n {
		v := randUnit(r, dims)
		if i%2500 == 7 { // planted: the query plus noise
			for j := range v {
				v[j] = q[j] + 0.3*v[j]
			}
			near = append(near, i)
		}
		s.put(string(rune('a'+i%26))+string(rune(i)), vecClient, v, i)
	}
	pathOf := func(slot int) string { return s.paths[slot] } // slot == position here
	got := s.scan(q, []int{3, 4}, pathOf, 20)
	want := s.scanExact(q, func(slot int) bool { return slot == 3 || slot == 4 }, 20)
	if len(got.top) != 20 {
		t.Fatalf("%d results", len(got.top))
	}
	for i := range near {
		if got.top[i] != want.top[i] {
			t.Errorf("rank %d: %+v, exact %+v", i, got.top[i], want.top[i])
		}
	}
	for slot, sim := range want.known {
		if got.known[slot] != sim {
			t.Errorf("candidate %d: %v, exact %v", slot, got.known[slot], sim)
		}
	}
	if d := got.mean - want.mean; d > 0.01 || d < -0.01 || got.std < want.std*0.8 || got.std > want.std*1.2 || got.max != want.max {
		t.Errorf("stats %v %v %v, exact %v %v %v", got.mean, got.std, got.max, want.mean, want.std, want.max)
	}
}
