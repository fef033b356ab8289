package conformance_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/semfs/semfs/integration/conformance"
	"github.com/semfs/semfs/integration/kernel"
)

// Fixed ports inside the harness's own network namespace (nothing else
// listens there); the guest reaches them at 10.0.2.2.
const (
	nfsPort   = 2049
	mountPort = 2050 // ganesha's MOUNT service; semfs serves MOUNT on nfsPort
	ninepPort = 5640
)

// What SEMFS_CONFORMANCE selects (the make targets set it).
const (
	modeSemfs = "semfs" // make conformance: semfs's NFSv3 and 9P mounts, gated against the peers
	modePeers = "peers" // make conformance-peers: nfs-ganesha and diod, results written to testdata
)

// requireRun skips unless SEMFS_CONFORMANCE asks for this run (a run boots
// QEMU for ~10-25 minutes), and skips or fails, as the kernel suite does,
// when QEMU or pjdfstest's build cannot run here.
func requireRun(t *testing.T, mode string) {
	t.Helper()
	if os.Getenv("SEMFS_CONFORMANCE") != mode {
		t.Skipf("SEMFS_CONFORMANCE=%s not set: pjdfstest through the kernel takes ~25 minutes (make conformance / make conformance-peers)", mode)
	}
	var why []string
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		why = append(why, "needs linux/amd64, this is "+runtime.GOOS+"/"+runtime.GOARCH)
	}
	if os.Geteuid() != 0 {
		why = append(why, "needs root (ip netns; pjdfstest runs as root in the guest)")
	}
	tools := []string{"qemu-system-x86_64", "ip", "depmod", "xz", "dpkg-deb", "apt-get", "apt-cache",
		"autoreconf", "make", "cc"}
	if mode == modePeers {
		tools = append(tools, "ganesha.nfsd", "rpcbind", "diod", "unshare")
	}
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			why = append(why, tool+" not found")
		}
	}
	if _, err := os.Stat("/bin/busybox"); err != nil {
		why = append(why, "/bin/busybox (busybox-static) not found")
	}
	if _, err := os.Stat(filepath.Join(pjdfstestSource(), "pjdfstest.c")); err != nil {
		why = append(why, "pjdfstest source not found at "+pjdfstestSource()+" (SEMFS_PJDFSTEST_SRC)")
	}
	if len(why) > 0 {
		skipOrFail(t, strings.Join(why, "; ")+" (as root: bash integration/kernel/setup.sh; apt-get install autoconf automake gcc make)")
	}
}

func skipOrFail(t *testing.T, why string) {
	t.Helper()
	msg := "pjdfstest conformance run cannot run: " + why
	if os.Getenv("CI") == "true" || os.Getenv("SEMFS_REQUIRE_KERNEL") == "1" {
		t.Fatal(msg + " [CI=true or SEMFS_REQUIRE_KERNEL=1: not skipping]")
	}
	t.Skip(msg)
}

// pjdfstestSource is the unmodified pjdfstest tree: $SEMFS_PJDFSTEST_SRC,
// else ../shared/peers/pjdfstest beside the repository.
func pjdfstestSource() string {
	if d := os.Getenv("SEMFS_PJDFSTEST_SRC"); d != "" {
		return d
	}
	abs, _ := filepath.Abs("../../../shared/peers/pjdfstest")
	return abs
}

// mount is one kernel mount of the server under test in the guest.
type mount struct {
	Label string // "semfs-nfs", "ganesha", ...: names result files and failures
	Proto string // "nfs" or "9p": which peer a semfs mount is compared with
	Path  string // mount point in the guest
	Cmd   string // guest shell that mounts it
}

// run is one boot: netns, servers, guest.
type run struct {
	t     *testing.T
	ctx   context.Context
	dir   string
	ns    *kernel.Netns
	srv   *kernel.Server
	vm    *kernel.VM
	suite *conformance.Suite
}

