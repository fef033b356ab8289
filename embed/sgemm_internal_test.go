package embed

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestPackedGemmMatchesGonum checks the assembly kernels (and their row
// tails) against gonum's blas32 on the shapes the encoder uses and odd ones.
func TestPackedGemmMatchesGonum(t *testing.T) {
	if panelWidth == 0 {
		t.Skip("no AVX2+FMA or AVX-512 on this CPU: the gonum path is used")
	}
	// Every kernel this CPU can run, not only the one it would choose.
	widths := []int{16}
	if panelWidth == 32 {
		widths = append(widths, 32)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, width := range widths {
		for _, sz := range []struct{ m, k, n int }{
			{1, 256, 768}, {3, 5, 16}, {4, 1, 32}, {5, 512, 1536}, {7, 1536, 512}, {9, 3, 64}, {17, 7, 96}, {67, 256, 512}, {130, 512, 512},
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
			d.packWidth(width)
			got := make([]float32, sz.m*sz.n)
			d.start(got, sz.m)
			d.mulAdd(got, a, sz.m)
			for i := range got {
				if diff := math.Abs(float64(got[i] - want[i])); diff > 1e-4*math.Sqrt(float64(sz.k)) {
					t.Fatalf("width %d m=%d k=%d n=%d: element %d = %v, gonum %v", width, sz.m, sz.k, sz.n, i, got[i], want[i])
				}
			}
		}
	}
}
