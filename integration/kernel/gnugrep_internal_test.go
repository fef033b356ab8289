package kernel

import (
	"slices"
	"strings"
	"testing"
)

func TestLddPaths(t *testing.T) {
	out := "\tlinux-vdso.so.1 (0x00007ffc)\n" +
		"\tlibpcre2-8.so.0 => /lib/x86_64-linux-gnu/libpcre2-8.so.0 (0x00007f3b)\n" +
		"\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f3a)\n" +
		"\t/lib64/ld-linux-x86-64.so.2 (0x00007f3c)\n"
	want := []string{"/lib/x86_64-linux-gnu/libpcre2-8.so.0", "/lib/x86_64-linux-gnu/libc.so.6", "/lib64/ld-linux-x86-64.so.2"}
	if got := lddPaths(out); !slices.Equal(got, want) {
		t.Fatalf("lddPaths: %q, want %q", got, want)
	}
}

// TestParseGrep: the step's framing survives paths with spaces, colons and
// newlines-free oddities, and an answer with no file.
func TestParseGrep(t *testing.T) {
	out := "@@TIME 1500000000 0\n@@ERR\ngrep: warning: stray \\ before -\n\n@@OUT\n./b c.txt\x00./a:1.txt\x00"
	r, err := ParseGrep(out)
	if err != nil {
		t.Fatal(err)
	}
	if r.Seconds != 1.5 || r.Status != 0 || !slices.Equal(r.Files, []string{"a:1.txt", "b c.txt"}) || !strings.Contains(r.Stderr, "stray") {
		t.Fatalf("ParseGrep: %+v", r)
	}
	r, err = ParseGrep("@@TIME 7 1\n@@ERR\n\n@@OUT\n")
	if err != nil || r.Status != 1 || len(r.Files) != 0 {
		t.Fatalf("ParseGrep of no match: %+v, %v", r, err)
	}
	for _, bad := range []string{"", "@@TIME x 0\n@@ERR\n\n@@OUT\n", "grep: not found\n"} {
		if _, err := ParseGrep(bad); err == nil {
			t.Errorf("ParseGrep(%q): no error", bad)
		}
	}
}

// TestGrepScriptQuotes: a pattern with quotes and shell syntax reaches grep
// as one argument, unchanged.
func TestGrepScriptQuotes(t *testing.T) {
	s := GrepScript("/mnt/nfs/a b", `it's $(rm -rf /) "x"`, true, true)
	for _, want := range []string{`cd '/mnt/nfs/a b'`, `-e 'it'\''s $(rm -rf /) "x"' .`, "drop_caches", " -rlZ -F "} {
		if !strings.Contains(s, want) {
			t.Errorf("GrepScript lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(GrepScript("/m", "x", false, false), "drop_caches") {
		t.Error("a warm run drops the caches")
	}
}

func TestHWVirtFlag(t *testing.T) {
	for _, c := range []struct {
		cpuinfo string
		want    bool
	}{
		{"processor\t: 0\nflags\t\t: fpu vme de pse msr svm lahf_lm\n", true},
		{"flags\t\t: fpu vmx ssse3\n", true},
		{"flags\t\t: fpu hypervisor lahf_lm\nbugs\t\t: svm_spectre\n", false}, // kvm_pvm: no vmx/svm flag
		{"flags\t\t: fpu vmxnothing\n", false},
	} {
		if got := hwVirtFlag.MatchString(c.cpuinfo); got != c.want {
			t.Errorf("%q: %v, want %v", c.cpuinfo, got, c.want)
		}
	}
}
