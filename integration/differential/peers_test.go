package differential_test

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/semfs/semfs/integration/differential"
)

// requirePeers skips (or fails under SEMFS_REQUIRE_TOOLS=1, as in CI) when
// the peer servers cannot run here: they are Debian packages and run as root.
func requirePeers(t *testing.T, tools ...string) {
	t.Helper()
	var why []string
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			why = append(why, tool+" not found")
		}
	}
	if slices.Contains(tools, "ganesha.nfsd") {
		if m, _ := filepath.Glob("/usr/lib/*/ganesha/libfsalvfs.so"); len(m) == 0 {
			why = append(why, "ganesha's VFS back end (libfsalvfs.so) not found")
		}
	}
	if os.Geteuid() != 0 {
		why = append(why, "not root (ganesha's VFS back end opens files by handle; diod switches uids)")
	}
	if len(why) == 0 {
		return
	}
	msg := fmt.Sprintf("peer servers unavailable: %v (apt-get install nfs-ganesha nfs-ganesha-vfs rpcbind diod, as root)", why)
	if os.Getenv("SEMFS_REQUIRE_TOOLS") == "1" {
		t.Fatal(msg + " [SEMFS_REQUIRE_TOOLS=1: not skipping]")
	}
	t.Skip(msg)
}

// freePort returns a loopback port nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// waitFor polls ok until it holds or timeout passes (a server's start has no
// event to wait on but its answer).
func waitFor(timeout time.Duration, ok func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := ok()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// process is a peer server started by the test, stopped at cleanup with
// SIGTERM and, after a bounded wait, SIGKILL.
type process struct {
	name    string
	cmd     *exec.Cmd
	exited  chan struct{}
	waitErr error // cmd.Wait's answer, once exited is closed
	log     string
}

func startProcess(t *testing.T, name, log string, args ...string) *process {
	t.Helper()
	out, err := os.Create(log + ".out")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		out.Close()
		t.Fatalf("start %s: %v", name, err)
	}
	p := &process{name: name, cmd: cmd, exited: make(chan struct{}), log: log}
	go func() { p.waitErr = cmd.Wait(); out.Close(); close(p.exited) }()
	t.Cleanup(func() { p.stop(t) })
	return p
}

// stop ends the process the test started, by its own pid. ganesha takes
// several seconds to shut down cleanly.
func (p *process) stop(t *testing.T) {
	select {
	case <-p.exited:
		return
	default:
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(30 * time.Second):
		p.cmd.Process.Kill()
		select {
		case <-p.exited:
		case <-time.After(10 * time.Second):
			t.Errorf("%s (pid %d) did not exit after SIGKILL", p.name, p.cmd.Process.Pid)
		}
	}
}

// tail returns whether the process still runs and the end of its logs, for
// a failure message.
func (p *process) tail() string {
	pid := p.cmd.Process.Pid
	s := fmt.Sprintf("%s (pid %d) still runs; %s\n", p.name, pid, whereBlocked(pid))
	select {
	case <-p.exited:
		s = fmt.Sprintf("%s (pid %d) exited: %v\n", p.name, pid, p.waitErr)
	default:
	}
	for _, f := range []string{p.log, p.log + ".out"} {
		b, _ := os.ReadFile(f)
		if len(b) > 4000 {
			b = b[len(b)-4000:]
		}
		s += fmt.Sprintf("--- %s\n%s", f, b)
	}
	return s
}

// whereBlocked says where a process that does not answer waits, from /proc:
// its state, the kernel function it sleeps in and its kernel stack (read as
// root), so that a server that neither listens nor logs (rpcbind, twice in
// make test runs) leaves a lead.
func whereBlocked(pid int) string {
	read := func(f string) string {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/%s", pid, f))
		if err != nil {
			return "(" + err.Error() + ")"
		}
		return strings.TrimSpace(string(b))
	}
	state := ""
	for _, l := range strings.Split(read("status"), "\n") {
		if strings.HasPrefix(l, "State:") {
			state = strings.TrimSpace(strings.TrimPrefix(l, "State:"))
		}
	}
	return fmt.Sprintf("state %s, wchan %s, kernel stack:\n%s", state, read("wchan"), read("stack"))
}

