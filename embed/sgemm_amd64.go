package embed

import (
	"math"
	"os"

	"golang.org/x/sys/cpu"
)

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

//go:noescape
func kern4x16w(a *float32, lda int, b *uint16, k int, c *float32, ldc int)

//go:noescape
func kern6x16w(a *float32, lda int, b *uint16, k int, c *float32, ldc int)

//go:noescape
func kern1x16w(a *float32, b *uint16, k int, c *float32)

// packWeightsBF16 lays out the k×n row-major w as kern6x16w, kern4x16w and
// kern1x16w read it: panels of 16 columns, each row of a panel 16 bf16
// (rounded to nearest, ties to even) in which dword j holds column j in its
// low half and column 8+j in its high half.
func packWeightsBF16(w []float32, k, n int) []uint16 {
	p := make([]uint16, k*n)
	for j := 0; j < n; j += 16 {
		panel := p[j*k : (j+16)*k]
		for r := 0; r < k; r++ {
			row, src := panel[r*16:(r+1)*16], w[r*n+j:r*n+j+16]
			for c := range 8 {
				row[2*c], row[2*c+1] = bf16(src[c]), bf16(src[8+c])
			}
		}
	}
	return p
}

// sixes is how many blocks of six rows to take from m rows before blocks of
// four and single rows: the most that leave as few single rows as blocks of
// four alone would (m%4), so that rows padded to four (the encoder's
// rowAlign) never fall to kern1x16w.
func sixes(m int) int {
	a := m / 6
	if (m-6*a)%4 != m%4 {
		a--
	}
	return a
}

// weightsBF16Gemm is packedGemm on weights packed by packWeightsBF16: c +=
// a·B with a and c fp32, in blocks of rowBlock rows so that a block of a
// stays in cache while the kernel sweeps the panels.
func weightsBF16Gemm(m, n, k int, a []float32, packed []uint16, c []float32) {
	const rowBlock = 64
	if m == 0 {
		return
	}
	_ = a[m*k-1]
	_ = c[m*n-1]
	_ = packed[n*k-1]
	for i0 := 0; i0 < m; i0 += rowBlock {
		i1 := min(i0+rowBlock, m)
		sixRows := sixes(i1 - i0)
		for j := 0; j < n; j += 16 {
			panel := &packed[j*k]
			i := i0
			for six := sixRows; six > 0; six-- {
				kern6x16w(&a[i*k], k, panel, k, &c[i*n+j], n)
				i += 6
			}
			for ; i+4 <= i1; i += 4 {
				kern4x16w(&a[i*k], k, panel, k, &c[i*n+j], n)
			}
			for ; i < i1; i++ {
				kern1x16w(&a[i*k], panel, k, &c[i*n+j])
			}
		}
	}
}

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

// useAMX says whether the bf16 tile kernel can run here, decided once at
// start-up from the CPU and the kernel's grant; useBF16 whether kern8x32bf
// can (AVX512_BF16).
var (
	useAMX  = amxUsable()
	useBF16 = cpu.X86.HasAVX512F && cpu.X86.HasAVX512BF16
)

// useBF16W says whether the bf16-weights kernels (kern6x16w, kern4x16w,
// kern1x16w: bf16 weights, fp32 products) can run: they need AVX2 and FMA.
var useBF16W = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// bestKernel is the kernel the encoder's products run on: AMX tiles when
// the CPU and Linux allow them; else kern8x32bf (AVX512_BF16) on an AMD CPU
// that has it; else, on a CPU without AVX-512, kern6x16w and kern4x16w (fp32
// products on bf16 weights); else fp32.
//
// On Intel kern8x32bf ran at 0.75× the fp32 kernel (VDPBF16PS issues on one
// port, FMA on two); AMD's Zen 4 and 5 issue it at the FMA rate with twice
// the products: 203 against 107 GFLOP/s on the encoder's shapes
// (BenchmarkGemm, AMD EPYC, 2026-12-01), and tagging 10,000 files through
// the daemon took 8.3 s instead of 13.5 s.
//
// kern4x16w computes as fast as kern4x16 and reads half the bytes: the
// model's 19.7 MB of fp32 weights do not stay in a 16 MB L3, and a pass of a
// few rows waits on them. On an AVX2 EPYC (2026-12-03) one pass's products
// for 4 rows took 0.54-0.88 ms instead of 1.71-1.73 (BenchmarkGemmRows), and
// 512 rows ran at the same rate; kern6x16w's blocks of six then took long
// batches from 71 to 73-78 GFLOP/s. AVX-512 CPUs without bf16 keep fp32:
// not measured.
var bestKernel = chooseKernel(os.Getenv(envKernel))

