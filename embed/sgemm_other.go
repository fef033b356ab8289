//go:build !amd64

package embed

// panelWidth is 0 off amd64: the products run on gonum's blas32.
const panelWidth = 0

func packedGemm(w, m, n, k int, a, packed, c []float32) {
	panic("embed: packedGemm without the amd64 kernels")
}

// rowAlign is 1 off amd64: gonum needs no padding.
const rowAlign = 1

// Off amd64 there are no bf16 kernels: the products run in fp32.
const (
	useAMX     = false
	useBF16    = false
	useBF16W   = false
	bestKernel = kernFP32
)

const (
	amxK = 32
	amxN = 32
)

func packBF16(w []float32, k, n, width int) []uint16 {
	panic("embed: packBF16 without the amd64 kernels")
}

func amxMulAdd(s *gemmScratch, k, n int, bf []uint16, c, a []float32, m int, lo float32, biasTile []float32) {
	panic("embed: amxMulAdd without the amd64 kernels")
}

// attnAVX512 is false off amd64: attention runs on gonum.
const attnAVX512 = false

func attnScores(s *float32, q *float32, k *float32, kstride int, n int, dh int, scale float32) {
	panic("embed: attnScores without the amd64 kernels")
}

func attnMix(c *float32, p *float32, v *float32, vstride int, n int, dh int) {
	panic("embed: attnMix without the amd64 kernels")
}

func layerNormRows(out, x, gamma, beta *float32, d, rows int, invD, eps float32) {
	panic("embed: layerNormRows without the amd64 kernels")
}

func bf16MulAdd(s *gemmScratch, k, n int, bf []uint16, c, a []float32, m int, lo float32) {
	panic("embed: bf16MulAdd without the amd64 kernels")
}

func amxBiasTile(b []float32) []float32 {
	panic("embed: amxBiasTile without the amd64 kernels")
}

func softmaxRow(p *float32, n int) {
	panic("embed: softmaxRow without the amd64 kernels")
}

func packWeightsBF16(w []float32, k, n int) []uint16 {
	panic("embed: packWeightsBF16 without the amd64 kernels")
}

func weightsBF16Gemm(m, n, k int, a []float32, packed []uint16, c []float32) {
	panic("embed: weightsBF16Gemm without the amd64 kernels")
}
