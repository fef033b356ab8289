#include "textflag.h"

// func cpuidVendor() (ebx, edx, ecx uint32)
// CPUID leaf 0: the vendor string, 12 bytes in EBX, EDX, ECX.
TEXT ·cpuidVendor(SB), NOSPLIT, $0-12
	XORL AX, AX
	XORL CX, CX
	CPUID
	MOVL BX, ebx+0(FP)
	MOVL DX, edx+4(FP)
	MOVL CX, ecx+8(FP)
	RET
