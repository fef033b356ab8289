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
