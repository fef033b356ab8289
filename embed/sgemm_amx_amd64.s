#include "textflag.h"

// AMX (Advanced Matrix Extensions) bf16 kernel. Go's assembler has no AMX
// mnemonics, so the tile instructions are spelled as bytes; each line's
// comment is the instruction in GNU syntax, and the bytes are what GNU as
// 2.40 assembles it to (`as x.s && objdump -d x.o`). Tile registers used:
// tmm0-3 the 32×32 fp32 block of c, tmm4-5 two 16-row tiles of a,
// tmm6-7 two 16-column tiles of b.

// func amxGemm(cfg *byte, a *uint16, lda int, b *uint16, k32 int, c *float32, ldc int, m32 int, n32 int, bias *float32)
//
// c += a·B over m32 stripes of 32 rows and n32 pairs of 16-column panels,
// k32 steps of 32 along k. a is bf16, row-major with rows lda bytes apart
// (lda = 2·k: the 16·lda bytes of one b panel below rely on it); b is bf16
// packed by packBF16 (per 16-column panel, k/2 rows of 16 pairs, 64 bytes
// each, contiguous); c is fp32 with rows ldc bytes apart. cfg is the 64-byte
// tile configuration of amxConfig. With bias non-nil, c's old contents are
// not read: each block starts from bias instead, 16 copies of the bias row
// (rows ldc bytes apart), so c = bias + a·B. Every call loads its configuration and
// releases the tiles before it returns: between calls the goroutine may move
// to another thread, whose tiles are not ours.
TEXT ·amxGemm(SB), NOSPLIT, $8-80
	MOVQ cfg+0(FP), AX
	BYTE $0xc4; BYTE $0xe2; BYTE $0x78; BYTE $0x49; BYTE $0x00 // ldtilecfg (%rax)
	MOVQ a+8(FP), SI
	MOVQ lda+16(FP), DX
	MOVQ c+40(FP), R10
	MOVQ ldc+48(FP), R9
	MOVQ $64, R8
	MOVQ m32+56(FP), AX
	TESTQ AX, AX
	JZ   done

stripe:
	MOVQ R10, cs-8(SP)
	MOVQ b+24(FP), DI
	MOVQ n32+64(FP), BX
	LEAQ (SI)(DX*8), R11
	LEAQ (R11)(DX*8), R11 // a, row 16 of the stripe

pair:
	LEAQ (R10)(R9*8), R13
	LEAQ (R13)(R9*8), R13 // c, row 16 of the stripe
	LEAQ (DI)(DX*8), R12
	LEAQ (R12)(DX*8), R12 // the next panel of b: 16·lda = 32·k bytes on
	MOVQ  bias+72(FP), CX
	TESTQ CX, CX
	JZ    fromc
	ADDQ  R10, CX
	SUBQ  cs-8(SP), CX // bias, at this pair's column
	BYTE $0xc4; BYTE $0xa2; BYTE $0x7b; BYTE $0x4b; BYTE $0x04; BYTE $0x09 // tileloadd (%rcx,%r9,1),%tmm0
	BYTE $0xc4; BYTE $0xa2; BYTE $0x7b; BYTE $0x4b; BYTE $0x4c; BYTE $0x09; BYTE $0x40 // tileloadd 0x40(%rcx,%r9,1),%tmm1
	BYTE $0xc4; BYTE $0xa2; BYTE $0x7b; BYTE $0x4b; BYTE $0x14; BYTE $0x09 // tileloadd (%rcx,%r9,1),%tmm2
	BYTE $0xc4; BYTE $0xa2; BYTE $0x7b; BYTE $0x4b; BYTE $0x5c; BYTE $0x09; BYTE $0x40 // tileloadd 0x40(%rcx,%r9,1),%tmm3
	JMP   loaded

fromc:
	BYTE $0xc4; BYTE $0x82; BYTE $0x7b; BYTE $0x4b; BYTE $0x04; BYTE $0x0a // tileloadd (%r10,%r9,1),%tmm0
	BYTE $0xc4; BYTE $0x82; BYTE $0x7b; BYTE $0x4b; BYTE $0x4c; BYTE $0x0a; BYTE $0x40 // tileloadd 0x40(%r10,%r9,1),%tmm1
	BYTE $0xc4; BYTE $0x82; BYTE $0x7b; BYTE $0x4b; BYTE $0x54; BYTE $0x0d; BYTE $0x00 // tileloadd 0x0(%r13,%r9,1),%tmm2
	BYTE $0xc4; BYTE $0x82; BYTE $0x7b; BYTE $0x4b; BYTE $0x5c; BYTE $0x0d; BYTE $0x40 // tileloadd 0x40(%r13,%r9,1),%tmm3

loaded:
	MOVQ k32+32(FP), CX