func newRun(t *testing.T) *run {
	t.Helper()
	r := &run{t: t, ctx: context.Background()}
	dir, err := os.MkdirTemp("", "semfsc-") // short: unix socket paths are limited to 108 bytes
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o755) // servers check access as the guest's users
	r.dir = dir
	t.Cleanup(func() {
		if t.Failed() || os.Getenv("SEMFS_KERNEL_KEEP") == "1" {
			t.Logf("run directory kept: %s (console.log, qemu.log, server.log)", dir)
			return
		}
		os.RemoveAll(dir)
	})
	t0 := time.Now()
	suite, err := conformance.BuildSuite(r.ctx, pjdfstestSource(), filepath.Join(dir, "pjdfstest"))
	if err != nil {
		t.Fatal(err)
	}
	r.suite = suite
	t.Logf("timing: pjdfstest build (%d test files): %.1fs", len(suite.Files), time.Since(t0).Seconds())
	kernel.RemoveStale("semfsc")
	ns, err := kernel.NewNetns(r.ctx, fmt.Sprintf("semfsc%d", os.Getpid()))
	if err != nil {
		skipOrFail(t, err.Error())
	}
	r.ns = ns
	t.Cleanup(func() {
		if r.vm != nil {
			r.vm.Close()
		}
		if r.srv != nil {
			r.srv.Stop(syscall.SIGTERM, 30*time.Second)
		}
		ns.Delete()
	})
	return r
}

