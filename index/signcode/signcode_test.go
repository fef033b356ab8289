package signcode_test

import (
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/semfs/semfs/index/signcode"
)

// TestNearestIsTheMLeastDistances: on generated vectors of several sizes,
// Distances equals a bit count done here, and Nearest equals the m least
// (distance, index) pairs by a plain sort, uncoded entries never among them.
func TestNearestIsTheMLeastDistances(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, dims := range []int{384, 512, 70} {
		w := signcode.Words(dims)
		for _, n := range []int{1, 50, 700} {
			codes := make([]uint64, n*w)
			coded := make([]bool, n)
			v := make([]float32, dims)
			for i := range n {
				for j := range v {
					v[j] = float32(r.NormFloat64())
				}
				signcode.Put(codes[i*w:(i+1)*w], v)
				coded[i] = r.IntN(10) != 0
			}
			for j := range v {
				v[j] = float32(r.NormFloat64())
			}
			q := make([]uint64, w)
			signcode.Put(q, v)
			for _, m := range []int{1, 7, n / 2, n, n + 5} {
				dist := make([]uint16, n)
				hist := make([]int, dims+1)
				signcode.Distances(dist, hist, codes, q, coded, 1, uint16(dims+1))
				type pair struct{ d, i int }
				var all []pair
				for i := 1; i < n; i++ {
					if !coded[i] {
						continue
					}
					d := 0
					for k := range w {
						d += bits.OnesCount64(q[k] ^ codes[i*w+k])
					}
					if int(dist[i]) != d {
						t.Fatalf("dims %d n %d: dist[%d] = %d, want %d", dims, n, i, dist[i], d)
					}
					all = append(all, pair{d, i})
				}
				slices.SortFunc(all, func(a, b pair) int {
					if a.d != b.d {
						return a.d - b.d
					}
					return a.i - b.i
				})
				var want []int
				for _, p := range all[:min(m, len(all))] {
					want = append(want, p.i)
				}
				slices.Sort(want)
				got := signcode.Nearest(dist, hist, m, 1)
				if !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
					t.Fatalf("dims %d n %d m %d: Nearest = %v, want %v", dims, n, m, got, want)
				}
			}
		}
	}
}

// BenchmarkDistances is the coarse pass over 40,000 codes of 512 d (the
// passage index of the mixed load after a few rounds), every tenth uncoded.
func BenchmarkDistances(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	const n, w = 40_000, 8
	codes := make([]uint64, n*w)
	coded := make([]bool, n)
	for i := range codes {
		codes[i] = r.Uint64()
	}
	for i := range coded {
		coded[i] = i%10 != 0
	}
	q := codes[:w:w]
	dist := make([]uint16, n)
	hist := make([]int, 513)
	b.SetBytes(n * w * 8)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		clear(hist)
		signcode.Distances(dist, hist, codes, q, coded, 1, 513)
	}
}
