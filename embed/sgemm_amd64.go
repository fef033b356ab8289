package embed

import "golang.org/x/sys/cpu"

// panelWidth is the column width of packed weight panels, chosen once from
// the CPU: 32 for the AVX-512 kernels, 16 for the AVX2+FMA ones, 0 for none
// (the products then run on gonum's blas32). It is fixed at start-up, like
// the CPU it describes.
var panelWidth = func() int {
	switch {
	case cpu.X86.HasAVX512F:
		return 32
	case cpu.X86.HasAVX2 && cpu.X86.HasFMA:
		return 16
	}
	return 0
}()

//go:noescape
func kern4x16(a *float32, lda int, b *float32, k int, c *float32, ldc int)

//go:noescape
func kern1x16(a *float32, b *float32, k int, c *float32)

//go:noescape
func kern8x32(a *float32, lda int, b *float32, k int, c *float32, ldc int)

//go:noescape
func kern1x32(a *float32, b *float32, k int, c *float32)

// packedGemm computes c += a·B for row-major a (m×k) and c (m×n), where B
// (k×n) was laid out by packPanels with width w. Rows are taken in blocks of
// rowBlock so that a block of a and one panel of B stay in cache while the
// kernel sweeps them.
func packedGemm(w, m, n, k int, a, packed, c []float32) {
	const rowBlock = 64
	if m == 0 {
		return
	}
	_ = a[m*k-1]
	_ = c[m*n-1]
	_ = packed[n*k-1]
	for i0 := 0; i0 < m; i0 += rowBlock {
		i1 := min(i0+rowBlock, m)
		for j := 0; j < n; j += w {
			panel := &packed[j*k]
			i := i0
			if w == 32 {
				for ; i+8 <= i1; i += 8 {
					kern8x32(&a[i*k], k, panel, k, &c[i*n+j], n)
				}
				for ; i < i1; i++ {
					kern1x32(&a[i*k], panel, k, &c[i*n+j])
				}
				continue
			}
			for ; i+4 <= i1; i += 4 {
				kern4x16(&a[i*k], k, panel, k, &c[i*n+j], n)
			}
			for ; i < i1; i++ {
				kern1x16(&a[i*k], panel, k, &c[i*n+j])
			}
		}
	}
}

// rowAlign is the row block of the selected kernel; the encoder pads its
// token rows to a multiple of it.
var rowAlign = map[int]int{32: 8, 16: 4}[panelWidth]
