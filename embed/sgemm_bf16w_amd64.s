#include "textflag.h"
#include "sgemm_amd64.h"

// func kern4x16w(a *float32, lda int, b *uint16, k int, c *float32, ldc int)
//
// kern4x16 with the panel's weights stored as bfloat16 (packWeightsBF16):
// each row of the panel is 16 bf16 in 32 bytes, dword j holding column j in
// its low half and column 8+j in its high half. Shifting the dwords left by
// 16 gives columns 0-7 as fp32, masking off the low halves gives columns
// 8-15: two integer operations in place of the second load, and half the
// bytes to stream. a and c stay fp32, so each product is exact in fp32; only
// the weights were rounded.
TEXT ·kern4x16w(SB), NOSPLIT, $0-48
	GEMM_ARGS
	HIGH_HALVES
	ZERO_Y0_Y7
	TESTQ    CX, CX
	JZ       store4w

loop4w:
	VMOVDQU      (DI), Y14
	VPSLLD       $16, Y14, Y8
	VPAND        Y15, Y14, Y9
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
	ADDQ         $32, DI
	ADDQ         $4, R10
	ADDQ         $4, R11
	ADDQ         $4, R12
	ADDQ         $4, R13
	DECQ         CX
	JNZ          loop4w

store4w:
	ADD_ROWS16x4
	VZEROUPPER
	RET

// func kern1x16w(a *float32, b *uint16, k int, c *float32)
//
// kern1x16 on a bf16 panel (see kern4x16w): one row of a, two accumulator
// pairs over alternate rows of the panel so that the FMAs do not wait on
// each other.
TEXT ·kern1x16w(SB), NOSPLIT, $0-32
	MOVQ     a+0(FP), SI
	MOVQ     b+8(FP), DI
	MOVQ     k+16(FP), CX
	MOVQ     c+24(FP), DX
	HIGH_HALVES
	VXORPS   Y0, Y0, Y0
	VXORPS   Y1, Y1, Y1
	VXORPS   Y2, Y2, Y2
	VXORPS   Y3, Y3, Y3
	CMPQ     CX, $2
	JLT      tail1w

loop1w:
	VMOVDQU      (DI), Y12
	VMOVDQU      32(DI), Y13
	VPSLLD       $16, Y12, Y4
	VPAND        Y15, Y12, Y5
	VPSLLD       $16, Y13, Y6
	VPAND        Y15, Y13, Y7
	VBROADCASTSS (SI), Y10
	VBROADCASTSS 4(SI), Y11
	VFMADD231PS  Y4, Y10, Y0
	VFMADD231PS  Y5, Y10, Y1
	VFMADD231PS  Y6, Y11, Y2
	VFMADD231PS  Y7, Y11, Y3
	ADDQ         $64, DI
	ADDQ         $8, SI
	SUBQ         $2, CX
	CMPQ         CX, $2
	JGE          loop1w

tail1w:
	TESTQ        CX, CX
	JZ           store1w
	VMOVDQU      (DI), Y12
	VPSLLD       $16, Y12, Y4
	VPAND        Y15, Y12, Y5
	VBROADCASTSS (SI), Y10
	VFMADD231PS  Y4, Y10, Y0
	VFMADD231PS  Y5, Y10, Y1

store1w:
	VADDPS  Y2, Y0, Y0
	VADDPS  Y3, Y1, Y1
	VADDPS  (DX), Y0, Y0
	VADDPS  32(DX), Y1, Y1
	VMOVUPS Y0, (DX)
	VMOVUPS Y1, 32(DX)
	VZEROUPPER
	RET

// func kern6x16w(a *float32, lda int, b *uint16, k int, c *float32, ldc int)
//
// kern4x16w for six rows: twelve accumulators, so that the FMAs (two a cycle,
// four or five cycles each) never wait on one another, where kern4x16w's
// eight chains leave a fifth of the issue slots empty. With the mask that
// leaves no register for the raw panel row: the mask clears its low halves in
// place, after the shift has copied them out.
TEXT ·kern6x16w(SB), NOSPLIT, $0-48
	GEMM_ARGS
	LEAQ (R13)(R8*1), R14
	LEAQ (R14)(R8*1), R15
	HIGH_HALVES
	ZERO_Y0_Y7
	VXORPS   Y8, Y8, Y8
	VXORPS   Y9, Y9, Y9
	VXORPS   Y10, Y10, Y10
	VXORPS   Y11, Y11, Y11
	TESTQ    CX, CX
	JZ       store6w

loop6w:
	VMOVDQU      (DI), Y13
	VPSLLD       $16, Y13, Y12
	VPAND        Y15, Y13, Y13
	VBROADCASTSS (R10), Y14
	VFMADD231PS  Y12, Y14, Y0
	VFMADD231PS  Y13, Y14, Y1
	VBROADCASTSS (R11), Y14
	VFMADD231PS  Y12, Y14, Y2
	VFMADD231PS  Y13, Y14, Y3
	VBROADCASTSS (R12), Y14
	VFMADD231PS  Y12, Y14, Y4
	VFMADD231PS  Y13, Y14, Y5
	VBROADCASTSS (R13), Y14
	VFMADD231PS  Y12, Y14, Y6
	VFMADD231PS  Y13, Y14, Y7
	VBROADCASTSS (R14), Y14
	VFMADD231PS  Y12, Y14, Y8
	VFMADD231PS  Y13, Y14, Y9
	VBROADCASTSS (R15), Y14
	VFMADD231PS  Y12, Y14, Y10
	VFMADD231PS  Y13, Y14, Y11
	ADDQ         $32, DI
	ADDQ         $4, R10
	ADDQ         $4, R11
	ADDQ         $4, R12
	ADDQ         $4, R13
	ADDQ         $4, R14
	ADDQ         $4, R15
	DECQ         CX
	JNZ          loop6w

store6w:
	ADD_ROWS16x4
	ADDQ R9, DX
	ADD_ROW16(Y8, Y9)
	ADDQ R9, DX
	ADD_ROW16(Y10, Y11)
	VZEROUPPER
	RET
