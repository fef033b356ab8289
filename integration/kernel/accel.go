package kernel

import (
	"os"
	"regexp"
)

// Accel names QEMU's accelerator for a boot: "kvm" or "tcg".
//
// KVM is used when /dev/kvm opens read-write and the CPU advertises hardware
// virtualisation (vmx or svm in /proc/cpuinfo), unless SEMFS_KERNEL_ACCEL
// says "kvm" or "tcg". The CPU flag matters: a /dev/kvm backed by kvm_pvm
// (page-table based virtualisation, found on cloud VMs without nested
// VT-x/AMD-V) opens fine but runs only kernels built as PVM guests; Debian's
// stock kernel under it prints nothing, not even early console output
// (measured: no byte on the serial console in 45 s with -cpu qemu64, and
// QEMU aborts on MSR 0x10a with -cpu max or host). TCG is the safe default.
func Accel() string {
	switch os.Getenv("SEMFS_KERNEL_ACCEL") {
	case "kvm":
		return "kvm"
	case "tcg":
		return "tcg"
	}
	f, err := os.OpenFile("/dev/kvm", os.O_RDWR, 0)
	if err != nil {
		return "tcg"
	}
	f.Close()
	info, err := os.ReadFile("/proc/cpuinfo")
	if err != nil || !hwVirtFlag.Match(info) {
		return "tcg"
	}
	return "kvm"
}

var hwVirtFlag = regexp.MustCompile(`(?m)^flags\s*:.*\b(vmx|svm)\b`)

// accelArgs are QEMU's machine and CPU options for accel.
func accelArgs(accel string) []string {
	if accel == "kvm" {
		// -cpu host: the guest sees the real CPU, and nothing is emulated.
		return []string{"-machine", "pc,accel=kvm", "-cpu", "host"}
	}
	return []string{"-machine", "pc,accel=tcg"}
}
