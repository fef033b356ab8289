// Package require lets a test that cannot run here skip on a developer's
// machine but fail in CI, so that no test tests less in silence: a test
// that needs a page cache it can drop, a file system with user extended
// attributes (not tmpfs before Linux 6.6), dirty pages under writeback, or
// a CPU feature every CI machine has, calls Environment instead of t.Skip.
//
// CI sets CI=true (most CI systems do) or SEMFS_REQUIRE_ENV=1 (.ci/run).
// SEMFS_REQUIRE_TOOLS, SEMFS_REQUIRE_KERNEL and SEMFS_REQUIRE_MODEL do the
// same for external tools, QEMU and the model.
//
// Skips that stay skips in CI, because they are about the platform itself
// (a CI machine may rightly lack them) or are asked for:
//   - AVX-512, AVX512_BF16 and AMX kernels (embed/sgemm_internal_test.go,
//     sgemm_amx_amd64_test.go, uselite_test.go): CPU generations differ;
//     the AVX2+FMA kernels, which every x86-64 CI machine has, fail instead.
//   - /proc/cpuinfo, /proc/self/fd, /proc/self/task missing
//     (embed/cpuid_amd64_test.go, ninep, server/perms_test.go): not Linux.
//   - root-only cases (server, nfs, ninep perms tests, integration/meta):
//     CI runs as root, so they run there.
//   - -short, SEMFS_NFS_SERVE (a manual server), deploy's image build
//     without podman (SEMFS_REQUIRE_TOOLS covers it).
package require

import (
	"os"
	"testing"
)

// Env is the variable that turns these skips into failures outside CI too.
const Env = "SEMFS_REQUIRE_ENV"

// Strict reports whether a missing environment fails the test.
func Strict() bool { return os.Getenv("CI") == "true" || os.Getenv(Env) == "1" }

// Environment skips the test, saying why, or fails it in CI.
func Environment(t testing.TB, why string) {
	t.Helper()
	if Strict() {
		t.Fatal(why + " [CI=true or " + Env + "=1: a test this environment cannot run fails instead of skipping]")
	}
	t.Skip(why)
}
