//go:build !amd64

package int8vec

// Off amd64 there is no kernel: Dot's loop does all the work.
const hasKernel = false

func dotKernel(a, b *int8, n int) int32 { panic("int8vec: no kernel off amd64") }
