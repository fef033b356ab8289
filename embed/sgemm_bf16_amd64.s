#include "textflag.h"

// func kern8x32bf(a *uint16, lda int, b *uint16, k2 int, c *float32, ldc int)
//
// kern8x32 on bfloat16 operands with AVX512_BF16's VDPBF16PS (two products
// per fp32 lane, summed in fp32): a is bf16, rows lda bytes apart, read one
// pair of columns (32 bits, broadcast) per step; b is a panel of 32 columns
// packed by packBF16 (k2 = k/2 rows of 32 pairs, 128 bytes each); c is fp32,
// rows ldc floats apart. Go's assembler has no VDPBF16PS: each is spelled as
// the bytes GNU as 2.40 gives for the instruction in the comment.
TEXT ·kern8x32bf(SB), NOSPLIT, $0-48
	MOVQ a+0(FP), R10
	MOVQ lda+8(FP), R11
	LEAQ (R11)(R11*2), R12
	LEAQ (R10)(R11*4), R13
	MOVQ b+16(FP), DI
	MOVQ k2+24(FP), CX
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
	JZ     storebf

loopbf:
	VMOVUPS      (DI), Z16
	VMOVUPS      64(DI), Z17
	VPBROADCASTD (R10), Z18
	VPBROADCASTD (R10)(R11*1), Z19
	VPBROADCASTD (R10)(R11*2), Z20
	VPBROADCASTD (R10)(R12*1), Z21
	BYTE $0x62; BYTE $0xb2; BYTE $0x6e; BYTE $0x40; BYTE $0x52; BYTE $0xc0 // vdpbf16ps %zmm16,%zmm18,%zmm0
	BYTE $0x62; BYTE $0xb2; BYTE $0x6e; BYTE $0x40; BYTE $0x52; BYTE $0xc9 // vdpbf16ps %zmm17,%zmm18,%zmm1
	BYTE $0x62; BYTE $0xb2; BYTE $0x66; BYTE $0x40; BYTE $0x52; BYTE $0xd0 // vdpbf16ps %zmm16,%zmm19,%zmm2
	BYTE $0x62; BYTE $0xb2; BYTE $0x66; BYTE $0x40; BYTE $0x52; BYTE $0xd9 // vdpbf16ps %zmm17,%zmm19,%zmm3
	BYTE $0x62; BYTE $0xb2; BYTE $0x5e; BYTE $0x40; BYTE $0x52; BYTE $0xe0 // vdpbf16ps %zmm16,%zmm20,%zmm4
	BYTE $0x62; BYTE $0xb2; BYTE $0x5e; BYTE $0x40; BYTE $0x52; BYTE $0xe9 // vdpbf16ps %zmm17,%zmm20,%zmm5
	BYTE $0x62; BYTE $0xb2; BYTE $0x56; BYTE $0x40; BYTE $0x52; BYTE $0xf0 // vdpbf16ps %zmm16,%zmm21,%zmm6
	BYTE $0x62; BYTE $0xb2; BYTE $0x56; BYTE $0x40; BYTE $0x52; BYTE $0xf9 // vdpbf16ps %zmm17,%zmm21,%zmm7
	VPBROADCASTD (R13), Z22
	VPBROADCASTD (R13)(R11*1), Z23
	VPBROADCASTD (R13)(R11*2), Z24
	VPBROADCASTD (R13)(R12*1), Z25
	BYTE $0x62; BYTE $0x32; BYTE $0x4e; BYTE $0x40; BYTE $0x52; BYTE $0xc0 // vdpbf16ps %zmm16,%zmm22,%zmm8
	BYTE $0x62; BYTE $0x32; BYTE $0x4e; BYTE $0x40; BYTE $0x52; BYTE $0xc9 // vdpbf16ps %zmm17,%zmm22,%zmm9
	BYTE $0x62; BYTE $0x32; BYTE $0x46; BYTE $0x40; BYTE $0x52; BYTE $0xd0 // vdpbf16ps %zmm16,%zmm23,%zmm10
	BYTE $0x62; BYTE $0x32; BYTE $0x46; BYTE $0x40; BYTE $0x52; BYTE $0xd9 // vdpbf16ps %zmm17,%zmm23,%zmm11
	BYTE $0x62; BYTE $0x32; BYTE $0x3e; BYTE $0x40; BYTE $0x52; BYTE $0xe0 // vdpbf16ps %zmm16,%zmm24,%zmm12
	BYTE $0x62; BYTE $0x32; BYTE $0x3e; BYTE $0x40; BYTE $0x52; BYTE $0xe9 // vdpbf16ps %zmm17,%zmm24,%zmm13
	BYTE $0x62; BYTE $0x32; BYTE $0x36; BYTE $0x40; BYTE $0x52; BYTE $0xf0 // vdpbf16ps %zmm16,%zmm25,%zmm14
	BYTE $0x62; BYTE $0x32; BYTE $0x36; BYTE $0x40; BYTE $0x52; BYTE $0xf9 // vdpbf16ps %zmm17,%zmm25,%zmm15
	ADDQ         $128, DI
	ADDQ         $4, R10
	ADDQ         $4, R13
	DECQ         CX
	JNZ          loopbf

storebf:
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