// start runs the servers and boots the guest with pjdfstest in it.
func (r *run) start(srv *kernel.Server) {
	t := r.t
	t.Helper()
	r.srv = srv
	t0 := time.Now()
	if err := srv.Start(r.ctx, 120*time.Second); err != nil {
		t.Fatalf("servers: %v\n%s", err, tail(srv.LogPath, 30))
	}
	t.Logf("timing: servers ready: %.1fs", time.Since(t0).Seconds())
	t0 = time.Now()
	img, err := kernel.BuildImage(r.ctx, kernel.ImageConfig{Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]kernel.OverlayFile{}
	gf, err := r.suite.GuestFiles()
	if err != nil {
		t.Fatal(err)
	}
	for name, f := range gf {
		files[name] = kernel.OverlayFile{Mode: f.Mode, Data: f.Data}
	}
	vmDir := filepath.Join(r.dir, "vm")
	os.MkdirAll(vmDir, 0o755)
	vm, err := kernel.Boot(r.ctx, kernel.VMConfig{Image: img, Netns: r.ns, Dir: vmDir, Files: files, BootTimeout: 300 * time.Second})
	if err != nil {
		t.Fatalf("boot: %v", err)
	}
	r.vm = vm
	t.Logf("timing: image and boot to READY: %.1fs", time.Since(t0).Seconds())
}

// mount runs the guest's mount commands.
func (r *run) mount(ms ...mount) {
	script := []string{conformance.GuestSetup}
	for _, m := range ms {
		script = append(script, m.Cmd)
	}
	script = append(script, "grep -E ' (nfs|9p) ' /proc/mounts")
	res, err := r.vm.Run(r.ctx, "mount", 180*time.Second, strings.Join(script, "\n"))
	if err != nil || res.Status != 0 {
		r.t.Fatalf("mounts: %v (exit %d)\n%s", err, res.Status, res.Output)
	}
	if !strings.Contains(res.Output, "nobody is uid 65534 gid 65534") {
		r.t.Fatalf("guest set-up: utimensat/06.t and 07.t need user nobody (65534):\n%s", res.Output)
	}
	r.t.Logf("mounts:\n%s", res.Output)
}

// selected reports whether SEMFS_CONFORMANCE_MOUNTS (comma-separated
// labels, e.g. "semfs-9p" or "diod"; empty = all) selects the mount.
func selected(label string) bool {
	only := os.Getenv("SEMFS_CONFORMANCE_MOUNTS")
	if only == "" {
		return true
	}
	for _, l := range strings.Split(only, ",") {
		if strings.TrimSpace(l) == label {
			return true
		}
	}
	return false
}

// files are the test files a run runs: the suite, or those that
// SEMFS_CONFORMANCE_FILES (comma-separated prefixes, e.g. "chown/,open/06.t")
// selects, to rerun a few files while fixing them.
func (r *run) files() []string {
	only := os.Getenv("SEMFS_CONFORMANCE_FILES")
	if only == "" {
		return r.suite.Files
	}
	var fs []string
	for _, f := range r.suite.Files {
		for _, p := range strings.Split(only, ",") {
			if p = strings.TrimSpace(p); p != "" && strings.HasPrefix(f, p) {
				fs = append(fs, f)
				break
			}
		}
	}
	return fs
}

// suiteOn runs every counted test file through m, one guest step per file
// (a file that hangs is killed alone), and returns the results.
func (r *run) suiteOn(m mount) conformance.Results {
	t := r.t
	rs := conformance.Results{}
	t0 := time.Now()
	files := r.files()
	for i, f := range files {
		res, err := r.vm.Run(r.ctx, m.Label+"/"+f, fileTimeout, conformance.GuestScript(m.Path, f))
		if err != nil {
			t.Fatalf("mount %s, %s: the guest did not finish: %v", m.Label, f, err)
		}
		fr := conformance.ParseTAP(f, res.Output)
		switch {
		case res.Status == 137:
			fr.Note = "timeout"
		case res.Status != 0:
			fr.Note = fmt.Sprintf("exit %d", res.Status)
		}
		if fr.Ran == 0 {
			t.Logf("mount %s, %s: no assertions ran (exit %d):\n%s", m.Label, f, res.Status, lastLines(res.Output, 10))
		}
		rs[f] = fr
		if (i+1)%20 == 0 {
			failed, ran := rs.Total()
			t.Logf("mount %s: %d/%d files, %d of %d assertions failed, %.0fs", m.Label, i+1, len(files), failed, ran, time.Since(t0).Seconds())
		}
	}
	// Device nodes are out of the suite; record what each server answers
	// (docs/pjdfstest.md quotes it).
	res, err := r.vm.Run(r.ctx, m.Label+"/devices", 2*time.Minute, conformance.DeviceScript(m.Path))
	if err != nil {
		t.Fatalf("mount %s, devices: %v", m.Label, err)
	}
	t.Logf("mount %s: mknod of device nodes as root:\n%s", m.Label, res.Output)
	failed, ran := rs.Total()
	t.Logf("timing: mount %s: whole suite: %.0fs (%d of %d assertions failed)", m.Label, time.Since(t0).Seconds(), failed, ran)
	return rs
}

// fileTimeout bounds one test file in the guest (the longest, rename/09.t,
// takes a few minutes under TCG on a loaded machine).
const fileTimeout = 15 * time.Minute

// save writes the results (result format and a failure report) to
// $SEMFS_CONFORMANCE_OUT, when set.
func save(t *testing.T, label string, rs conformance.Results, header ...string) {
	out := os.Getenv("SEMFS_CONFORMANCE_OUT")
	if out == "" {
		return
	}
	os.MkdirAll(out, 0o755)
	if err := os.WriteFile(filepath.Join(out, label+".txt"), []byte(rs.Format(header...)), 0o644); err != nil {
		t.Error(err)
	}
	if err := os.WriteFile(filepath.Join(out, label+"-failures.txt"), []byte(rs.Report(header...)), 0o644); err != nil {
		t.Error(err)
	}
}

func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "(" + err.Error() + ")"
	}
	return lastLines(string(b), n)
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func semfsBinary(t *testing.T, dir string) string {
	if p := os.Getenv("SEMFS_BIN"); p != "" {
		abs, err := filepath.Abs(p)
		if err != nil {
			t.Fatal(err)
		}
		return abs
	}
	out := filepath.Join(dir, "semfs")
	cmd := exec.Command("go", "build", "-trimpath", "-o", out, "github.com/semfs/semfs/cmd/semfs")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/semfs: %v\n%s", err, b)
	}
	return out
}

func header(what string) []string {
	return []string{
		"pjdfstest (" + what + ") as root through Linux 6.1 (Debian, QEMU TCG); see docs/pjdfstest.md",
		"block and char removed from the file-type loops; mknod/*.t and unlink/00.t not run",
		"run " + time.Now().UTC().Format("2006-01-02 15:04 UTC"),
	}
}

