#include "textflag.h"
#include "sgemm_amd64.h"

// func kern4x16(a *float32, lda int, b *float32, k int, c *float32, ldc int)
//
// c[r][0:16] += sum over p<k of a[r][p] * b[p][0:16] for rows r = 0..3, where
// a's rows are lda floats apart, b is a packed panel (k rows of 16 floats,
// contiguous) and c's rows are ldc floats apart. Eight YMM accumulators hold
// the 4x16 block so the two FMA ports always have independent work.
TEXT ·kern4x16(SB), NOSPLIT, $0-48
	GEMM_ARGS
	ZERO_Y0_Y7
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
	ADD_ROWS16x4
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

// func kern8x32(a *float32, lda int, b *float32, k int, c *float32, ldc int)
//
// The AVX-512 form of kern4x16: an 8x32 block of c in sixteen ZMM
// accumulators, b packed in panels of 32 columns. Rows 0-3 of a are
// addressed from R10, rows 4-7 from R13, both stepping by one float.
TEXT ·kern8x32(SB), NOSPLIT, $0-48
	MOVQ a+0(FP), R10
	MOVQ lda+8(FP), R11
	SHLQ $2, R11
	LEAQ (R11)(R11*2), R12
	LEAQ (R10)(R11*4), R13
	MOVQ b+16(FP), DI
	MOVQ k+24(FP), CX
	MOVQ c+32(FP), DX
	MOVQ ldc+40(FP), R9
	SHLQ $2, R9
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	VPXORD Z10, Z10, Z10
	VPXORD Z11, Z11, Z11
	VPXORD Z12, Z12, Z12
	VPXORD Z13, Z13, Z13
	VPXORD Z14, Z14, Z14
	VPXORD Z15, Z15, Z15
	TESTQ  CX, CX
	JZ     store8

loop8:
	VMOVUPS      (DI), Z16
	VMOVUPS      64(DI), Z17
	VBROADCASTSS (R10), Z18
	VBROADCASTSS (R10)(R11*1), Z19
	VBROADCASTSS (R10)(R11*2), Z20
	VBROADCASTSS (R10)(R12*1), Z21
	VFMADD231PS  Z16, Z18, Z0
	VFMADD231PS  Z17, Z18, Z1
	VFMADD231PS  Z16, Z19, Z2
	VFMADD231PS  Z17, Z19, Z3
	VFMADD231PS  Z16, Z20, Z4
	VFMADD231PS  Z17, Z20, Z5
	VFMADD231PS  Z16, Z21, Z6
	VFMADD231PS  Z17, Z21, Z7
	VBROADCASTSS (R13), Z22
	VBROADCASTSS (R13)(R11*1), Z23
	VBROADCASTSS (R13)(R11*2), Z24
	VBROADCASTSS (R13)(R12*1), Z25
	VFMADD231PS  Z16, Z22, Z8
	VFMADD231PS  Z17, Z22, Z9
	VFMADD231PS  Z16, Z23, Z10
	VFMADD231PS  Z17, Z23, Z11
	VFMADD231PS  Z16, Z24, Z12
	VFMADD231PS  Z17, Z24, Z13
	VFMADD231PS  Z16, Z25, Z14
	VFMADD231PS  Z17, Z25, Z15
	ADDQ         $128, DI
	ADDQ         $4, R10
	ADDQ         $4, R13
	DECQ         CX
	JNZ          loop8

store8:
	VADDPS  (DX), Z0, Z0
	VADDPS  64(DX), Z1, Z1
	VMOVUPS Z0, (DX)
	VMOVUPS Z1, 64(DX)
	ADDQ    R9, DX
	VADDPS  (DX), Z2, Z2
	VADDPS  64(DX), Z3, Z3
	VMOVUPS Z2, (DX)
	VMOVUPS Z3, 64(DX)
	ADDQ    R9, DX
	VADDPS  (DX), Z4, Z4
	VADDPS  64(DX), Z5, Z5
	VMOVUPS Z4, (DX)
	VMOVUPS Z5, 64(DX)
	ADDQ    R9, DX
	VADDPS  (DX), Z6, Z6
	VADDPS  64(DX), Z7, Z7
	VMOVUPS Z6, (DX)
	VMOVUPS Z7, 64(DX)
	ADDQ    R9, DX
	VADDPS  (DX), Z8, Z8
	VADDPS  64(DX), Z9, Z9
	VMOVUPS Z8, (DX)
	VMOVUPS Z9, 64(DX)
	ADDQ    R9, DX
	VADDPS  (DX), Z10, Z10
	VADDPS  64(DX), Z11, Z11
	VMOVUPS Z10, (DX)
	VMOVUPS Z11, 64(DX)
	ADDQ    R9, DX
	VADDPS  (DX), Z12, Z12
	VADDPS  64(DX), Z13, Z13
	VMOVUPS Z12, (DX)
	VMOVUPS Z13, 64(DX)
	ADDQ    R9, DX
	VADDPS  (DX), Z14, Z14
	VADDPS  64(DX), Z15, Z15
	VMOVUPS Z14, (DX)
	VMOVUPS Z15, 64(DX)
	VZEROUPPER
	RET

// func kern1x32(a *float32, b *float32, k int, c *float32)
//
// The single-row form of kern8x32, with odd and even steps of p in separate
// accumulators.
TEXT ·kern1x32(SB), NOSPLIT, $0-32
	MOVQ   a+0(FP), SI
	MOVQ   b+8(FP), DI
	MOVQ   k+16(FP), CX
	MOVQ   c+24(FP), DX
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	CMPQ   CX, $2
	JLT    tail32

loop32:
	VBROADCASTSS (SI), Z10
	VBROADCASTSS 4(SI), Z11
	VFMADD231PS  (DI), Z10, Z0
	VFMADD231PS  64(DI), Z10, Z1
	VFMADD231PS  128(DI), Z11, Z2
	VFMADD231PS  192(DI), Z11, Z3
	ADDQ         $256, DI
	ADDQ         $8, SI
	SUBQ         $2, CX
	CMPQ         CX, $2
	JGE          loop32

tail32:
	TESTQ        CX, CX
	JZ           store32
	VBROADCASTSS (SI), Z10
	VFMADD231PS  (DI), Z10, Z0
	VFMADD231PS  64(DI), Z10, Z1

store32:
	VADDPS  Z2, Z0, Z0
	VADDPS  Z3, Z1, Z1
	VADDPS  (DX), Z0, Z0
	VADDPS  64(DX), Z1, Z1
	VMOVUPS Z0, (DX)
	VMOVUPS Z1, 64(DX)
	VZEROUPPER
	RET
