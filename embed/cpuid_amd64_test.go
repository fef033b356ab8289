package embed

import (
	"bufio"
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/cpu"
)

// isAMD reads the vendor from CPUID as Linux does for /proc/cpuinfo, and the
// kernel chosen by default follows from it: AMX where usable, the
// AVX512_BF16 kernel on an AMD CPU that has the instructions, the
// bf16-weights kernel on an AVX2 CPU without AVX-512, fp32 otherwise.
func TestKernelChoiceFollowsTheCPU(t *testing.T) {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		t.Skip("no /proc/cpuinfo")
	}
	defer f.Close()
	vendor := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "vendor_id" {
			vendor = strings.TrimSpace(v)
			break
		}
	}
	if vendor == "" {
		t.Skip("no vendor_id in /proc/cpuinfo")
	}
	if got, want := isAMD(), vendor == "AuthenticAMD"; got != want {
		t.Fatalf("isAMD() = %v, /proc/cpuinfo says vendor %q", got, vendor)
	}
	want := kernFP32
	switch {
	case useAMX:
		want = kernAMX
	case useBF16 && vendor == "AuthenticAMD":
		want = kernBF16
	case useBF16W && !cpu.X86.HasAVX512F:
		want = kernBF16W
	}
	if got := chooseKernel(""); got != want {
		t.Fatalf("default kernel %v, want %v (vendor %s, AMX %v, AVX512_BF16 %v)", got, want, vendor, useAMX, useBF16)
	}
	if got := chooseKernel("fp32"); got != kernFP32 {
		t.Fatalf("SEMFS_EMBED_KERNEL=fp32 chose %v", got)
	}
}
