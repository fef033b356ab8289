//go:build !amd64

package embed

// haveFMA is false off amd64: the products run on gonum's blas32.
const haveFMA = false

func packedGemm(m, n, k int, a, packed, c []float32) {
	panic("embed: packedGemm without the amd64 kernels")
}
