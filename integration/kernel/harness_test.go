package kernel_test

import (
	"context"
	"crypto/md5"
	_ "embed"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/semfs/semfs/integration/kernel"
)

//go:embed guest/lib.sh
var guestLib []byte

// Fixed ports inside the harness's own network namespace (nothing else
// listens there); the guest reaches them at 10.0.2.2.
const (
	nfsPort   = 2049
	ninepPort = 5640
)

// requireKernel skips the test when QEMU cannot run here, and fails instead
// when CI=true or SEMFS_REQUIRE_KERNEL=1: there, a skip would hide that the
// kernel clients were never exercised. -short also skips (outside CI): the
// suite boots a VM and takes minutes on 2 cores.
func requireKernel(t *testing.T) {
	t.Helper()
	must := os.Getenv("CI") == "true" || os.Getenv("SEMFS_REQUIRE_KERNEL") == "1"
	var why []string
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		why = append(why, "needs linux/amd64, this is "+runtime.GOOS+"/"+runtime.GOARCH)
	}
	if os.Geteuid() != 0 {
		why = append(why, "needs root (ip netns, and the CLI run as uid 1000)")
	}
	for _, tool := range []string{"qemu-system-x86_64", "ip", "depmod", "xz", "dpkg-deb", "apt-get", "apt-cache"} {
		if _, err := exec.LookPath(tool); err != nil {
			why = append(why, tool+" not found")
		}
	}
	if _, err := os.Stat("/bin/busybox"); err != nil {
		why = append(why, "/bin/busybox (busybox-static) not found")
	}
	if len(why) > 0 {
		skipOrFail(t, strings.Join(why, "; ")+" (as root: bash integration/kernel/setup.sh)")
	}
	if testing.Short() && !must {
		t.Skip("-short: the QEMU kernel-client suite boots a VM (minutes under TCG); run without -short")
	}
}

// skipOrFail skips with why, or fails when CI=true or SEMFS_REQUIRE_KERNEL=1.
func skipOrFail(t *testing.T, why string) {
	t.Helper()
	msg := "QEMU kernel-client tests cannot run: " + why
	if os.Getenv("CI") == "true" || os.Getenv("SEMFS_REQUIRE_KERNEL") == "1" {
		t.Fatal(msg + " [CI=true or SEMFS_REQUIRE_KERNEL=1: not skipping]")
	}
	t.Skip(msg)
}

// mnt is one kernel mount in the guest.
type mnt struct {
	Name    string // "nfs", "9p-tcp", "9p-fd": how failures name the mount
	Path    string // mount point in the guest
	HostDir string // the backing directory seen from the host (the export root)
}

// harness is one boot: a netns, a server, a guest.
type harness struct {
	t      *testing.T
	ctx    context.Context
	dir    string
	ns     *kernel.Netns
	srv    *kernel.Server
	vm     *kernel.VM
	img    *kernel.Image
	timing []string
}

// buildGo builds a package of this module into dir and returns the binary.
func buildGo(t *testing.T, dir, pkg, name string, env ...string) string {
	t.Helper()
	out := filepath.Join(dir, name)
	cmd := exec.Command("go", "build", "-trimpath", "-o", out, pkg)
	cmd.Env = append(os.Environ(), env...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, b)
	}
	return out
}

