package embed

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
)

// dense is a fully connected layer: in×out weights stored row-major (one row
// per input feature, as TF stores kernels) and an optional bias of length out.
type dense struct {
	in, out int
	w       []float32
	b       []float32
}

// start fills the n rows of c (n×out) with the bias, or zeroes them.
func (d *dense) start(c []float32, n int) {
	c = c[:n*d.out]
	if d.b == nil {
		clear(c)
		return
	}
	for i := 0; i < n; i++ {
		copy(c[i*d.out:(i+1)*d.out], d.b)
	}
}

// mulAdd adds a·W to c, where a is n×in and c is n×out, both row-major.
func (d *dense) mulAdd(c, a []float32, n int) {
	sgemmAcc(n, d.out, d.in, a[:n*d.in], d.w, c[:n*d.out])
}

// sgemmAcc computes c += a·b for row-major a (m×k), b (k×n), c (m×n).
func sgemmAcc(m, n, k int, a, b, c []float32) {
	blas32.Gemm(blas.NoTrans, blas.NoTrans, 1,
		blas32.General{Rows: m, Cols: k, Stride: k, Data: a},
		blas32.General{Rows: k, Cols: n, Stride: n, Data: b},
		1, blas32.General{Rows: m, Cols: n, Stride: n, Data: c})
}
