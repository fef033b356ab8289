package nfs_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// libnfsTools returns the Debian libnfs-utils binaries, skipping the test when
// they are missing unless SEMFS_REQUIRE_TOOLS=1.
func libnfsTools(t *testing.T) {
	for _, b := range []string{"nfs-cp", "nfs-cat", "nfs-ls"} {
		if _, err := exec.LookPath(b); err != nil {
			if os.Getenv("SEMFS_REQUIRE_TOOLS") == "1" {
				t.Fatalf("%s not found and SEMFS_REQUIRE_TOOLS=1 (apt-get install libnfs-utils)", b)
			}
			t.Skipf("%s not found: install Debian's libnfs-utils to run the libnfs client tests", b)
		}
	}
}

func (e *env) url(path, extra string) string {
	return fmt.Sprintf("nfs://127.0.0.1%s?nfsport=%d&mountport=%d&version=3&auto-traverse-mounts=0%s", path, e.port, e.port, extra)
}

func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestLibnfs drives the server with libnfs (a C client independent of go-nfs):
// copy in (CREATE, WRITE, COMMIT), cat back (READ), list (READDIRPLUS), with
// attribution by mount path and by AUTH_UNIX uid.
func TestLibnfs(t *testing.T) {
	libnfsTools(t)
	e := newEnv(t)
	if err := e.reg.Register(4343, "agent"); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(t.TempDir(), "src")
	payload := bytes.Repeat([]byte("libnfs through semfs\n"), 200000) // ~4 MiB, several WRITEs
	os.WriteFile(src, payload, 0o644)

	run(t, "nfs-cp", src, e.url("/@notes/copied.txt", ""))
	if e.read("copied.txt") != string(payload) {
		t.Fatal("nfs-cp: on-disk contents differ")
	}
	if app, _ := e.created("copied.txt"); app != "notes" {
		t.Fatalf("nfs-cp via /@notes: created_by %q", app)
	}
	run(t, "nfs-cp", src, e.url("/@editor/edited.txt", ""))
	if app, _ := e.created("edited.txt"); app != "editor" {
		t.Fatalf("nfs-cp via /@editor: created_by %q", app)
	}
	run(t, "nfs-cp", src, e.url("/by-uid.txt", "&uid=4343&gid=4343"))
	if app, _ := e.created("by-uid.txt"); app != "agent" {
		t.Fatalf("nfs-cp with uid 4343: created_by %q", app)
	}

	if out := run(t, "nfs-cat", e.url("/@notes/copied.txt", "")); out != string(payload) {
		t.Fatalf("nfs-cat returned %d bytes", len(out))
	}

	for i := 0; i < 20; i++ {
		os.WriteFile(filepath.Join(e.dir, fmt.Sprintf("listed-%02d", i)), []byte("x"), 0o644)
	}
	out := run(t, "nfs-ls", e.url("/@notes", ""))
	for _, want := range []string{"copied.txt", "edited.txt", "by-uid.txt", "listed-00", "listed-19"} {
		if !strings.Contains(out, want) {
			t.Fatalf("nfs-ls lacks %s:\n%s", want, out)
		}
	}

	// Without auto-traverse-mounts=0 libnfs asks MOUNT EXPORT first.
	plain := fmt.Sprintf("nfs://127.0.0.1/@notes/copied.txt?nfsport=%d&mountport=%d&version=3", e.port, e.port)
	if out := run(t, "nfs-cat", plain); out != string(payload) {
		t.Fatalf("nfs-cat with mount traversal returned %d bytes", len(out))
	}

	// A mount path that is neither "/" nor "/@APP" is refused.
	if out, err := exec.Command("nfs-ls", e.url("/elsewhere", "")).CombinedOutput(); err == nil {
		t.Fatalf("nfs-ls of a refused export succeeded:\n%s", out)
	}
}