// newHarness builds the image (cached) and the guest helper, creates the
// netns and a run directory. The server and the guest are started later.
func newHarness(t *testing.T) *harness {
	t.Helper()
	requireKernel(t)
	h := &harness{t: t, ctx: context.Background()}
	// Short names: unix socket paths are limited to 108 bytes.
	dir, err := os.MkdirTemp("", "semfsk-")
	if err != nil {
		t.Fatal(err)
	}
	h.dir = dir
	os.Chmod(dir, 0o755) // servers may check access as the guest's user
	t.Cleanup(func() {
		if t.Failed() || os.Getenv("SEMFS_KERNEL_KEEP") == "1" {
			t.Logf("run directory kept: %s (console.log, qemu.log, server.log)", dir)
			return
		}
		os.RemoveAll(dir)
	})
	t0 := time.Now()
	img, err := kernel.BuildImage(h.ctx, kernel.ImageConfig{Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	h.img = img
	h.mark("image (cached: %s, %s %s, pvh=%v)", img.Dir, img.KernelPackage, img.KernelVersion, img.PVH, t0)
	kernel.RemoveStale("semfsk")
	ns, err := kernel.NewNetns(h.ctx, fmt.Sprintf("semfsk%d", os.Getpid()))
	if err != nil {
		// Root without CAP_SYS_ADMIN (some containers): no namespace, no
		// isolated SLIRP network, so QEMU cannot be run the way the suite needs.
		skipOrFail(t, err.Error())
	}
	h.ns = ns
	t.Cleanup(func() {
		if h.vm != nil {
			h.vm.Close()
		}
		if h.srv != nil {
			h.srv.Stop(syscall.SIGTERM, 15*time.Second)
		}
		ns.Delete()
	})
	return h
}

func (h *harness) mark(format string, a ...any) {
	t0 := a[len(a)-1].(time.Time)
	line := fmt.Sprintf(format, a[:len(a)-1]...) + fmt.Sprintf(": %.1fs", time.Since(t0).Seconds())
	h.timing = append(h.timing, line)
	h.t.Log("timing: " + line)
}

// boot starts the guest with the helper binary and the step library.
func (h *harness) boot(ninePSocket string) {
	t := h.t
	t.Helper()
	t0 := time.Now()
	helper := buildGo(t, h.dir, "./guesttool", "semfs-guest", "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64")
	helperBin, err := os.ReadFile(helper)
	if err != nil {
		t.Fatal(err)
	}
	h.mark("build guest helper", t0)
	// GNU grep, the oracle for /v1/grep through a kernel mount (grep_test.go).
	files, _, err := kernel.GNUGrep(h.ctx)
	if err != nil {
		skipOrFail(t, err.Error())
	}
	files["guest"] = kernel.OverlayFile{Mode: 0o755, Data: helperBin}
	files["lib.sh"] = kernel.OverlayFile{Mode: 0o644, Data: guestLib}
	t0 = time.Now()
	vmDir := filepath.Join(h.dir, "vm")
	os.MkdirAll(vmDir, 0o755)
	vm, err := kernel.Boot(h.ctx, kernel.VMConfig{
		Image: h.img, Netns: h.ns, Dir: vmDir, NinePSocket: ninePSocket, Files: files,
	})
	if err != nil {
		t.Fatalf("boot: %v", err)
	}
	h.vm = vm
	h.mark("boot to READY (qemu start to guest init ready, modules loaded; accel %s)", kernel.Accel(), t0)
}

// step runs a guest script (after sourcing the library) and fails the test
// with the mount, the step and the guest's output unless it exits 0.
func (h *harness) step(t *testing.T, mount, name string, timeout time.Duration, script string) string {
	t.Helper()
	t0 := time.Now()
	res, err := h.vm.Run(h.ctx, mount+"/"+name, timeout, ". /semfs/lib.sh\n"+script)
	if err != nil {
		t.Fatalf("mount %s, step %s: guest did not finish the step: %v", mount, name, err)
	}
	if testing.Verbose() {
		t.Logf("mount %s, step %s: %.1fs", mount, name, time.Since(t0).Seconds())
	}
	if res.Status != 0 {
		t.Fatalf("mount %s, step %s: exit status %d\n--- guest output ---\n%s\n--- guest dmesg (last 15 lines) ---\n%s",
			mount, name, res.Status, res.Output, h.dmesg())
	}
	return res.Output
}

// dmesg fetches the guest kernel's recent messages (best effort).
func (h *harness) dmesg() string {
	res, err := h.vm.Run(h.ctx, "dmesg", 20*time.Second, "dmesg | tail -n 15")
	if err != nil {
		return "(unavailable: " + err.Error() + ")"
	}
	return res.Output
}

func md5file(t *testing.T, p string) string {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := md5.New()
	if _, err := io.Copy(h, f); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func md5bytes(b []byte) string {
	s := md5.Sum(b)
	return hex.EncodeToString(s[:])
}

// makeListingDir creates, on the host side of the backing directory, the n
// files the listing step expects: f00000.., file i of size (i*7)%101.
func makeListingDir(t *testing.T, dir string, n int) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 101)
	for i := range buf {
		buf[i] = 'a' + byte(i%26)
	}
	for i := 0; i < n; i++ {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%05d", i)), buf[:(i*7)%101], 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// battery runs issue 6's POSIX battery through m in its own directory dir
// (relative to the export root); listing is a host-made directory with
// listingN entries (relative too) that the mount lists.
func (h *harness) battery(t *testing.T, m mnt, dir, listing string, listingN int) {
	d := m.Path + "/" + dir
	h.step(t, m.Name, "mkdir", 30*time.Second, fmt.Sprintf("mkdir -p %s || fail 'mkdir %s'", d, d))
	steps := []struct {
		name    string
		timeout time.Duration
		script  string
	}{
		{"create-write-read-append", 60 * time.Second, "b_rw " + d},
		{"o_excl", 60 * time.Second, "b_excl " + d},
		{"truncate", 60 * time.Second, "b_truncate " + d},
		{"mkdir-p-5", 60 * time.Second, "b_mkdirp " + d},
		{"rename", 60 * time.Second, "b_rename " + d},
		{"links", 60 * time.Second, "b_links " + d},
		{"chmod-touch", 60 * time.Second, "b_chmod_times " + d},
		{"rm-r", 60 * time.Second, "b_rmr " + d},
		{"df", 30 * time.Second, "b_df " + m.Path},
		{"concurrent-writers", 120 * time.Second, "b_concurrent " + d},
		{"ls-l-" + strconv.Itoa(listingN), 180 * time.Second, fmt.Sprintf("b_ls %s/%s %d", m.Path, listing, listingN)},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) { h.step(t, m.Name, s.name, s.timeout, s.script) })
	}
	t.Run("16MiB-checksum", func(t *testing.T) {
		seed := "big-" + m.Name
		want := md5bytes(kernel.Pattern(seed, 16<<20))
		h.step(t, m.Name, "16MiB-write", 180*time.Second, fmt.Sprintf("b_big %s %s %s", d, seed, want))
		if got := md5file(t, filepath.Join(m.HostDir, dir, "big.bin")); got != want {
			t.Fatalf("mount %s, step 16MiB-checksum: host-side md5 of %s is %s, want %s", m.Name, filepath.Join(m.HostDir, dir, "big.bin"), got, want)
		}
		h.step(t, m.Name, "16MiB-rm", 60*time.Second, "rm "+d+"/big.bin || fail rm")
	})
}

// coherence: written over one protocol, read over the other, in one guest.
func (h *harness) coherence(t *testing.T, nfs, ninep, ninepfd mnt, dir string) {
	script := fmt.Sprintf(`
N=%s/%s P=%s/%s F=%s/%s
mkdir -p $N || fail mkdir
printf 'from-nfs\n' >$N/a || fail "write over NFS"
eq "$(cat $P/a)" from-nfs "9P/TCP read of a file written over NFS"
eq "$(cat $F/a)" from-nfs "9P/fd read of a file written over NFS"
printf 'from-9p\n' >$P/b || fail "write over 9P"
eq "$(cat $N/b)" from-9p "NFS read of a file written over 9P/TCP"
printf 'rewritten-over-9p\n' >$P/a || fail "overwrite over 9P"
eq "$(cat $N/a)" rewritten-over-9p "NFS re-read (close-to-open) of a file rewritten over 9P/TCP"
printf 'appended-over-9pfd\n' >>$F/a || fail "append over 9P/fd"
eq "$(tr '\n' , <$N/a)" "rewritten-over-9p,appended-over-9pfd," "NFS read after a 9P/fd append"
mkdir $N/d && mv $N/b $N/d/b2 || fail "mkdir+rename over NFS"
eq "$(cat $P/d/b2)" from-9p "9P read after an NFS rename"
ln -s d/b2 $P/sl || fail "symlink over 9P"
eq "$(readlink $N/sl)" d/b2 "NFS readlink of a 9P symlink"
echo coherence ok
`, nfs.Path, dir, ninep.Path, dir, ninepfd.Path, dir)
	h.step(t, "nfs+9p-tcp+9p-fd", "coherence", 60*time.Second, script)
}
