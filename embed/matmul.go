package embed

import (
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
)

// dense is a fully connected layer: in×out weights stored row-major (one row
// per input feature, as TF stores kernels) and an optional bias of length out.
// When the CPU has AVX2+FMA or AVX-512 the weights are kept instead as
// panels of 16 or 32 columns (packed, panel wide), the layout the assembly
// kernels stream; otherwise gonum's blas32 multiplies from w. With AMX they
// are kept as bfloat16 tiles (bf, see packBF16) for the tile kernel, with
// AVX512_BF16 as bfloat16 panels for kern8x32bf, and on AVX2 CPUs without
// AVX-512 as bfloat16 panels for the bf16-weights kernels (wbf, see
// packWeightsBF16).
type dense struct {
	in, out int
	w       []float32
	b       []float32
	packed  []float32
	panel   int
	bf      []uint16  // packed by packBF16 in panels of bfPanel columns
	bfPanel int       // 16: AMX tiles; 32: kern8x32bf panels
	bTile   []float32 // AMX: 16 copies of b, where mulBias starts c from
	wbf     []uint16  // kernBF16W: packed by packWeightsBF16
}

// gemmScratch is the per-worker memory a product may need beyond its
// operands: the bf16 copy of a, and the padded last row block of c (32 rows
// for the AMX kernel, 8 for kern8x32bf).
type gemmScratch struct {
	a16 []uint16
	c   []float32
}

// kernel names how a dense layer's products are computed.
type kernel uint8

const (
	kernFP32  kernel = iota // AVX-512 / AVX2+FMA panels, or gonum
	kernAMX                 // AMX-BF16 tiles (amxMulAdd)
	kernBF16                // AVX512_BF16 dot products (bf16MulAdd)
	kernBF16W               // AVX2+FMA on bf16 weights, fp32 products (weightsBF16Gemm)
)

// pack prepares the weights for kernel k: bf16 tiles or panels when k asks for
// them (and the shape fits: k a multiple of 32, n of 32), else the fp32 panel
// layout: panel j holds columns wj..wj+w-1 of every row, contiguous, so the
// kernel reads B strictly sequentially.
func (d *dense) pack(k kernel) {
	if k == kernBF16W && useBF16W && d.out%16 == 0 {
		d.wbf, d.w = packWeightsBF16(d.w, d.in, d.out), nil
		return
	}
	if (k == kernAMX || k == kernBF16) && d.in%amxK == 0 && d.out%amxN == 0 {
		d.bfPanel = 32
		if k == kernAMX {
			d.bfPanel = 16
		}
		d.bf, d.w = packBF16(d.w, d.in, d.out, d.bfPanel), nil
		if k == kernAMX && d.b != nil {
			d.bTile = amxBiasTile(d.b)
		}
		return
	}
	d.packWidth(panelWidth)
}

func (d *dense) packWidth(w int) {
	if w == 0 || d.out%w != 0 {
		return
	}
	d.packed, d.panel = packPanels(d.w, d.in, d.out, w), w
	// The row-major copy is no longer read; dropping it halves the model's
	// resident weights (about 20 MB).
	d.w = nil
}

func packPanels(w []float32, k, n, width int) []float32 {
	p := make([]float32, k*n)
	for j := 0; j < n; j += width {
		panel := p[j*k : j*k+width*k]
		for r := 0; r < k; r++ {
			copy(panel[r*width:(r+1)*width], w[r*n+j:r*n+j+width])
		}
	}
	return p
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
func (d *dense) mulAdd(s *gemmScratch, c, a []float32, n int) {
	if d.bf != nil {
		d.bfMulAdd(s, c, a, n, float32(math.Inf(-1)))
		return
	}
	if d.wbf != nil {
		weightsBF16Gemm(n, d.out, d.in, a[:n*d.in], d.wbf, c[:n*d.out])
		return
	}
	if d.packed != nil {
		packedGemm(d.panel, n, d.out, d.in, a[:n*d.in], d.packed, c[:n*d.out])
		return
	}
	blas32.Gemm(blas.NoTrans, blas.NoTrans, 1,
		blas32.General{Rows: n, Cols: d.in, Stride: d.in, Data: a[:n*d.in]},
		blas32.General{Rows: d.in, Cols: d.out, Stride: d.out, Data: d.w},
		1, blas32.General{Rows: n, Cols: d.out, Stride: d.out, Data: c[:n*d.out]})
}

// mulBias sets c to b + a·W (start, then mulAdd). The AMX kernel starts its
// blocks of c from the bias directly instead of from rows filled with it.
func (d *dense) mulBias(s *gemmScratch, c, a []float32, n int) {
	if d.bTile != nil {
		amxMulAdd(s, d.in, d.out, d.bf, c[:n*d.out], a[:n*d.in], n, float32(math.Inf(-1)), d.bTile)
		return
	}
	d.start(c, n)
	d.mulAdd(s, c, a, n)
}

// bfMulAdd adds max(a, lo)·W to c on the bf16 kernel W was packed for.
func (d *dense) bfMulAdd(s *gemmScratch, c, a []float32, n int, lo float32) {
	if d.bfPanel == 16 {
		amxMulAdd(s, d.in, d.out, d.bf, c[:n*d.out], a[:n*d.in], n, lo, nil)
		return
	}
	bf16MulAdd(s, d.in, d.out, d.bf, c[:n*d.out], a[:n*d.in], n, lo)
}

// mulAddReLU adds ReLU(a)·W to c. The bf16 paths apply the ReLU while they
// round a to bf16; the others clear a's negative values in place first.
func (d *dense) mulAddReLU(s *gemmScratch, c, a []float32, n int) {
	if d.bf != nil {
		d.bfMulAdd(s, c, a, n, 0)
		return
	}
	a = a[:n*d.in]
	for i, v := range a {
		a[i] = max(v, 0)
	}
	d.mulAdd(s, c, a, n)
}
