// Package typescript_test runs @semfs/client's Node tests (node --test) from
// `go test ./...`, against the daemon binary the integration tests build.
package typescript_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/semfs/semfs/integration/semfstest"
)

func TestNodeClient(t *testing.T) {
	node, err := exec.LookPath("node")
	if err == nil {
		_, err = exec.LookPath("npm")
	}
	if err != nil {
		if os.Getenv("SEMFS_REQUIRE_TOOLS") == "1" {
			t.Fatalf("node and npm are needed and SEMFS_REQUIRE_TOOLS=1 (apt-get install npm): %v", err)
		}
		t.Skipf("node or npm not found, skipping @semfs/client's tests: %v", err)
	}
	out, err := exec.Command(node, "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	if m := regexp.MustCompile(`^v(\d+)\.`).FindSubmatch(out); m == nil {
		t.Fatalf("node --version said %q", out)
	} else if major, _ := strconv.Atoi(string(m[1])); major < 18 {
		t.Fatalf("node %s is older than the package's engines (>= 18)", out)
	}
	bin := semfstest.Binary(t)
	dir := filepath.Join(semfstest.RepoDir(), "clients", "typescript")
	cmd := exec.Command(node, "--test", "test/client.test.mjs", "test/pack.test.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "SEMFS_BIN="+bin)
	res, err := cmd.CombinedOutput()
	if err != nil || testing.Verbose() {
		t.Logf("node --test:\n%s", res)
	}
	if err != nil {
		t.Fatalf("@semfs/client's tests failed: %v", err)
	}
}