kloop:
	BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x4b; BYTE $0x24; BYTE $0x16 // tileloadd (%rsi,%rdx,1),%tmm4
	BYTE $0xc4; BYTE $0xc2; BYTE $0x7b; BYTE $0x4b; BYTE $0x2c; BYTE $0x13 // tileloadd (%r11,%rdx,1),%tmm5
	BYTE $0xc4; BYTE $0xa2; BYTE $0x7b; BYTE $0x4b; BYTE $0x34; BYTE $0x07 // tileloadd (%rdi,%r8,1),%tmm6
	BYTE $0xc4; BYTE $0x82; BYTE $0x7b; BYTE $0x4b; BYTE $0x3c; BYTE $0x04 // tileloadd (%r12,%r8,1),%tmm7
	BYTE $0xc4; BYTE $0xe2; BYTE $0x4a; BYTE $0x5c; BYTE $0xc4 // tdpbf16ps %tmm6,%tmm4,%tmm0
	BYTE $0xc4; BYTE $0xe2; BYTE $0x42; BYTE $0x5c; BYTE $0xcc // tdpbf16ps %tmm7,%tmm4,%tmm1
	BYTE $0xc4; BYTE $0xe2; BYTE $0x4a; BYTE $0x5c; BYTE $0xd5 // tdpbf16ps %tmm6,%tmm5,%tmm2
	BYTE $0xc4; BYTE $0xe2; BYTE $0x42; BYTE $0x5c; BYTE $0xdd // tdpbf16ps %tmm7,%tmm5,%tmm3
	ADDQ $64, SI
	ADDQ $64, R11
	ADDQ $1024, DI
	ADDQ $1024, R12
	DECQ CX
	JNZ  kloop

	BYTE $0xc4; BYTE $0x82; BYTE $0x7a; BYTE $0x4b; BYTE $0x04; BYTE $0x0a // tilestored %tmm0,(%r10,%r9,1)
	BYTE $0xc4; BYTE $0x82; BYTE $0x7a; BYTE $0x4b; BYTE $0x4c; BYTE $0x0a; BYTE $0x40 // tilestored %tmm1,0x40(%r10,%r9,1)
	BYTE $0xc4; BYTE $0x82; BYTE $0x7a; BYTE $0x4b; BYTE $0x54; BYTE $0x0d; BYTE $0x00 // tilestored %tmm2,0x0(%r13,%r9,1)
	BYTE $0xc4; BYTE $0x82; BYTE $0x7a; BYTE $0x4b; BYTE $0x5c; BYTE $0x0d; BYTE $0x40 // tilestored %tmm3,0x40(%r13,%r9,1)
	SUBQ DX, SI  // back to column 0 of a (k32·64 = lda bytes)
	SUBQ DX, R11
	MOVQ R12, DI // DI stepped one panel, R12 the next: the pair after
	ADDQ $128, R10
	DECQ BX
	JNZ  pair

	MOVQ cs-8(SP), R10
	LEAQ (R10)(R9*8), R10
	LEAQ (R10)(R9*8), R10
	LEAQ (R10)(R9*8), R10
	LEAQ (R10)(R9*8), R10 // c, 32 rows on
	LEAQ (SI)(DX*8), SI
	LEAQ (SI)(DX*8), SI
	LEAQ (SI)(DX*8), SI
	LEAQ (SI)(DX*8), SI // a, 32 rows on
	DECQ AX
	JNZ  stripe

done:
	BYTE $0xc4; BYTE $0xe2; BYTE $0x78; BYTE $0x49; BYTE $0xc0 // tilerelease
	RET

// func toBF16(dst *uint16, src *float32, n int, lo float32)
//
// dst[i] = max(src[i], lo) rounded to bfloat16 (nearest, ties to even), for
// n a multiple of 16: lo = 0 is a ReLU on the way, lo = -Inf none (a NaN stays
// NaN either way). Plain AVX-512F integer operations, so it needs no BF16
// instruction: add 0x7FFF plus the lowest kept bit, keep the top 16 bits.
TEXT ·toBF16(SB), NOSPLIT, $0-28
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $4, CX
	JZ   bfdone
	VBROADCASTSS lo+24(FP), Z4
	MOVL $0x7FFF, AX
	VPBROADCASTD AX, Z2
	MOVL $1, AX
	VPBROADCASTD AX, Z3

bfloop:
	VMOVUPS   (SI), Z0
	VMAXPS    Z0, Z4, Z0 // src2 = x: a NaN x is kept
	VPSRLD    $16, Z0, Z1
	VPANDD    Z3, Z1, Z1
	VPADDD    Z2, Z1, Z1
	VPADDD    Z1, Z0, Z0
	VPSRLD    $16, Z0, Z0
	VPMOVDW   Z0, (DI)
	ADDQ      $64, SI
	ADDQ      $32, DI
	DECQ      CX
	JNZ       bfloop
	VZEROUPPER

bfdone:
	RET
