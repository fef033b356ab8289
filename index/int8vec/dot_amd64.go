package int8vec

import "golang.org/x/sys/cpu"

// hasKernel: the AVX2 kernel runs where the CPU has AVX2 (fixed at start-up,
// like the CPU it describes); elsewhere Dot's loop does all the work.
var hasKernel = cpu.X86.HasAVX2

// dotKernel is the dot product of n (a multiple of 16) int8 components at a
// and b: each 16 sign-extended to int16, multiplied and summed in pairs to
// int32 (VPMADDWD), so no product or pair sum can overflow.
//
//go:noescape
func dotKernel(a, b *int8, n int) int32
