#include "textflag.h"

// func attnScores(s *float32, q *float32, k *float32, kstride int, n int, dh int, scale float32)
//
// s[j] = scale · q·k_j for j < n, where k_j is the dh floats at k + j·kstride
// and dh is a multiple of 16: one query's attention logits against a text's
// keys. Keys go four at a time into four ZMM accumulators (independent FMA
// chains), reduced together at the end.
TEXT ·attnScores(SB), NOSPLIT, $0-52
	MOVQ         s+0(FP), DI
	MOVQ         q+8(FP), SI
	MOVQ         k+16(FP), R8
	MOVQ         kstride+24(FP), R9
	SHLQ         $2, R9
	MOVQ         n+32(FP), CX
	MOVQ         dh+40(FP), DX
	SHRQ         $4, DX
	VBROADCASTSS scale+48(FP), X8
	CMPQ         CX, $4
	JLT          tail

quad:
	MOVQ   R8, R10
	LEAQ   (R8)(R9*1), R11
	LEAQ   (R11)(R9*1), R12
	LEAQ   (R12)(R9*1), R13
	VXORPS Z0, Z0, Z0
	VXORPS Z1, Z1, Z1
	VXORPS Z2, Z2, Z2
	VXORPS Z3, Z3, Z3
	MOVQ   SI, AX
	MOVQ   DX, BX

qin:
	VMOVUPS     (AX), Z4
	VFMADD231PS (R10), Z4, Z0
	VFMADD231PS (R11), Z4, Z1
	VFMADD231PS (R12), Z4, Z2
	VFMADD231PS (R13), Z4, Z3
	ADDQ        $64, AX
	ADDQ        $64, R10
	ADDQ        $64, R11
	ADDQ        $64, R12
	ADDQ        $64, R13
	DECQ        BX
	JNZ         qin

	VEXTRACTF64X4 $1, Z0, Y4
	VADDPS        Y4, Y0, Y0
	VEXTRACTF64X4 $1, Z1, Y5
	VADDPS        Y5, Y1, Y1
	VEXTRACTF64X4 $1, Z2, Y6
	VADDPS        Y6, Y2, Y2
	VEXTRACTF64X4 $1, Z3, Y7
	VADDPS        Y7, Y3, Y3
	VEXTRACTF128  $1, Y0, X4
	VADDPS        X4, X0, X0
	VEXTRACTF128  $1, Y1, X5
	VADDPS        X5, X1, X1
	VEXTRACTF128  $1, Y2, X6
	VADDPS        X6, X2, X2
	VEXTRACTF128  $1, Y3, X7
	VADDPS        X7, X3, X3
	VHADDPS       X1, X0, X0
	VHADDPS       X3, X2, X2
	VHADDPS       X2, X0, X0 // the four sums, in order
	VMULPS        X8, X0, X0
	VMOVUPS       X0, (DI)
	ADDQ          $16, DI
	LEAQ          (R8)(R9*4), R8
	SUBQ          $4, CX
	CMPQ          CX, $4
	JGE           quad

tail:
	TESTQ CX, CX
	JZ    sdone

one:
	VXORPS Z0, Z0, Z0
	MOVQ   SI, AX
	MOVQ   R8, R10
	MOVQ   DX, BX

oin:
	VMOVUPS     (AX), Z4
	VFMADD231PS (R10), Z4, Z0
	ADDQ        $64, AX
	ADDQ        $64, R10
	DECQ        BX
	JNZ         oin

	VEXTRACTF64X4 $1, Z0, Y4
	VADDPS        Y4, Y0, Y0
	VEXTRACTF128  $1, Y0, X4
	VADDPS        X4, X0, X0
	VHADDPS       X0, X0, X0
	VHADDPS       X0, X0, X0
	VMULSS        X8, X0, X0
	VMOVSS        X0, (DI)
	ADDQ          $4, DI
	ADDQ          R9, R8
	DECQ          CX
	JNZ           one

sdone:
	VZEROUPPER
	RET

// func attnMix(c *float32, p *float32, v *float32, vstride int, n int, dh int)
//
// c[0:dh] = Σ_j p[j] · v_j for j < n, where v_j is the dh floats at
// v + j·vstride and dh is a multiple of 64: one query's attention output. Each
// 64-float block of c stays in four ZMM registers over all j.
TEXT ·attnMix(SB), NOSPLIT, $0-48
	MOVQ c+0(FP), DI
	MOVQ v+16(FP), R8
	MOVQ vstride+24(FP), R9
	SHLQ $2, R9
	MOVQ dh+40(FP), DX
	SHRQ $6, DX
	JZ   mdone

mblock:
	VXORPS Z0, Z0, Z0
	VXORPS Z1, Z1, Z1
	VXORPS Z2, Z2, Z2
	VXORPS Z3, Z3, Z3
	MOVQ   p+8(FP), SI
	MOVQ   R8, R10
	MOVQ   n+32(FP), CX
	TESTQ  CX, CX
	JZ     mstore

