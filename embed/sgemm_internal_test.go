package embed

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestPackedGemmMatchesGonum checks the assembly kernels (and their row
// tails) against gonum's blas32 on the shapes the encoder uses and odd ones.
func TestPackedGemmMatchesGonum(t *testing.T) {
	if !haveFMA {
		t.Skip("no AVX2+FMA on this CPU: the gonum path is used")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, sz := range []struct{ m, k, n int }{
		{1, 256, 768}, {3, 5, 16}, {4, 1, 32}, {5, 512, 1536}, {7, 1536, 512}, {9, 3, 48}, {67, 256, 512}, {130, 512, 512},
	} {
		a := make([]float32, sz.m*sz.k)
		w := make([]float32, sz.k*sz.n)
		bias := make([]float32, sz.n)
		for i := range a {
			a[i] = rng.Float32()*2 - 1
		}
		for i := range w {
			w[i] = rng.Float32()*2 - 1
		}
		for i := range bias {
			bias[i] = rng.Float32()
		}
		d := dense{in: sz.k, out: sz.n, w: w, b: bias}
		want := make([]float32, sz.m*sz.n)
		d.start(want, sz.m)
		d.mulAdd(want, a, sz.m) // gonum: not packed yet
		d.pack()
		got := make([]float32, sz.m*sz.n)
		d.start(got, sz.m)
		d.mulAdd(got, a, sz.m)
		for i := range got {
			if diff := math.Abs(float64(got[i] - want[i])); diff > 1e-4*math.Sqrt(float64(sz.k)) {
				t.Fatalf("m=%d k=%d n=%d: element %d = %v, gonum %v", sz.m, sz.k, sz.n, i, got[i], want[i])
			}
		}
	}
}
