package embed

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/semfs/semfs/integration/require"
)

// TestBF16WeightsGemmMatchesReference checks kern6x16w, kern4x16w and
// kern1x16w (bf16 weights, fp32 inputs and sums) against the exact product of
// the fp32 input and the bf16-rounded weights, which they must match up to
// fp32 summation, on the encoder's shapes, on row counts that take each
// kernel (m = 12, 16, 65, 130 take blocks of six) and on odd k (kern1x16w's
// tail); mulBias must set c whatever it held, and nothing past
// the m rows of c may change.
func TestBF16WeightsGemmMatchesReference(t *testing.T) {
	if !useBF16W {
		// Every x86-64 CI machine has AVX2+FMA (2013 on).
		require.Environment(t, "no AVX2+FMA on this CPU: the bf16-weights kernel is untested")
	}
	rng := rand.New(rand.NewPCG(13, 14))
	for _, sz := range []struct{ m, k, n int }{
		{1, 1, 16}, {1, 5, 32}, {2, 7, 16}, {3, 256, 768}, {4, 1, 16}, {4, 512, 1536}, {5, 9, 48},
		{7, 1536, 512}, {8, 256, 512}, {9, 3, 64}, {12, 5, 16}, {16, 256, 768}, {65, 512, 512}, {130, 512, 1536},
	} {
		a, d := randomProduct(rng, sz.m, sz.k, sz.n)
		exact := exactProduct(a, d, sz.m, func(f float32) float64 { return float64(f) }, bf16f)
		d.pack(kernBF16W)
		if d.wbf == nil || d.w != nil || d.packed != nil {
			t.Fatalf("m=%d k=%d n=%d: not packed for the bf16-weights kernel alone", sz.m, sz.k, sz.n)
		}
		const canary = 12345
		got := make([]float32, (sz.m+1)*sz.n)
		for i := range got {
			got[i] = float32(math.NaN())
		}
		for i := sz.m * sz.n; i < len(got); i++ {
			got[i] = canary
		}
		d.mulBias(&gemmScratch{}, got, a, sz.m)
		for i, v := range got[sz.m*sz.n:] {
			if v != canary {
				t.Fatalf("m=%d k=%d n=%d: wrote past c's rows at %d: %v", sz.m, sz.k, sz.n, i, v)
			}
		}
		tol := 1e-5 * math.Sqrt(float64(sz.k))
		for i := range exact {
			if diff := math.Abs(float64(got[i]) - exact[i]); !(diff <= tol) {
				t.Fatalf("m=%d k=%d n=%d: element %d = %v, exact product on bf16 weights %v", sz.m, sz.k, sz.n, i, got[i], exact[i])
			}
		}
	}
}

// TestSixesLeavesNoExtraSingleRows: the blocks of six taken from m rows leave
// a remainder that blocks of four cover down to m%4 single rows, as blocks
// of four alone would, and one more block of six would not.
func TestSixesLeavesNoExtraSingleRows(t *testing.T) {
	for m := 0; m <= 300; m++ {
		a := sixes(m)
		ok := func(a int) bool { return a >= 0 && 6*a <= m && (m-6*a)%4 == m%4 }
		if !ok(a) || ok(a+1) || ok(a+2) {
			t.Fatalf("sixes(%d) = %d", m, a)
		}
	}
}
