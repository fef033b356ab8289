#include "textflag.h"

// func dotKernel(a, b *int8, n int) int32
// n is a multiple of 16. 32 components a round in two accumulators, then
// one round of 16 when n is an odd multiple; the eight int32 lanes are
// summed at the end.
TEXT ·dotKernel(SB), NOSPLIT, $0-28
	MOVQ a+0(FP), SI
	MOVQ b+8(FP), DI
	MOVQ n+16(FP), CX
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1

round32:
	CMPQ CX, $32
	JLT  round16
	VPMOVSXBW (SI), Y2
	VPMOVSXBW (DI), Y3
	VPMADDWD  Y3, Y2, Y2
	VPADDD    Y2, Y0, Y0
	VPMOVSXBW 16(SI), Y4
	VPMOVSXBW 16(DI), Y5
	VPMADDWD  Y5, Y4, Y4
	VPADDD    Y4, Y1, Y1
	ADDQ      $32, SI
	ADDQ      $32, DI
	SUBQ      $32, CX
	JMP       round32

round16:
	CMPQ CX, $16
	JLT  sum
	VPMOVSXBW (SI), Y2
	VPMOVSXBW (DI), Y3
	VPMADDWD  Y3, Y2, Y2
	VPADDD    Y2, Y0, Y0

sum:
	VPADDD       Y1, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPADDD       X1, X0, X0
	VPSHUFD      $0x4e, X0, X1
	VPADDD       X1, X0, X0
	VPSHUFD      $0xb1, X0, X1
	VPADDD       X1, X0, X0
	VMOVD        X0, AX
	VZEROUPPER
	MOVL         AX, ret+24(FP)
	RET