// TestConformanceSemfs runs pjdfstest on semfs's NFSv3 and 9P mounts in one
// boot and fails on every assertion semfs fails that its peer (committed
// results) passes, unless docs/pjdfstest.md accepts it or lists it as a
// known failure.
func TestConformanceSemfs(t *testing.T) {
	requireRun(t, modeSemfs)
	r := newRun(t)
	bin := semfsBinary(t, r.dir)
	data, index := filepath.Join(r.dir, "data"), filepath.Join(r.dir, "index")
	sock, ninepSock := filepath.Join(r.dir, "ctl.sock"), filepath.Join(r.dir, "9p.sock")
	os.MkdirAll(data, 0o755)
	r.start(&kernel.Server{
		Netns: r.ns,
		Argv: [][]string{{bin, "serve", "--data", data, "--index", index, "--socket", sock,
			"--nfs", fmt.Sprintf("127.0.0.1:%d", nfsPort), "--9p", fmt.Sprintf("127.0.0.1:%d", ninepPort),
			"--9p-socket", ninepSock, "--model-dir", "off"}},
		WaitTCP:  []string{fmt.Sprintf("127.0.0.1:%d", nfsPort), fmt.Sprintf("127.0.0.1:%d", ninepPort)},
		WaitUnix: []string{sock},
		LogPath:  filepath.Join(r.dir, "semfs.log"),
	})
	nfs := mount{"semfs-nfs", "nfs", "/mnt/nfs", conformance.MountNFS("/", "/mnt/nfs", nfsPort, nfsPort)}
	p9 := mount{"semfs-9p", "9p", "/mnt/9p", conformance.Mount9P("/", "/mnt/9p", ninepPort)}
	r.mount(nfs, p9)
	results := map[string]conformance.Results{}
	for _, m := range []mount{nfs, p9} {
		if !selected(m.Label) {
			continue
		}
		results[m.Label] = r.suiteOn(m)
		save(t, m.Label, results[m.Label], header("semfs "+m.Proto)...)
	}
	gate(t, results)
}

// TestConformancePeers runs pjdfstest on nfs-ganesha (NFSv3, VFS FSAL) and
// diod (9P2000.L) under the same kernel, in one boot, and writes their
// results to testdata (they do not depend on semfs's code).
func TestConformancePeers(t *testing.T) {
	requireRun(t, modePeers)
	r := newRun(t)
	gexp, dexp := filepath.Join(r.dir, "exp-ganesha"), filepath.Join(r.dir, "exp-diod")
	for _, d := range []string{gexp, dexp} {
		os.MkdirAll(d, 0o755)
	}
	conf := filepath.Join(r.dir, "ganesha.conf")
	if err := os.WriteFile(conf, []byte(conformance.GaneshaConf(gexp, nfsPort, mountPort)), 0o644); err != nil {
		t.Fatal(err)
	}
	// rpcbind and ganesha share a private /run (their rendezvous is the unix
	// socket /run/rpcbind.sock, a filesystem path the host's own rpcbind, if
	// any, also uses): one mount namespace for both, inside the netns.
	gsh := fmt.Sprintf(`set -e
mount -t tmpfs -o mode=0755 semfsc-run /run
mkdir -p /run/rpcbind /run/ganesha
rpcbind -f >%[1]s/rpcbind.log 2>&1 &
i=0; while [ ! -S /run/rpcbind.sock ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done
exec ganesha.nfsd -F -L %[1]s/ganesha.log -f %[2]s -N NIV_EVENT -p /run/ganesha/ganesha.pid`, r.dir, conf)
	r.start(&kernel.Server{
		Netns: r.ns,
		Argv: [][]string{
			{"unshare", "--mount", "--propagation", "private", "sh", "-c", gsh},
			{"diod", "-f", "-n", "-c", "/dev/null", "-l", fmt.Sprintf("127.0.0.1:%d", ninepPort), "-e", dexp, "-L", filepath.Join(r.dir, "diod.log")},
		},
		WaitTCP: []string{fmt.Sprintf("127.0.0.1:%d", nfsPort), fmt.Sprintf("127.0.0.1:%d", mountPort), fmt.Sprintf("127.0.0.1:%d", ninepPort)},
		LogPath: filepath.Join(r.dir, "servers.log"),
	})
	ganesha := mount{"ganesha", "nfs", "/mnt/nfs", conformance.MountNFS(gexp, "/mnt/nfs", nfsPort, mountPort)}
	diod := mount{"diod", "9p", "/mnt/9p", conformance.Mount9P(dexp, "/mnt/9p", ninepPort)}
	r.mount(ganesha, diod)
	if err := os.MkdirAll("testdata", 0o755); err != nil {
		t.Fatal(err)
	}
	for _, m := range []mount{ganesha, diod} {
		if !selected(m.Label) {
			continue
		}
		rs := r.suiteOn(m)
		save(t, m.Label, rs, header(m.Label)...)
		p := filepath.Join("testdata", "peers-"+m.Label+".txt")
		if os.Getenv("SEMFS_CONFORMANCE_FILES") != "" {
			t.Logf("%s: SEMFS_CONFORMANCE_FILES selects part of the suite: %s not rewritten", m.Label, p)
			continue
		}
		if err := os.WriteFile(p, []byte(rs.Format(header(m.Label)...)), 0o644); err != nil {
			t.Fatal(err)
		}
		failed, ran := rs.Total()
		t.Logf("%s: %d of %d assertions failed; written to %s", m.Label, failed, ran, p)
	}
}