// ensureRpcbind starts rpcbind unless one already answers on port 111:
// ganesha registers its programs there and will not start without it. The
// test uses fixed ports, not rpcbind, to reach ganesha.
func ensureRpcbind(t *testing.T, dir string) {
	t.Helper()
	up := func() error {
		c, err := net.DialTimeout("tcp", "127.0.0.1:111", time.Second)
		if err == nil {
			c.Close()
		}
		return err
	}
	if up() == nil {
		return
	}
	os.MkdirAll("/run/rpcbind", 0o755)
	// rpcbind -h 127.0.0.1 crashes on Debian 12 (double free): it listens on
	// every address, as Debian's own service does.
	p := startProcess(t, "rpcbind", filepath.Join(dir, "rpcbind.log"), "rpcbind", "-f")
	// Once (make test, 2026-12-03, beside the kernel and integration
	// packages) rpcbind did not answer within 20 s and its logs were empty:
	// the wait is longer now, and the message says whether it still ran.
	if err := waitFor(60*time.Second, up); err != nil {
		t.Fatalf("rpcbind did not listen on 127.0.0.1:111: %v\n%s", err, p.tail())
	}
}

// ganeshaConf is the one export this test serves: NFSv3 over TCP only,
// root not squashed, on ports of its own.
const ganeshaConf = `NFS_CORE_PARAM {
    Bind_addr = 127.0.0.1;
    NFS_Port = %d;
    MNT_Port = %d;
    Protocols = 3;
    Enable_NLM = false;
    Enable_RQUOTA = false;
    Enable_UDP = false;
}
NFSV4 { Graceless = true; }
EXPORT {
    Export_Id = 1;
    Path = %s;
    Pseudo = /differential;
    Access_Type = RW;
    Squash = No_Root_Squash;
    Protocols = 3;
    Transports = TCP;
    SecType = sys;
    FSAL { Name = VFS; }
}
LOG { Default_Log_Level = EVENT; }
`

// startGanesha serves export (a real path, which is also the MOUNT path)
// and returns its NFS and MOUNT addresses.
func startGanesha(t *testing.T, dir, export string) (nfsAddr, mountAddr string) {
	t.Helper()
	ensureRpcbind(t, dir)
	nfsPort, mntPort := freePort(t), freePort(t)
	conf := filepath.Join(dir, "ganesha.conf")
	if err := os.WriteFile(conf, fmt.Appendf(nil, ganeshaConf, nfsPort, mntPort, export), 0o644); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(dir, "ganesha.log")
	// A pid file of its own: ganesha locks it, and another test may run one.
	p := startProcess(t, "ganesha", log, "ganesha.nfsd", "-F", "-L", log, "-f", conf,
		"-N", "NIV_EVENT", "-p", filepath.Join(dir, "ganesha.pid"))
	nfsAddr = "127.0.0.1:" + strconv.Itoa(nfsPort)
	mountAddr = "127.0.0.1:" + strconv.Itoa(mntPort)
	err := waitFor(60*time.Second, func() error {
		select {
		case <-p.exited:
			return fmt.Errorf("ganesha exited")
		default:
		}
		c, err := differential.DialNFS(mountAddr, 0, 0)
		if err != nil {
			return err
		}
		defer c.Close()
		_, err = c.Mount(export)
		return err
	})
	if err != nil {
		t.Fatalf("ganesha did not serve %s: %v\n%s", export, err, p.tail())
	}
	return nfsAddr, mountAddr
}

// startDiod serves export with no authentication (-n) and returns its
// address; -c /dev/null keeps the machine's diod.conf out of the test.
func startDiod(t *testing.T, dir, export string) string {
	t.Helper()
	addr := "127.0.0.1:" + strconv.Itoa(freePort(t))
	log := filepath.Join(dir, "diod.log")
	p := startProcess(t, "diod", log, "diod", "-f", "-n", "-c", "/dev/null", "-l", addr, "-e", export, "-L", log)
	err := waitFor(30*time.Second, func() error {
		select {
		case <-p.exited:
			return fmt.Errorf("diod exited")
		default:
		}
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
		}
		return err
	})
	if err != nil {
		t.Fatalf("diod did not listen on %s: %v\n%s", addr, err, p.tail())
	}
	return addr
}