// bf16Fast says whether kern8x32bf beats the fp32 kernel on this CPU: an
// AMD CPU with AVX512_BF16 (see bestKernel).
var bf16Fast = useBF16 && isAMD()

// cpuidVendor is CPUID leaf 0's vendor string, in register order.
//
//go:noescape
func cpuidVendor() (ebx, edx, ecx uint32)

func isAMD() bool {
	b, d, c := cpuidVendor()
	var v [12]byte
	for i := 0; i < 4; i++ {
		v[i], v[4+i], v[8+i] = byte(b>>(8*i)), byte(d>>(8*i)), byte(c>>(8*i))
	}
	return string(v[:]) == "AuthenticAMD"
}

// envKernel names an environment variable that picks the kernel: "fp32",
// "amx", "avx512-bf16" or "bf16-weights". A kernel this CPU cannot run, or
// any other value, leaves the default. It serves benchmarks (the same binary on each kernel)
// and anyone who wants the fp32 vectors exactly.
const envKernel = "SEMFS_EMBED_KERNEL"

func chooseKernel(want string) kernel {
	switch {
	case want == "fp32":
		return kernFP32
	case want == "avx512-bf16" && useBF16:
		return kernBF16
	case want == "bf16-weights" && useBF16W:
		return kernBF16W
	case useAMX:
		return kernAMX
	case bf16Fast:
		return kernBF16
	case useBF16W && panelWidth == 16:
		return kernBF16W
	}
	return kernFP32
}

// Shape of the AMX kernel's work: whole 32-wide steps along k (one tile of a
// holds 32 bf16 per row) and pairs of 16-column panels along n.
const (
	amxK = 32
	amxN = 32
)

//go:noescape
func amxGemm(cfg *byte, a *uint16, lda int, b *uint16, k32 int, c *float32, ldc int, m32 int, n32 int, bias *float32)

//go:noescape
func toBF16(dst *uint16, src *float32, n int, lo float32)

// amxConfig is the tile configuration amxGemm loads: palette 1, tiles 0-7 of
// 16 rows × 64 bytes (16 fp32 of c, 32 bf16 of a, or 16 bf16 pairs of b).
func amxConfig() (cfg [64]byte) {
	cfg[0] = 1
	for t := 0; t < 8; t++ {
		cfg[16+2*t] = 64
		cfg[48+t] = 16
	}
	return cfg
}

// bf16 rounds f to bfloat16, to nearest with ties to even, as toBF16 does.
func bf16(f float32) uint16 {
	u := math.Float32bits(f)
	u += 0x7FFF + (u>>16)&1
	return uint16(u >> 16)
}

// packBF16 lays out the k×n row-major w in bf16 panels of width columns:
// panel p (columns width·p on) holds k/2 rows, row r the pairs
// (w[2r][c], w[2r+1][c]) for its columns c. Width 16 is the layout
// TDPBF16PS reads for b (a tile of b is 1 KiB read straight from memory);
// width 32 is kern8x32bf's, two ZMM registers of pairs per row.
func packBF16(w []float32, k, n, width int) []uint16 {
	p := make([]uint16, k*n)
	for j := 0; j < n; j += width {
		panel := p[j*k : (j+width)*k]
		for r := 0; r < k/2; r++ {
			row := panel[r*2*width : (r+1)*2*width]
			w0, w1 := w[2*r*n+j:2*r*n+j+width], w[(2*r+1)*n+j:(2*r+1)*n+j+width]
			for c := range width {
				row[2*c], row[2*c+1] = bf16(w0[c]), bf16(w1[c])
			}
		}
	}
	return p
}

//go:noescape
func kern8x32bf(a *uint16, lda int, b *uint16, k2 int, c *float32, ldc int)