// gate compares semfs's results with the committed peers' and fails with
// every assertion semfs fails that the peer passes, apart from the accepted
// differences and the known failures docs/pjdfstest.md lists.
func gate(t *testing.T, results map[string]conformance.Results) {
	lists, err := conformance.ReadLists("../../docs/pjdfstest.md")
	if err != nil {
		t.Fatal(err)
	}
	var msgs []string
	var cols []conformance.Column
	defer func() {
		if out := os.Getenv("SEMFS_CONFORMANCE_OUT"); out != "" && len(cols) == 4 {
			os.WriteFile(filepath.Join(out, "table.md"), []byte(conformance.Table(cols...)), 0o644)
		}
	}()
	for _, c := range []struct{ label, proto, peer string }{{"semfs-nfs", "nfs", "ganesha"}, {"semfs-9p", "9p", "diod"}} {
		if _, ran := results[c.label]; !ran {
			t.Logf("%s not run (SEMFS_CONFORMANCE_MOUNTS=%s): not gated", c.label, os.Getenv("SEMFS_CONFORMANCE_MOUNTS"))
			continue
		}
		b, err := os.ReadFile(filepath.Join("testdata", "peers-"+c.peer+".txt"))
		if err != nil {
			t.Fatalf("peer results: %v (make conformance-peers writes them)", err)
		}
		peer, err := conformance.ParseResults(string(b))
		if err != nil {
			t.Fatalf("testdata/peers-%s.txt: %v", c.peer, err)
		}
		if os.Getenv("SEMFS_CONFORMANCE_FILES") != "" {
			for f := range peer { // part of the suite ran: gate only that part
				if _, ran := results[c.label][f]; !ran {
					delete(peer, f)
				}
			}
		}
		cols = append(cols, conformance.Column{Name: c.label, Results: results[c.label]}, conformance.Column{Name: c.peer, Results: peer})
		g := conformance.Compare(c.proto, results[c.label], peer, lists)
		failed, ran := results[c.label].Total()
		pf, pr := peer.Total()
		t.Logf("%s: %d of %d assertions failed (%s: %d of %d); accepted %d, known (issue 29 open) %d, new %d, fixed known %d",
			c.label, failed, ran, c.peer, pf, pr, len(g.Accepted), len(g.Known), len(g.New), len(g.Fixed))
		if len(g.Fixed) > 0 {
			sort.Strings(g.Fixed)
			t.Logf("%s: known failures that now pass (remove them from docs/pjdfstest.md's known list):\n  %s", c.label, strings.Join(g.Fixed, "\n  "))
		}
		if len(g.New) > 0 {
			msgs = append(msgs, fmt.Sprintf("%s fails %d assertions that %s passes (neither accepted nor known in docs/pjdfstest.md):\n%s",
				c.label, len(g.New), c.peer, g.NewReport()))
		}
	}
	if len(msgs) > 0 {
		t.Error(strings.Join(msgs, "\n"))
	}
}
