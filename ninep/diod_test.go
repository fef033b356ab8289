package ninep_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDiodTools drives the server with diod's command-line clients (Debian
// package diod), which send Tauth first, a plain 9P2000.L Tversion and their euid
// as n_uname. Skipped when they are not installed.
func TestDiodTools(t *testing.T) {
	for _, tool := range []string{"diodcat", "diodls"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed (Debian package diod)", tool)
		}
	}
	e := newEnv(t)
	os.WriteFile(filepath.Join(e.export, "hello.txt"), []byte("hello from semfs\n"), 0o644)
	os.Mkdir(filepath.Join(e.export, "sub"), 0o755)
	run := func(name string, args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("%s %v: %v\n%s", name, args, err, out)
		}
		return string(out)
	}
	for _, aname := range []string{"/", "@notes"} {
		if got := run("diodcat", "-s", e.tcp, "-a", aname, "hello.txt"); got != "hello from semfs\n" {
			t.Fatalf("diodcat -a %s: %q", aname, got)
		}
		ls := run("diodls", "-l", "-s", e.tcp, "-a", aname)
		for _, want := range []string{"hello.txt", "sub", " .", ".."} {
			if !strings.Contains(ls, want) {
				t.Fatalf("diodls -l -a %s lacks %q:\n%s", aname, want, ls)
			}
		}
	}
	// An aname the server refuses makes the tool fail cleanly.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "diodcat", "-s", e.tcp, "-a", "/etc", "passwd").CombinedOutput(); err == nil {
		t.Fatalf("diodcat -a /etc succeeded: %s", out)
	}
}