mj:
	VBROADCASTSS (SI), Z4
	VFMADD231PS  (R10), Z4, Z0
	VFMADD231PS  64(R10), Z4, Z1
	VFMADD231PS  128(R10), Z4, Z2
	VFMADD231PS  192(R10), Z4, Z3
	ADDQ         $4, SI
	ADDQ         R9, R10
	DECQ         CX
	JNZ          mj

mstore:
	VMOVUPS Z0, (DI)
	VMOVUPS Z1, 64(DI)
	VMOVUPS Z2, 128(DI)
	VMOVUPS Z3, 192(DI)
	ADDQ    $256, DI
	ADDQ    $256, R8
	DECQ    DX
	JNZ     mblock
	VZEROUPPER

mdone:
	RET

// func layerNormRows(out, x, gamma, beta *float32, d, rows int, invD, eps float32)
//
// For each of rows d-wide rows of x: out = gamma·(x-mean)/sqrt(var+eps) + beta, with
// mean and variance over the row (two passes, as layerNorm) and d a multiple
// of 32. Two accumulators per sum keep the FMA chains short.
TEXT ·layerNormRows(SB), NOSPLIT, $0-56
	MOVQ         out+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         d+32(FP), DX
	SHRQ         $5, DX
	MOVQ         rows+40(FP), CX
	VBROADCASTSS invD+48(FP), Z8
	VMOVSS       eps+52(FP), X9
	TESTQ        CX, CX
	JZ           lndone
	TESTQ        DX, DX
	JZ           lndone

lnrow:
	// mean
	VXORPS Z0, Z0, Z0
	VXORPS Z1, Z1, Z1
	MOVQ   SI, R10
	MOVQ   DX, BX

lnsum:
	VADDPS (R10), Z0, Z0
	VADDPS 64(R10), Z1, Z1
	ADDQ   $128, R10
	DECQ   BX
	JNZ    lnsum
	VADDPS        Z1, Z0, Z0
	VEXTRACTF64X4 $1, Z0, Y1
	VADDPS        Y1, Y0, Y0
	VEXTRACTF128  $1, Y0, X1
	VADDPS        X1, X0, X0
	VHADDPS       X0, X0, X0
	VHADDPS       X0, X0, X0
	VMULSS        X8, X0, X0
	VBROADCASTSS  X0, Z2 // mean

	// variance
	VXORPS Z0, Z0, Z0
	VXORPS Z1, Z1, Z1
	MOVQ   SI, R10
	MOVQ   DX, BX

lnvar:
	VSUBPS      (R10), Z2, Z4
	VSUBPS      64(R10), Z2, Z5
	VFMADD231PS Z4, Z4, Z0
	VFMADD231PS Z5, Z5, Z1
	ADDQ        $128, R10
	DECQ        BX
	JNZ         lnvar
	VADDPS        Z1, Z0, Z0
	VEXTRACTF64X4 $1, Z0, Y1
	VADDPS        Y1, Y0, Y0
	VEXTRACTF128  $1, Y0, X1
	VADDPS        X1, X0, X0
	VHADDPS       X0, X0, X0
	VHADDPS       X0, X0, X0
	VMULSS        X8, X0, X0
	VADDSS        X9, X0, X0
	VSQRTSS       X0, X0, X0
	MOVL          $0x3f800000, AX // 1.0
	VMOVD         AX, X1
	VDIVSS        X0, X1, X0
	VBROADCASTSS  X0, Z3 // 1/sqrt(var+eps)

	// out = gamma·(x-mean)·inv + beta
	MOVQ gamma+16(FP), R8
	MOVQ beta+24(FP), R9
	MOVQ SI, R10
	MOVQ DX, BX
	ADDQ BX, BX

lnout:
	VMOVUPS     (R10), Z4
	VSUBPS      Z2, Z4, Z4
	VMULPS      Z3, Z4, Z4
	VMOVUPS     (R9), Z5
	VFMADD231PS (R8), Z4, Z5
	VMOVUPS     Z5, (DI)
	ADDQ        $64, R10
	ADDQ        $64, R8
	ADDQ        $64, R9
	ADDQ        $64, DI
	DECQ        BX
	JNZ         lnout

	MOVQ R10, SI
	DECQ CX
	JNZ  lnrow
	VZEROUPPER

lndone:
	RET

// SMMASK sets K1 to the lanes of the block at the current position (16, or
// the rem = BX left over) and counts them off BX: 1<<min(rem,16) - 1.
#define SMMASK \
	MOVQ    BX, CX \
	CMPQ    CX, R8 \
	CMOVQGT R8, CX \
	MOVL    $1, AX \
	SHLL    CX, AX \
	DECL    AX \
	KMOVW   AX, K1 \
	SUBQ    $16, BX

