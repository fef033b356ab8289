package integration_test

import (
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hugelgupf/p9/linux"
	"github.com/semfs/semfs/client"
	"github.com/semfs/semfs/integration/semfstest"
)

// TestBackingDirectoryMovedUnderTheDaemon: the backing directory is renamed away
// under a running daemon. /v1/health answers 503 with the reason, `semfs status`
// fails, and 9P and NFS clients get a clean ESTALE instead of writing into the
// moved directory; renamed back, the daemon serves it again.
func TestBackingDirectoryMovedUnderTheDaemon(t *testing.T) {
	d := semfstest.Start(t, semfstest.Options{ModelDir: "off"})
	ctx := d.Context()
	root9 := d.Attach9P(t, "@app", 0)
	v := d.MountNFS(t, "/@app", 0)
	if err := tryCreate9P(root9, "before.txt", []byte("x")); err != nil {
		t.Fatal(err)
	}

	moved := d.Data + ".moved"
	if err := os.Rename(d.Data, moved); err != nil {
		t.Fatal(err)
	}
	_, err := d.Client.Health(ctx)
	var ae *client.APIError
	if !errors.As(err, &ae) || ae.Status != http.StatusServiceUnavailable || !strings.Contains(ae.Message, "moved or removed") {
		t.Fatalf("health with the backing directory renamed away: %v", err)
	}
	if out, errOut, code := d.Run("status"); code == 0 || !strings.Contains(errOut+out, "moved or removed") {
		t.Fatalf("semfs status with the backing directory gone: exit %d, %q %q", code, out, errOut)
	}
	if err := tryCreate9P(root9, "after9p.txt", []byte("x")); !errors.Is(err, linux.ESTALE) {
		t.Fatalf("9P create with the backing directory gone: %v, want ESTALE", err)
	}
	if f, err := v.OpenFile("afternfs.txt", 0o644); err == nil {
		f.Close()
		t.Fatal("NFS create with the backing directory gone succeeded")
	}
	if !d.WaitLog("backing directory was moved or removed", semfstest.WaitBound) {
		t.Fatalf("the daemon did not log it:\n%s", d.Log())
	}
	if n := strings.Count(d.Log(), "backing directory was moved or removed; every operation fails"); n != 1 {
		t.Fatalf("logged %d times, want once", n)
	}
	ents, _ := os.ReadDir(moved)
	if len(ents) != 1 || ents[0].Name() != "before.txt" {
		t.Fatalf("something reached the moved directory: %v", ents)
	}

	if err := os.Rename(moved, d.Data); err != nil {
		t.Fatal(err)
	}
	if h, err := d.Client.Health(ctx); err != nil || h.Status != "ok" {
		t.Fatalf("health with the directory back: %+v %v", h, err)
	}
	if err := tryCreate9P(root9, "back.txt", []byte("x")); err != nil {
		t.Fatalf("9P create with the directory back: %v", err)
	}
	if _, err := os.Stat(filepath.Join(d.Data, "back.txt")); err != nil {
		t.Fatal(err)
	}
}
