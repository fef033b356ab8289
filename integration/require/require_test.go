package require_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/semfs/semfs/integration/require"
)

// TestEnvironmentFailsInCI runs a test that calls Environment in a child
// process, once as on a developer's machine (it skips) and once as in CI
// (it fails).
func TestEnvironmentFailsInCI(t *testing.T) {
	if os.Getenv("REQUIRE_CHILD") == "1" {
		require.Environment(t, "no page cache to drop here")
		return
	}
	run := func(env ...string) (string, error) {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestEnvironmentFailsInCI$", "-test.v")
		cmd.Env = append(os.Environ(), append([]string{"REQUIRE_CHILD=1", "CI=", require.Env + "="}, env...)...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := run(); err != nil || !strings.Contains(out, "--- SKIP") {
		t.Fatalf("outside CI: want a skip, got %v\n%s", err, out)
	}
	for _, env := range []string{"CI=true", require.Env + "=1"} {
		if out, err := run(env); err == nil || !strings.Contains(out, "--- FAIL") || !strings.Contains(out, "no page cache") {
			t.Fatalf("with %s: want a failure saying why, got %v\n%s", env, err, out)
		}
	}
}
