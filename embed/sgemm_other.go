//go:build !amd64

package embed

// panelWidth is 0 off amd64: the products run on gonum's blas32.
const panelWidth = 0

func packedGemm(w, m, n, k int, a, packed, c []float32) {
	panic("embed: packedGemm without the amd64 kernels")
}

// rowAlign is 1 off amd64: gonum needs no padding.
const rowAlign = 1
