package embed

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestBF16GemmMatchesReference checks the bf16 kernels this CPU can run (AMX
// tiles, AVX512_BF16) on the encoder's shapes and on row counts around their
// row blocks (32 and 8): against the exact product of the bf16-rounded
// operands, which they must match up to fp32 summation, and loosely against
// gonum's fp32 product, which they approximate.
func TestBF16GemmMatchesReference(t *testing.T) {
	var kernels []kernel
	if useAMX {
		kernels = append(kernels, kernAMX)
	}
	if useBF16 {
		kernels = append(kernels, kernBF16)
	}
	if len(kernels) == 0 {
		t.Skip("no AMX-BF16 (granted by the kernel) or AVX512_BF16 on this CPU: the fp32 kernels are used")
	}
	for _, kern := range kernels {
		testBF16Gemm(t, kern)
	}
}

func testBF16Gemm(t *testing.T, kern kernel) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, sz := range []struct{ m, k, n int }{
		{1, 512, 512}, {5, 256, 768}, {8, 32, 32}, {16, 32, 32}, {31, 64, 96}, {32, 256, 512}, {33, 512, 1536},
		{67, 1536, 512}, {130, 512, 1536}, {512, 256, 768},
	} {
		a, d := randomProduct(rng, sz.m, sz.k, sz.n)
		fp32 := make([]float32, sz.m*sz.n)
		d.start(fp32, sz.m)
		d.mulAdd(&gemmScratch{}, fp32, a, sz.m) // gonum: not packed yet
		exact := exactProduct(a, d, sz.m, bf16f, bf16f)
		d.pack(kern)
		if d.bf == nil {
			t.Fatalf("kernel %d m=%d k=%d n=%d: not packed for bf16", kern, sz.m, sz.k, sz.n)
		}
		got := make([]float32, sz.m*sz.n)
		d.start(got, sz.m)
		// A scratch that already holds garbage, as a reused workspace does.
		s := &gemmScratch{a16: make([]uint16, 64*1536), c: make([]float32, 32*1536)}
		for i := range s.a16 {
			s.a16[i] = 0x7FC0 // NaN
		}
		d.mulAdd(s, got, a, sz.m)
		// mulBias: c = bias + a·W whatever c held (the AMX kernel starts
		// from the bias instead of reading c).
		set := make([]float32, sz.m*sz.n)
		for i := range set {
			set[i] = float32(math.NaN())
		}
		d.mulBias(s, set, a, sz.m)
		sq := math.Sqrt(float64(sz.k))
		for i := range set {
			if diff := math.Abs(float64(set[i]) - exact[i]); !(diff <= 1e-5*sq) {
				t.Fatalf("kernel %d m=%d k=%d n=%d: mulBias element %d = %v, exact bf16 product %v", kern, sz.m, sz.k, sz.n, i, set[i], exact[i])
			}
		}
		for i := range got {
			if diff := math.Abs(float64(got[i]) - exact[i]); diff > 1e-5*sq {
				t.Fatalf("kernel %d m=%d k=%d n=%d: element %d = %v, exact bf16 product %v", kern, sz.m, sz.k, sz.n, i, got[i], exact[i])
			}
			if diff := math.Abs(float64(got[i] - fp32[i])); diff > 1e-2*sq {
				t.Fatalf("kernel %d m=%d k=%d n=%d: element %d = %v, gonum fp32 %v", kern, sz.m, sz.k, sz.n, i, got[i], fp32[i])
			}
		}
	}
}

// exactProduct is b + a·W for the m rows of a and d's unpacked weights, in
// float64, with each input value taken as ra gives it and each weight as rw
// does (bf16f: rounded to bfloat16 first, as a bf16 kernel takes it).
func exactProduct(a []float32, d dense, m int, ra, rw func(float32) float64) []float64 {
	exact := make([]float64, m*d.out)
	for i := 0; i < m; i++ {
		for j := 0; j < d.out; j++ {
			sum := float64(d.b[j])
			for p := 0; p < d.in; p++ {
				sum += ra(a[i*d.in+p]) * rw(d.w[p*d.out+j])
			}
			exact[i*d.out+j] = sum
		}
	}
	return exact
}

// bf16f is f rounded to bfloat16, as a float64.
func bf16f(f float32) float64 { return float64(math.Float32frombits(uint32(bf16(f)) << 16)) }

// TestToBF16MatchesScalar checks the vector rounding (and its floor, the
// fused ReLU) against bf16, on ties and on values around them.
func TestToBF16MatchesScalar(t *testing.T) {
	if !useAMX && !useBF16 {
		t.Skip("toBF16 serves the bf16 kernels only")
	}
	rng := rand.New(rand.NewPCG(5, 6))
	src := make([]float32, 4096)
	for i := range src {
		switch i % 4 {
		case 0:
			src[i] = math.Float32frombits(rng.Uint32()&0x3FFF0000 | 0x8000) // a tie
		case 1:
			src[i] = math.Float32frombits(rng.Uint32()&0x3FFF0000 | 0x7FFF)
		default:
			src[i] = rng.Float32()*200 - 100
		}
	}
	dst := make([]uint16, len(src))
	for _, lo := range []float32{float32(math.Inf(-1)), 0, -1.5} {
		toBF16(&dst[0], &src[0], len(src), lo)
		for i, f := range src {
			if want := bf16(max(f, lo)); dst[i] != want {
				t.Fatalf("toBF16(%v, lo %v) = %#04x, want %#04x", f, lo, dst[i], want)
			}
		}
	}
}
