// Package deploy_test builds the container image with deploy/build-image.sh and
// checks what can be checked without running a container (these machines build
// images but cannot start them): the image's config, and the binary and model
// copied out of it, run on the host.
package deploy_test

import (
	"bytes"
	"debug/elf"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/semfs/semfs/integration/semfstest"
)

func podman(t *testing.T, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	cmd := exec.Command("podman", args...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("podman %s: %v\n%s%s", strings.Join(args, " "), err, out.String(), errb.String())
	}
	return strings.TrimSpace(out.String())
}

func TestContainerImage(t *testing.T) {
	if _, err := exec.LookPath("podman"); err != nil {
		if os.Getenv("SEMFS_REQUIRE_TOOLS") == "1" {
			t.Fatal("podman not found and SEMFS_REQUIRE_TOOLS=1 (apt-get install podman)")
		}
		t.Skip("podman not found: install podman to build and check the container image")
	}
	if testing.Short() {
		t.Skip("builds a container image")
	}
	repo := semfstest.RepoDir()
	image := fmt.Sprintf("localhost/semfs-test:%d", os.Getpid())
	build := exec.Command("bash", filepath.Join(repo, "deploy", "build-image.sh"), image)
	build.Dir = repo
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("deploy/build-image.sh: %v\n%s", err, out)
	}
	t.Cleanup(func() { exec.Command("podman", "rmi", "-f", image).Run() })

	var cfg struct {
		User         string
		ExposedPorts map[string]struct{}
		Volumes      map[string]struct{}
		Entrypoint   []string
		Cmd          []string
	}
	if err := json.Unmarshal([]byte(podman(t, "image", "inspect", "--format", "{{json .Config}}", image)), &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.User != "65532:65532" {
		t.Errorf("user %q, want 65532:65532 (non-root)", cfg.User)
	}
	if got, want := keys(cfg.ExposedPorts), []string{"2049/tcp", "5640/tcp"}; !reflect.DeepEqual(got, want) {
		t.Errorf("exposed ports %v, want %v", got, want)
	}
	if got, want := keys(cfg.Volumes), []string{"/run/semfs", "/var/berth/context", "/var/berth/context.index"}; !reflect.DeepEqual(got, want) {
		t.Errorf("volumes %v, want %v", got, want)
	}
	wantEntry := []string{"/opt/semfs/semfs", "serve", "--nfs", "0.0.0.0:2049", "--9p", "0.0.0.0:5640",
		"--data", "/var/berth/context", "--index", "/var/berth/context.index",
		"--socket", "/run/semfs/semfs.sock", "--model-dir", "/opt/semfs/model"}
	if !reflect.DeepEqual(cfg.Entrypoint, wantEntry) || len(cfg.Cmd) != 0 {
		t.Errorf("entrypoint %q cmd %q, want %q and no cmd", cfg.Entrypoint, cfg.Cmd, wantEntry)
	}

	// Copy the binary and the model out of a created (never started) container.
	id := podman(t, "create", image)
	t.Cleanup(func() { exec.Command("podman", "rm", "-f", id).Run() })
	out := t.TempDir()
	bin := filepath.Join(out, "semfs")
	podman(t, "cp", id+":/opt/semfs/semfs", bin)
	podman(t, "cp", id+":/opt/semfs/model", filepath.Join(out, "model"))

	// Static: no ELF interpreter, so it runs FROM scratch.
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("the image's binary is dynamically linked (has PT_INTERP)")
		}
	}
	f.Close()
	if v, err := exec.Command(bin, "version").Output(); err != nil || strings.TrimSpace(string(v)) == "" {
		t.Errorf("semfs version from the image: %q, %v", v, err)
	}
	if help, err := exec.Command(bin, "--help").Output(); err != nil || !strings.Contains(string(help), "serve") {
		t.Errorf("semfs --help from the image: %v\n%s", err, help)
	}

	// The model in the image is the fetched one, file for file.
	want := filepath.Join(repo, "embed", "model", "dist")
	ents, err := os.ReadDir(want)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		a, err1 := os.ReadFile(filepath.Join(want, e.Name()))
		b, err2 := os.ReadFile(filepath.Join(out, "model", e.Name()))
		if err1 != nil || err2 != nil || !bytes.Equal(a, b) {
			t.Errorf("model file %s differs in the image (%v, %v)", e.Name(), err1, err2)
		}
	}

	// And the pair serves: the image's binary loads the image's model.
	t.Setenv("SEMFS_BIN", bin)
	d := semfstest.Start(t, semfstest.Options{ModelDir: filepath.Join(out, "model"), NFS: "off", NineP: "off"})
	h, err := d.Client.Health(d.Context())
	if err != nil {
		t.Fatal(err)
	}
	if h.Index.Model == "" || h.Index.KeywordOnly != "" {
		t.Errorf("the image's binary did not load the image's model: %+v", h.Index)
	}
}

func keys(m map[string]struct{}) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
