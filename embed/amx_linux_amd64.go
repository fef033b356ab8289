package embed

import (
	"syscall"

	"golang.org/x/sys/cpu"
)

// amxUsable reports whether the bf16 tile kernel can run: the CPU has
// AMX-TILE and AMX-BF16, and Linux grants this process the tile state. Linux
// (5.16 on) enables AMX per process on request, arch_prctl(ARCH_REQ_XCOMP_PERM,
// XFEATURE_XTILEDATA); without the grant the first tile instruction is a
// SIGILL. The grant is harmless to the rest of the process.
func amxUsable() bool {
	if !cpu.X86.HasAMXTile || !cpu.X86.HasAMXBF16 || !cpu.X86.HasAVX512F {
		return false
	}
	const (
		archReqXcompPerm  = 0x1023
		xfeatureXtiledata = 18
	)
	_, _, errno := syscall.RawSyscall(syscall.SYS_ARCH_PRCTL, archReqXcompPerm, xfeatureXtiledata, 0)
	return errno == 0
}
