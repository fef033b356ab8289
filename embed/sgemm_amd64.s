#include "textflag.h"

// func kern4x16(a *float32, lda int, b *float32, k int, c *float32, ldc int)
//
// c[r][0:16] += sum over p<k of a[r][p] * b[p][0:16] for rows r = 0..3, where
// a's rows are lda floats apart, b is a packed panel (k rows of 16 floats,
// contiguous) and c's rows are ldc floats apart. Eight YMM accumulators hold
// the 4x16 block so the two FMA ports always have independent work.
TEXT ·kern4x16(SB), NOSPLIT, $0-48
	MOVQ a+0(FP), R10
	MOVQ lda+8(FP), R8
	SHLQ $2, R8
	MOVQ b+16(FP), DI
	MOVQ k+24(FP), CX
	MOVQ c+32(FP), DX
	MOVQ ldc+40(FP), R9
	SHLQ $2, R9
	LEAQ (R10)(R8*1), R11
	LEAQ (R11)(R8*1), R12
	LEAQ (R12)(R8*1), R13
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	TESTQ CX, CX
	JZ    store4

loop4:
	VMOVUPS      (DI), Y8
	VMOVUPS      32(DI), Y9
	VBROADCASTSS (R10), Y10
	VBROADCASTSS (R11), Y11
	VFMADD231PS  Y8, Y10, Y0
	VFMADD231PS  Y9, Y10, Y1
	VFMADD231PS  Y8, Y11, Y2
	VFMADD231PS  Y9, Y11, Y3
	VBROADCASTSS (R12), Y12
	VBROADCASTSS (R13), Y13
	VFMADD231PS  Y8, Y12, Y4
	VFMADD231PS  Y9, Y12, Y5
	VFMADD231PS  Y8, Y13, Y6
	VFMADD231PS  Y9, Y13, Y7
	ADDQ         $64, DI
	ADDQ         $4, R10
	ADDQ         $4, R11
	ADDQ         $4, R12
	ADDQ         $4, R13
	DECQ         CX
	JNZ          loop4

store4:
	VADDPS  (DX), Y0, Y0
	VADDPS  32(DX), Y1, Y1
	VMOVUPS Y0, (DX)
	VMOVUPS Y1, 32(DX)
	ADDQ    R9, DX
	VADDPS  (DX), Y2, Y2
	VADDPS  32(DX), Y3, Y3
	VMOVUPS Y2, (DX)
	VMOVUPS Y3, 32(DX)
	ADDQ    R9, DX
	VADDPS  (DX), Y4, Y4
	VADDPS  32(DX), Y5, Y5
	VMOVUPS Y4, (DX)
	VMOVUPS Y5, 32(DX)
	ADDQ    R9, DX
	VADDPS  (DX), Y6, Y6
	VADDPS  32(DX), Y7, Y7
	VMOVUPS Y6, (DX)
	VMOVUPS Y7, 32(DX)
	VZEROUPPER
	RET

// func kern1x16(a *float32, b *float32, k int, c *float32)
//
// The single-row form of kern4x16 for the rows left over after groups of
// four. Odd and even steps of p use separate accumulators to halve the FMA
// dependency chain.
TEXT ·kern1x16(SB), NOSPLIT, $0-32
	MOVQ   a+0(FP), SI
	MOVQ   b+8(FP), DI
	MOVQ   k+16(FP), CX
	MOVQ   c+24(FP), DX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	CMPQ   CX, $2
	JLT    tail1

loop1:
	VBROADCASTSS (SI), Y10
	VBROADCASTSS 4(SI), Y11
	VFMADD231PS  (DI), Y10, Y0
	VFMADD231PS  32(DI), Y10, Y1
	VFMADD231PS  64(DI), Y11, Y2
	VFMADD231PS  96(DI), Y11, Y3
	ADDQ         $128, DI
	ADDQ         $8, SI
	SUBQ         $2, CX
	CMPQ         CX, $2
	JGE          loop1

tail1:
	TESTQ        CX, CX
	JZ           store1
	VBROADCASTSS (SI), Y10
	VFMADD231PS  (DI), Y10, Y0
	VFMADD231PS  32(DI), Y10, Y1

store1:
	VADDPS  Y2, Y0, Y0
	VADDPS  Y3, Y1, Y1
	VADDPS  (DX), Y0, Y0
	VADDPS  32(DX), Y1, Y1
	VMOVUPS Y0, (DX)
	VMOVUPS Y1, 32(DX)
	VZEROUPPER
	RET
