package int8vec

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas/blas32"
)

// TestDot compares Dot (the kernel where the CPU has one) with the sum
// written out, on every length to 600 and on the extremes of int8, whose
// products are the largest the kernel's pairs add.
func TestDot(t *testing.T) {
	for _, kernel := range []bool{hasKernel, false} {
		testDot(t, kernel)
	}
}

func testDot(t *testing.T, kernel bool) {
	rng := rand.New(rand.NewPCG(1, 2))
	for n := 0; n <= 600; n++ {
		a, b := make([]int8, n), make([]int8, n+3) // b may be longer
		for i := range a {
			a[i] = int8(rng.IntN(256) - 128)
		}
		for i := range b {
			b[i] = int8(rng.IntN(256) - 128)
		}
		if n%7 == 0 {
			for i := range a {
				a[i], b[i] = -128, -128
			}
		}
		var want int32
		for i := range a {
			want += int32(a[i]) * int32(b[i])
		}
		if got := dot(a, b, kernel); got != want {
			t.Fatalf("n=%d: Dot %d, want %d (kernel %v)", n, got, want, kernel)
		}
	}
}

// TestCosineError bounds the copies' cosine against the exact one (in
// float64) on random vectors, Gaussian and skewed (a few large components,
// which leave the others fewer steps), at USE-lite's and MiniLM's sizes.
func TestCosineError(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, dims := range []int{384, 512} {
		for _, skew := range []bool{false, true} {
			worst := 0.0
			for range 2000 {
				a, b := randVec(rng, dims, skew), randVec(rng, dims, skew)
				if rng.IntN(3) == 0 { // close pairs too, where a threshold falls
					for i := range b {
						b[i] = a[i] + 0.3*b[i]
					}
				}
				qa, qb := make([]int8, dims), make([]int8, dims)
				fa, fb := Put(qa, a), Put(qb, b)
				var dot, na, nb float64
				for i := range a {
					dot += float64(a[i]) * float64(b[i])
					na += float64(a[i]) * float64(a[i])
					nb += float64(b[i]) * float64(b[i])
				}
				exact := max(0, min(1, dot/math.Sqrt(na*nb)))
				worst = max(worst, math.Abs(Cosine(qa, qb, fa, fb)-exact))
			}
			if worst > 0.01 {
				t.Errorf("dims %d skew %v: worst error %.4f", dims, skew, worst)
			}
			t.Logf("dims %d skew %v: worst error %.5f", dims, skew, worst)
		}
	}
}

func TestPutZero(t *testing.T) {
	q := []int8{1, 2, 3}
	if f := Put(q, make([]float32, 3)); f != 0 || q[0] != 0 || q[1] != 0 || q[2] != 0 {
		t.Fatalf("zero vector: factor %v, copy %v", f, q)
	}
	if c := Cosine(q, q, 0, 0); c != 0 {
		t.Fatalf("zero vector's cosine %v", c)
	}
}

func randVec(rng *rand.Rand, n int, skew bool) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(rng.NormFloat64())
		if skew && rng.IntN(50) == 0 {
			v[i] *= 8
		}
	}
	return v
}

// BenchmarkScan is the meaning scan's access pattern: 1,500 vectors of
// 512 d scattered over 60,000, as int8 copies and as float32 (blas32.Dot, the
// exact cosines' product).
func BenchmarkScan(b *testing.B) {
	const n, dims, k = 60_000, 512, 1_500
	rng := rand.New(rand.NewPCG(5, 6))
	f32 := make([]float32, n*dims)
	for i := range f32 {
		f32[i] = float32(rng.NormFloat64())
	}
	q8 := make([]int8, n*dims)
	for i := range n {
		Put(q8[i*dims:(i+1)*dims], f32[i*dims:(i+1)*dims])
	}
	ids := make([]int, k)
	for i := range ids {
		ids[i] = rng.IntN(n)
	}
	qv := f32[:dims]
	qq := q8[:dims]
	b.Run("int8", func(b *testing.B) {
		var s int32
		for b.Loop() {
			for _, id := range ids {
				s += Dot(qq, q8[id*dims:(id+1)*dims])
			}
		}
		_ = s
	})
	b.Run("float32", func(b *testing.B) {
		var s float32
		for b.Loop() {
			for _, id := range ids {
				s += blas32.Dot(blas32.Vector{N: dims, Inc: 1, Data: qv}, blas32.Vector{N: dims, Inc: 1, Data: f32[id*dims : (id+1)*dims]})
			}
		}
		_ = s
	})
}