// bf16Rows rounds max(a, lo) (m rows of k) to bf16 in s's scratch, zero rows
// added up to a multiple of block, the kernels' row block.
func (s *gemmScratch) bf16Rows(a []float32, m, k, block int, lo float32) []uint16 {
	mp := (m + block - 1) / block * block
	if cap(s.a16) < mp*k {
		s.a16 = make([]uint16, mp*k)
	}
	a16 := s.a16[:mp*k]
	toBF16(&a16[0], &a[0], m*k, lo)
	clear(a16[m*k:])
	return a16
}

// bf16MulAdd is amxMulAdd on kern8x32bf: bf packed by packBF16 with width
// 32, rows in blocks of 8 (the last, partial one through a zero-padded block
// in s), 64 rows at a time so that their bf16 copy stays in cache while one
// panel is swept.
func bf16MulAdd(s *gemmScratch, k, n int, bf []uint16, c, a []float32, m int, lo float32) {
	if m == 0 {
		return
	}
	_ = bf[k*n-1]
	a16 := s.bf16Rows(a, m, k, 8, lo)
	full := m &^ 7
	for i0 := 0; i0 < full; i0 += 64 {
		i1 := min(i0+64, full)
		for j := 0; j < n; j += 32 {
			for i := i0; i < i1; i += 8 {
				kern8x32bf(&a16[i*k], 2*k, &bf[j*k], k/2, &c[i*n+j], n)
			}
		}
	}
	if rem := m - full; rem > 0 {
		s.c = grow(s.c, 8*n)
		t := s.c[:8*n]
		copy(t, c[full*n:m*n])
		clear(t[rem*n:])
		for j := 0; j < n; j += 32 {
			kern8x32bf(&a16[full*k], 2*k, &bf[j*k], k/2, &t[j], n)
		}
		copy(c[full*n:m*n], t[:rem*n])
	}
}

// amxMulAdd computes c += max(a, lo)·B for row-major a (m×k, fp32) and c
// (m×n), where bf is B packed by packBF16: lo = 0 applies a ReLU to a on the
// way, lo = -Inf nothing. a is rounded to bf16 (products exact, sums in fp32);
// rows past the last whole 32-row stripe go through a zero-padded block in s.
// With biasTile (16 copies of a bias row, see amxBiasTile) non-nil it computes
// c = bias + max(a, lo)·B instead, without reading c.
func amxMulAdd(s *gemmScratch, k, n int, bf []uint16, c, a []float32, m int, lo float32, biasTile []float32) {
	if m == 0 {
		return
	}
	_ = bf[k*n-1]
	var bias *float32
	if biasTile != nil {
		_ = biasTile[16*n-1]
		bias = &biasTile[0]
	}
	a16 := s.bf16Rows(a, m, k, 32, lo)
	cfg := amxConfig()
	full := m &^ 31
	if full > 0 {
		amxGemm(&cfg[0], &a16[0], 2*k, &bf[0], k/amxK, &c[0], 4*n, full/32, n/amxN, bias)
	}
	if rem := m - full; rem > 0 {
		s.c = grow(s.c, 32*n)
		t := s.c[:32*n]
		if bias == nil {
			copy(t, c[full*n:m*n])
			clear(t[rem*n:])
		}
		amxGemm(&cfg[0], &a16[full*k], 2*k, &bf[0], k/amxK, &t[0], 4*n, 1, n/amxN, bias)
		copy(c[full*n:m*n], t[:rem*n])
	}
}

// amxBiasTile is 16 copies of the bias row b: amxGemm starts a block of c
// from it as from 16 rows of c.
func amxBiasTile(b []float32) []float32 {
	t := make([]float32, 16*len(b))
	for r := range 16 {
		copy(t[r*len(b):], b)
	}
	return t
}

// attnAVX512 says whether attention's dot products and weighted sums run on
// the AVX-512 routines (attnScores, attnMix) instead of gonum's per-row calls.
var attnAVX512 = cpu.X86.HasAVX512F

//go:noescape
func attnScores(s *float32, q *float32, k *float32, kstride int, n int, dh int, scale float32)

//go:noescape
func attnMix(c *float32, p *float32, v *float32, vstride int, n int, dh int)

//go:noescape
func layerNormRows(out, x, gamma, beta *float32, d, rows int, invD, eps float32)

//go:noescape
func softmaxRow(p *float32, n int)
