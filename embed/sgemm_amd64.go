package embed

import "golang.org/x/sys/cpu"

// haveFMA reports whether the AVX2+FMA kernels in sgemm_amd64.s can run.
// It is fixed at start-up, like the CPU it describes.
var haveFMA = cpu.X86.HasAVX2 && cpu.X86.HasFMA

//go:noescape
func kern4x16(a *float32, lda int, b *float32, k int, c *float32, ldc int)

//go:noescape
func kern1x16(a *float32, b *float32, k int, c *float32)

// packedGemm computes c += a·B for row-major a (m×k) and c (m×n), where B
// (k×n) was laid out by packPanels. Rows are taken in blocks of rowBlock so
// that a block of a and one 16-column panel of B stay in cache while the
// kernel sweeps them.
func packedGemm(m, n, k int, a, packed, c []float32) {
	const rowBlock = 64
	if m == 0 {
		return
	}
	_ = a[m*k-1]
	_ = c[m*n-1]
	_ = packed[n*k-1]
	for i0 := 0; i0 < m; i0 += rowBlock {
		i1 := min(i0+rowBlock, m)
		for j := 0; j < n; j += 16 {
			panel := &packed[j*k]
			i := i0
			for ; i+4 <= i1; i += 4 {
				kern4x16(&a[i*k], k, panel, k, &c[i*n+j], n)
			}
			for ; i < i1; i++ {
				kern1x16(&a[i*k], panel, k, &c[i*n+j])
			}
		}
	}
}
