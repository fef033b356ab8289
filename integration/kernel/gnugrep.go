package kernel

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// GuestGrep is where GNUGrep puts GNU grep in the guest. It is not on the
// guest's PATH: there, grep is busybox's, which the step library relies on.
const GuestGrep = "/semfs/gnu-grep"

// GNUGrep returns overlay files (VMConfig.Files) that put the host's GNU grep
// in the guest at GuestGrep, with every shared object `ldd` says it loads at
// the same absolute path (Debian ships no static GNU grep, and busybox's grep
// is another program), plus its version as `grep --version` gives it after
// the program's name ("(GNU grep) 3.8"). It is
// the independent oracle for POST /v1/grep through a kernel mount.
func GNUGrep(ctx context.Context) (map[string]OverlayFile, string, error) {
	bin, err := exec.LookPath("grep")
	if err != nil {
		return nil, "", fmt.Errorf("gnugrep: %w", err)
	}
	ver, err := exec.CommandContext(ctx, bin, "--version").Output()
	first, _, _ := strings.Cut(string(ver), "\n")
	i := strings.Index(first, "(GNU grep)")
	if err != nil || i < 0 {
		return nil, "", fmt.Errorf("gnugrep: %s is not GNU grep (%q, %v)", bin, first, err)
	}
	out, err := exec.CommandContext(ctx, "ldd", bin).Output()
	if err != nil {
		return nil, "", fmt.Errorf("gnugrep: ldd %s: %w", bin, err)
	}
	libs := lddPaths(string(out))
	if len(libs) == 0 {
		return nil, "", fmt.Errorf("gnugrep: ldd %s listed no shared objects:\n%s", bin, out)
	}
	files := map[string]OverlayFile{}
	for _, p := range append([]string{bin}, libs...) {
		b, err := os.ReadFile(p) // follows the symlink: the guest gets a plain copy
		if err != nil {
			return nil, "", fmt.Errorf("gnugrep: %w", err)
		}
		name := p
		if p == bin {
			name = filepath.Base(GuestGrep)
		}
		files[name] = OverlayFile{Mode: 0o755, Data: b}
	}
	return files, first[i:], nil
}

// lddPaths returns the absolute paths in ldd's output: "lib => /path (addr)"
// and the interpreter's "/lib64/ld-linux-x86-64.so.2 (addr)"; the vDSO has
// none.
func lddPaths(out string) []string {
	var ps []string
	for _, l := range strings.Split(out, "\n") {
		for _, f := range strings.Fields(l) {
			if strings.HasPrefix(f, "/") {
				ps = append(ps, f)
				break
			}
		}
	}
	return ps
}

// GrepRun is one timed GNU grep run in the guest.
type GrepRun struct {
	Seconds float64  `json:"seconds"` // grep's wall time from exec to exit, on the guest's clock
	Status  int      `json:"status"`  // grep's exit status: 0 a match, 1 none, 2 an error
	Files   []string `json:"files"`   // the files it listed, relative to the directory searched, sorted
	Stderr  string   `json:"stderr"`  // the first 4 KiB of its error output
}

// GrepScript is a guest step that runs `grep -rlZ -F|-E -e PATTERN .` with
// GNU grep in dir, timed by the guest helper (`semfs-guest time`, which
// starts the clock just before exec). cold drops the guest's page, dentry
// and inode caches first (`echo 3 > /proc/sys/vm/drop_caches`), so every
// file is looked up and read again through the mount; the server's own
// caches are not touched. ParseGrep reads the step's output.
func GrepScript(dir, pattern string, fixed, cold bool) string {
	mode := "-E"
	if fixed {
		mode = "-F"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "cd %s || exit 3\n", shQuote(dir))
	if cold {
		b.WriteString("sync; echo 3 >/proc/sys/vm/drop_caches || exit 3\n")
	}
	fmt.Fprintf(&b, "/semfs/guest time /tmp/grep.out /tmp/grep.err %s -rlZ %s -e %s . || exit 3\n", GuestGrep, mode, shQuote(pattern))
	b.WriteString("echo @@ERR; head -c 4096 /tmp/grep.err; echo; echo @@OUT; cat /tmp/grep.out; rm -f /tmp/grep.out /tmp/grep.err\n")
	return b.String()
}

// ParseGrep reads the output of a GrepScript step.
func ParseGrep(out string) (GrepRun, error) {
	var r GrepRun
	i := strings.Index(out, "@@TIME ")
	j := strings.Index(out, "\n@@ERR\n")
	k := strings.Index(out, "\n@@OUT\n")
	if i < 0 || j < i || k < j {
		return r, fmt.Errorf("gnugrep: step output is not a GrepScript's:\n%.2000s", out)
	}
	f := strings.Fields(out[i+len("@@TIME ") : j])
	if len(f) != 2 {
		return r, fmt.Errorf("gnugrep: bad time line %q", out[i:j])
	}
	ns, err1 := strconv.ParseInt(f[0], 10, 64)
	st, err2 := strconv.Atoi(f[1])
	if err := errors.Join(err1, err2); err != nil {
		return r, fmt.Errorf("gnugrep: bad time line %q: %w", out[i:j], err)
	}
	r.Seconds, r.Status = float64(ns)/1e9, st
	r.Stderr = strings.TrimSpace(out[j+len("\n@@ERR\n") : k])
	for _, p := range strings.Split(out[k+len("\n@@OUT\n"):], "\x00") {
		if p = strings.TrimPrefix(p, "./"); p != "" && p != "\n" {
			r.Files = append(r.Files, p)
		}
	}
	sort.Strings(r.Files)
	return r, nil
}

// shQuote quotes s for sh: in single quotes, each ' as '\”.
func shQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
