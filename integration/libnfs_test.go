package integration_test

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/semfs/semfs/client"
	"github.com/semfs/semfs/integration/semfstest"
)

// TestLibnfsAgainstTheDaemon drives the real `semfs serve` with Debian's libnfs
// tools (a C NFSv3 client independent of go-nfs): files copied in through
// /@notes and /@editor land on disk, are read back and listed, and
// `semfs query` finds each under its creator.
func TestLibnfsAgainstTheDaemon(t *testing.T) {
	for _, b := range []string{"nfs-cp", "nfs-cat", "nfs-ls"} {
		if _, err := exec.LookPath(b); err != nil {
			if os.Getenv("SEMFS_REQUIRE_TOOLS") == "1" {
				t.Fatalf("%s not found and SEMFS_REQUIRE_TOOLS=1 (apt-get install libnfs-utils)", b)
			}
			t.Skipf("%s not found: install Debian's libnfs-utils to run this test", b)
		}
	}
	d := semfstest.Start(t, semfstest.Options{ModelDir: "off"})
	_, port, _ := net.SplitHostPort(d.NFS)
	url := func(p string) string {
		return fmt.Sprintf("nfs://127.0.0.1%s?nfsport=%s&mountport=%s&version=3", p, port, port)
	}
	run := func(name string, args ...string) string {
		t.Helper()
		out, err := exec.Command(name, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	src := filepath.Join(t.TempDir(), "src")
	payload := bytes.Repeat([]byte("libnfs through the semfs daemon\n"), 100000) // 3.2 MB
	if err := os.WriteFile(src, payload, 0o644); err != nil {
		t.Fatal(err)
	}
	run("nfs-cp", src, url("/@notes/meeting-notes.txt"))
	run("nfs-cp", src, url("/@editor/draft.txt"))
	if b, _ := os.ReadFile(filepath.Join(d.Data, "meeting-notes.txt")); !bytes.Equal(b, payload) {
		t.Fatalf("backing file holds %d bytes, want the %d copied", len(b), len(payload))
	}
	if got := run("nfs-cat", url("/@editor/meeting-notes.txt")); got != string(payload) {
		t.Fatalf("nfs-cat read %d bytes back", len(got))
	}
	if ls := run("nfs-ls", url("/@notes/")); !strings.Contains(ls, "meeting-notes.txt") || !strings.Contains(ls, "draft.txt") {
		t.Fatalf("nfs-ls:\n%s", ls)
	}
	// A mount path that names neither the root nor an app is refused.
	if out, err := exec.Command("nfs-ls", url("/not-an-export/")).CombinedOutput(); err == nil {
		t.Fatalf("nfs-ls of an unknown export succeeded:\n%s", out)
	}
	for app, want := range map[string]string{"notes": "meeting-notes.txt", "editor": "draft.txt"} {
		res, err := d.Client.Query(d.Context(), client.QueryRequest{Text: app})
		if err != nil || len(res) != 1 || res[0].Path != want || res[0].CreatedBy != app {
			t.Errorf("query %s: %+v %v", app, res, err)
		}
	}
}
