// Pieces shared by the AVX2 kernels (sgemm_amd64.s, sgemm_bf16w_amd64.s),
// which take the same arguments: (a *float32, lda int, b, k int, c *float32,
// ldc int).

// GEMM_ARGS loads the arguments: a's first row in R10, its row stride in
// bytes in R8, b in DI, k in CX, c in DX, c's row stride in bytes in R9.
#define GEMM_ARGS \
	MOVQ a+0(FP), R10; \
	MOVQ lda+8(FP), R8; \
	SHLQ $2, R8; \
	MOVQ b+16(FP), DI; \
	MOVQ k+24(FP), CX; \
	MOVQ c+32(FP), DX; \
	MOVQ ldc+40(FP), R9; \
	SHLQ $2, R9; \
	LEAQ (R10)(R8*1), R11; \
	LEAQ (R11)(R8*1), R12; \
	LEAQ (R12)(R8*1), R13

// ZERO_Y0_Y7 clears the accumulators of a 4x16 block.
#define ZERO_Y0_Y7 \
	VXORPS Y0, Y0, Y0; \
	VXORPS Y1, Y1, Y1; \
	VXORPS Y2, Y2, Y2; \
	VXORPS Y3, Y3, Y3; \
	VXORPS Y4, Y4, Y4; \
	VXORPS Y5, Y5, Y5; \
	VXORPS Y6, Y6, Y6; \
	VXORPS Y7, Y7, Y7

// HIGH_HALVES sets Y15 to 0xFFFF0000 in every dword: the mask that keeps the
// high bf16 of each pair of a packWeightsBF16 panel row as an fp32.
#define HIGH_HALVES \
	VPCMPEQD Y15, Y15, Y15; \
	VPSLLD   $16, Y15, Y15

// ADD_ROW16 adds the accumulators lo (columns 0-7) and hi (8-15) to the row
// of c at DX and stores it.
#define ADD_ROW16(lo, hi) \
	VADDPS  (DX), lo, lo; \
	VADDPS  32(DX), hi, hi; \
	VMOVUPS lo, (DX); \
	VMOVUPS hi, 32(DX)

// ADD_ROWS16x4 is ADD_ROW16 for four rows of c from DX on, accumulators Y0-Y7.
#define ADD_ROWS16x4 \
	ADD_ROW16(Y0, Y1); \
	ADDQ R9, DX; \
	ADD_ROW16(Y2, Y3); \
	ADDQ R9, DX; \
	ADD_ROW16(Y4, Y5); \
	ADDQ R9, DX; \
	ADD_ROW16(Y6, Y7)
