package feed

import (
	"math/rand/v2"
	"testing"
)

// TestEventsIsASlice checks the chunked history against the plain slice it
// replaced: random pushes (batches up to a few chunks long) and drops from the
// front, and after each step every view taken so far still reads what it read
// when it was taken (a reader holds one without the lock while the writer
// pushes and drops). Events are pushed with consecutive revs, so the slice is
// all of them from the oldest kept on: revs first..first+n-1.
func TestEventsIsASlice(t *testing.T) {
	for seed := range uint64(4) {
		r := rand.New(rand.NewPCG(seed, 1))
		var h events
		first, n := uint64(1), 0 // the slice: revs first, first+1, ... (n of them)
		type taken struct {
			v     view
			first uint64
			n     int
		}
		var views []taken
		for step := 0; step < 120; step++ {
			switch {
			case r.IntN(3) > 0:
				k := r.IntN(3 * chunkLen / 2)
				if r.IntN(4) == 0 {
					k = r.IntN(4)
				}
				batch := make([]Event, k)
				for i := range batch {
					batch[i] = Event{Rev: first + uint64(n+i), Path: "p"}
				}
				h.push(batch...)
				n += k
			default:
				k := r.IntN(n + 1)
				if r.IntN(4) == 0 {
					k = n // everything
				}
				h.drop(k)
				first, n = first+uint64(k), n-k
			}
			if h.Len() != n {
				t.Fatalf("seed %d step %d: Len %d, want %d", seed, step, h.Len(), n)
			}
			for _, i := range probes(r, n, h.off) {
				if got := h.at(i).Rev; got != first+uint64(i) {
					t.Fatalf("seed %d step %d: at(%d) rev %d, want %d", seed, step, i, got, first+uint64(i))
				}
			}
			if len(h.chunks) > (n+chunkLen-1)/chunkLen+1 {
				t.Fatalf("seed %d step %d: %d chunks kept for %d events", seed, step, len(h.chunks), n)
			}
			if r.IntN(5) == 0 {
				views = append(views, taken{h.view(), first, n})
			}
			for k, tk := range views {
				if tk.v.n != tk.n {
					t.Fatalf("seed %d step %d: view %d holds %d, took %d", seed, step, k, tk.v.n, tk.n)
				}
				for _, i := range probes(r, tk.n, tk.v.off) {
					if got := tk.v.at(i).Rev; got != tk.first+uint64(i) {
						t.Fatalf("seed %d step %d: view %d at(%d) rev %d, took %d", seed, step, k, i, got, tk.first+uint64(i))
					}
				}
			}
		}
	}
}

// probes are the places of n events, the oldest at slot off of the first
// chunk, a check reads: both ends, the last of each chunk and the first of
// the next, and one at random in each chunk's stretch.
func probes(r *rand.Rand, n, off int) []int {
	if n == 0 {
		return nil
	}
	ps := []int{0, n - 1}
	for e := chunkLen - off; e < n+chunkLen; e += chunkLen {
		for _, i := range []int{e - 1, e, e - 1 - r.IntN(chunkLen)} {
			if i >= 0 && i < n {
				ps = append(ps, i)
			}
		}
	}
	return ps
}