// func softmaxRow(p *float32, n int)
//
// p[0:n] = exp(p - max p) / Σ exp(p - max p), 16 lanes at a time with a mask
// for the last, partial block. exp is Cephes' expf: k = round(x·log2 e),
// r = x - k·ln 2 (in two parts), a degree-6 polynomial for e^r, then
// VSCALEFPS for 2^k.
TEXT ·softmaxRow(SB), NOSPLIT, $0-16
	MOVQ  p+0(FP), DI
	MOVQ  n+8(FP), DX
	TESTQ DX, DX
	JLE   smdone
	MOVQ  $16, R8

	// max
	MOVL         $0xff800000, AX // -Inf
	VPBROADCASTD AX, Z6
	VMOVAPS      Z6, Z0
	MOVQ         DI, SI
	MOVQ         DX, BX

smmax:
	SMMASK
	VMOVAPS       Z6, Z1
	VMOVUPS       (SI), K1, Z1 // masked-off lanes stay -Inf
	VMAXPS        Z1, Z0, Z0
	ADDQ          $64, SI
	TESTQ         BX, BX
	JG            smmax
	VEXTRACTF64X4 $1, Z0, Y1
	VMAXPS        Y1, Y0, Y0
	VEXTRACTF128  $1, Y0, X1
	VMAXPS        X1, X0, X0
	VPERMILPS     $0x4e, X0, X1
	VMAXPS        X1, X0, X0
	VPERMILPS     $0xb1, X0, X1
	VMAXPS        X1, X0, X0
	VBROADCASTSS  X0, Z0 // max

	MOVL         $0xc2aeac50, AX // -87.33654: below it e^x is 0 in float32
	VPBROADCASTD AX, Z20
	MOVL         $0x3fb8aa3b, AX // log2 e
	VPBROADCASTD AX, Z21
	MOVL         $0x3f318000, AX // C1 = 0.693359375
	VPBROADCASTD AX, Z22
	MOVL         $0xb95e8083, AX // C2 = -2.12194440e-4 (C1 + C2 = ln 2)
	VPBROADCASTD AX, Z23
	MOVL         $0x39506967, AX // 1.9875691500e-4
	VPBROADCASTD AX, Z24
	MOVL         $0x3ab743ce, AX // 1.3981999507e-3
	VPBROADCASTD AX, Z25
	MOVL         $0x3c088908, AX // 8.3334519073e-3
	VPBROADCASTD AX, Z26
	MOVL         $0x3d2aa9c1, AX // 4.1665795894e-2
	VPBROADCASTD AX, Z27
	MOVL         $0x3e2aaaaa, AX // 1.6666665459e-1
	VPBROADCASTD AX, Z28
	MOVL         $0x3f000000, AX // 0.5
	VPBROADCASTD AX, Z29
	MOVL         $0x3f800000, AX // 1
	VPBROADCASTD AX, Z30

	// exp, and their sum
	VXORPS Z5, Z5, Z5
	MOVQ   DI, SI
	MOVQ   DX, BX

smexp:
	SMMASK
	VMOVUPS.Z    (SI), K1, Z1
	VSUBPS       Z0, Z1, Z1  // x = p - max, at most 0
	VMAXPS       Z1, Z20, Z1 // src2 = x: a NaN stays NaN
	VMULPS       Z21, Z1, Z2
	VRNDSCALEPS  $0, Z2, Z2  // k = round(x·log2 e)
	VFNMADD231PS Z22, Z2, Z1 // r = x - k·C1
	VFNMADD231PS Z23, Z2, Z1 // r -= k·C2
	VMOVAPS      Z24, Z3
	VFMADD213PS  Z25, Z1, Z3
	VFMADD213PS  Z26, Z1, Z3
	VFMADD213PS  Z27, Z1, Z3
	VFMADD213PS  Z28, Z1, Z3
	VFMADD213PS  Z29, Z1, Z3 // polynomial in r
	VMULPS       Z1, Z1, Z4  // r²
	VFMADD213PS  Z1, Z4, Z3  // poly·r² + r
	VADDPS       Z30, Z3, Z3 // + 1 = e^r
	VSCALEFPS    Z2, Z3, Z3  // · 2^k
	VMOVUPS      Z3, K1, (SI)
	VADDPS       Z3, Z5, K1, Z5
	ADDQ         $64, SI
	TESTQ        BX, BX
	JG           smexp
	VEXTRACTF64X4 $1, Z5, Y1
	VADDPS        Y1, Y5, Y5
	VEXTRACTF128  $1, Y5, X1
	VADDPS        X1, X5, X5
	VHADDPS       X5, X5, X5
	VHADDPS       X5, X5, X5
	VMOVAPS       Z30, Z1
	VDIVSS        X5, X1, X1
	VBROADCASTSS  X1, Z5 // 1/sum

	// normalise
	MOVQ DI, SI
	MOVQ DX, BX

smnorm:
	SMMASK
	VMOVUPS.Z (SI), K1, Z1
	VMULPS    Z5, Z1, Z1
	VMOVUPS   Z1, K1, (SI)
	ADDQ      $64, SI
	TESTQ     BX, BX
	JG        smnorm
	VZEROUPPER

smdone:
	RET
