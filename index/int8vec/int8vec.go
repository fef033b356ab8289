// Package int8vec keeps float vectors as int8 copies, for the approximate
// cosines of a large nearest-neighbour scan: a 512-d vector is 512 bytes
// instead of float32's 2,048, and a scan of scattered vectors is bound by the
// bytes it reads from memory, not by the arithmetic. A copy's cosine with
// another differs from the exact one by about 1e-3 (TestCosineError), so it
// may choose candidates and estimate a distribution; a score a user sees
// comes from the float32 vectors.
//
// The passage index's meaning scan (index/passage/meaning.go) uses it for
// its statistics sample and for the cosines of the sign-bit pass's pool.
package int8vec

import "math"

// Put writes v into dst (len(v) long), each component scaled so that the
// largest in magnitude is ±127, and returns v's factor: the cosine of two
// vectors a and b is about Dot(qa, qb)·fa·fb. A zero vector's factor is 0.
// v must be finite.
func Put(dst []int8, v []float32) float32 {
	var peak, sum float64
	for _, x := range v {
		f := float64(x)
		peak = max(peak, math.Abs(f))
		sum += f * f
	}
	if peak == 0 || sum == 0 {
		clear(dst[:len(v)])
		return 0
	}
	s := 127 / peak
	for i, x := range v {
		dst[i] = int8(math.Round(float64(x) * s))
	}
	return float32(peak / (127 * math.Sqrt(sum)))
}

// Cosine is the approximate cosine of two copies with factors fa and fb,
// clamped to [0, 1] as the exact scans clamp theirs.
func Cosine(a, b []int8, fa, fb float32) float64 {
	return max(0, min(1, float64(Dot(a, b))*float64(fa)*float64(fb)))
}

// Dot is the dot product of a and b (len(b) at least len(a)). Its int32
// cannot overflow below 131,000 components.
func Dot(a, b []int8) int32 { return dot(a, b, hasKernel) }

// dot is Dot with the kernel or with the loop alone (the tests run both).
func dot(a, b []int8, kernel bool) int32 {
	b = b[:len(a)]
	n := 0
	var s int32
	if kernel {
		n = len(a) &^ 15
		if n > 0 {
			s = dotKernel(&a[0], &b[0], n)
		}
	}
	for i := n; i < len(a); i++ {
		s += int32(a[i]) * int32(b[i])
	}
	return s
}
