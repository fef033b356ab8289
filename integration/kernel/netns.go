package kernel

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Netns is a network namespace the harness created, holding only a loopback
// interface. QEMU runs inside it, so SLIRP's 10.0.2.2 reaches this
// namespace's 127.0.0.1 and nothing else: the guest cannot see servers on the
// host's loopback, and the servers under test listen on fixed ports without
// colliding with anything outside.
type Netns struct {
	Name string
}

// NewNetns creates the namespace (`ip netns add`) and brings lo up.
func NewNetns(ctx context.Context, name string) (*Netns, error) {
	if out, err := exec.CommandContext(ctx, "ip", "netns", "add", name).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("netns: ip netns add %s: %v: %s", name, err, out)
	}
	n := &Netns{Name: name}
	if out, err := exec.CommandContext(ctx, "ip", "-n", name, "link", "set", "lo", "up").CombinedOutput(); err != nil {
		n.Delete()
		return nil, fmt.Errorf("netns: lo up in %s: %v: %s", name, err, out)
	}
	return n, nil
}

// Command returns a command that runs argv inside the namespace. `ip netns
// exec` execs argv directly, so the process's pid is argv's own and signals
// sent to it reach the program, not a wrapper.
func (n *Netns) Command(argv ...string) *exec.Cmd {
	return exec.Command("ip", append([]string{"netns", "exec", n.Name}, argv...)...)
}

// Dial connects from inside the namespace. The socket is created on an OS
// thread switched into the namespace; the thread is switched back before it
// is released, or discarded (left locked) if that fails.
func (n *Netns) Dial(network, addr string, timeout time.Duration) (net.Conn, error) {
	type result struct {
		c   net.Conn
		err error
	}
	ch := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		orig, err := os.Open(fmt.Sprintf("/proc/%d/task/%d/ns/net", os.Getpid(), unix.Gettid()))
		if err != nil {
			runtime.UnlockOSThread()
			ch <- result{err: err}
			return
		}
		defer orig.Close()
		target, err := os.Open("/run/netns/" + n.Name)
		if err != nil {
			runtime.UnlockOSThread()
			ch <- result{err: err}
			return
		}
		defer target.Close()
		if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			ch <- result{err: fmt.Errorf("setns %s: %w", n.Name, err)}
			return
		}
		c, err := net.DialTimeout(network, addr, timeout)
		if unix.Setns(int(orig.Fd()), unix.CLONE_NEWNET) == nil {
			runtime.UnlockOSThread()
		} // else: the goroutine exits locked and the runtime kills the thread.
		ch <- result{c, err}
	}()
	r := <-ch
	return r.c, r.err
}

// RemoveStale deletes namespaces named prefix+PID whose PID no longer
// exists: those a killed test run could not delete. Namespaces of live
// processes (a concurrent run) are left alone.
func RemoveStale(prefix string) {
	ents, _ := os.ReadDir("/run/netns")
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok {
			continue
		}
		pid, err := strconv.Atoi(rest)
		if err != nil || pid <= 0 {
			continue
		}
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); os.IsNotExist(err) {
			(&Netns{Name: e.Name()}).Delete()
		}
	}
}

// Delete removes the namespace. Processes still inside keep it alive until
// they exit; the harness stops its processes first.
func (n *Netns) Delete() error {
	if out, err := exec.Command("ip", "netns", "delete", n.Name).CombinedOutput(); err != nil {
		return fmt.Errorf("netns: ip netns delete %s: %v: %s", n.Name, err, out)
	}
	return nil
}
