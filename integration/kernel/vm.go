package kernel

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// VMConfig describes one guest boot.
type VMConfig struct {
	Image *Image
	Netns *Netns // qemu runs inside; the guest's 10.0.2.2 is this netns's 127.0.0.1
	Dir   string // run directory: control socket, console.log, qemu.log, initrd
	// Files are added to the guest under /semfs/ by a per-boot cpio archive
	// appended to the cached initramfs (the helper binary, the step library);
	// a name starting with "/" is put at that absolute path instead (shared
	// objects a dynamically linked program loads from /lib, see GNUGrep).
	Files map[string]OverlayFile
	// NinePSocket is a host unix socket where a 9P server listens; QEMU
	// connects the guest's virtio-serial port "semfs.9p" to it (reconnecting
	// every second if it goes away). "" = no such port.
	NinePSocket string
	MemMB       int           // 0 = 256
	BootTimeout time.Duration // until the guest's READY; 0 = 150 s
	// Accel is QEMU's accelerator, "kvm" or "tcg"; "" = Accel().
	Accel string
}

// OverlayFile is one file of the per-boot overlay.
type OverlayFile struct {
	Mode fs.FileMode
	Data []byte
}

// VM is a running guest driven through the step protocol documented in
// guest/init.sh: the host sends a shell script, the guest runs it and streams
// back its output and exit status. A VM runs one step at a time.
type VM struct {
	cfg      VMConfig
	nonce    string
	cmd      *exec.Cmd
	qemuDone chan struct{}
	qemuErr  error
	conn     net.Conn
	lines    chan string
	mu       sync.Mutex
	nextID   int
	dead     error // set once the guest can no longer run steps
	Console  string
	BootTime time.Duration // qemu start to READY
}

// StepResult is what one step produced.
type StepResult struct {
	Name   string
	Status int    // the script's exit status (137 = killed by the guest's timeout)
	Output string // stdout+stderr
}

// Boot starts QEMU (1 vCPU; TCG, or KVM where it runs a stock kernel: see
// Accel) inside the netns and waits for the guest's READY line on the
// control port.
func Boot(ctx context.Context, cfg VMConfig) (*VM, error) {
	if cfg.MemMB == 0 {
		cfg.MemMB = 256
	}
	if cfg.BootTimeout == 0 {
		cfg.BootTimeout = 150 * time.Second
	}
	if cfg.Accel == "" {
		cfg.Accel = Accel()
	}
	nb := make([]byte, 6)
	rand.Read(nb)
	vm := &VM{cfg: cfg, nonce: hex.EncodeToString(nb), qemuDone: make(chan struct{}), lines: make(chan string, 4096)}
	vm.Console = filepath.Join(cfg.Dir, "console.log")

	initrd := filepath.Join(cfg.Dir, "initrd")
	if err := writeInitrd(cfg.Image.Initrd, initrd, cfg.Files); err != nil {
		return nil, err
	}
	ctlPath := filepath.Join(cfg.Dir, "ctl.sock")
	ln, err := net.Listen("unix", ctlPath)
	if err != nil {
		return nil, fmt.Errorf("vm: control socket: %w", err)
	}
	defer ln.Close()

	kargs := "console=ttyS0 panic=-1 quiet loglevel=4 semfs.nonce=" + vm.nonce
	args := append([]string{"qemu-system-x86_64"}, accelArgs(cfg.Accel)...)
	args = append(args, "-smp", "1", "-m", strconv.Itoa(cfg.MemMB),
		"-nodefaults", "-no-user-config", "-display", "none", "-no-reboot",
		"-chardev", "file,id=con,path="+vm.Console, "-serial", "chardev:con",
		"-kernel", cfg.Image.Kernel, "-initrd", initrd, "-append", kargs,
		"-netdev", "user,id=n0,net=10.0.2.0/24,host=10.0.2.2,ipv6=off",
		"-device", "virtio-net-pci,netdev=n0,romfile=",
		"-device", "virtio-serial-pci,id=vser0",
		"-qmp", "unix:"+filepath.Join(cfg.Dir, "qmp.sock")+",server=on,wait=off",
		"-chardev", "socket,id=ctl,path="+ctlPath,
		"-device", "virtserialport,bus=vser0.0,chardev=ctl,name=semfs.ctl",
	)
	if cfg.NinePSocket != "" {
		args = append(args,
			"-chardev", "socket,id=p9,path="+cfg.NinePSocket+",reconnect=1",
			"-device", "virtserialport,bus=vser0.0,chardev=p9,name=semfs.9p")
	}
	qlog, err := os.Create(filepath.Join(cfg.Dir, "qemu.log"))
	if err != nil {
		return nil, err
	}
	defer qlog.Close()
	vm.cmd = cfg.Netns.Command(args...)
	vm.cmd.Stdout, vm.cmd.Stderr = qlog, qlog
	vm.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	t0 := time.Now()
	if err := vm.cmd.Start(); err != nil {
		return nil, fmt.Errorf("vm: start qemu: %w", err)
	}
	go func() { vm.qemuErr = vm.cmd.Wait(); close(vm.qemuDone) }()

	type acc struct {
		c   net.Conn
		err error
	}
	ach := make(chan acc, 1)
	go func() { c, err := ln.Accept(); ach <- acc{c, err} }()
	select {
	case a := <-ach:
		if a.err != nil {
			vm.kill()
			return nil, fmt.Errorf("vm: accept control connection: %w", a.err)
		}
		vm.conn = a.c
	case <-vm.qemuDone:
		return nil, vm.failure("qemu exited before connecting its control port", "")
	case <-time.After(30 * time.Second):
		vm.kill()
		return nil, vm.failure("qemu did not connect its control port within 30 s", "")
	}
	go vm.readLines()

	timer := time.NewTimer(cfg.BootTimeout)
	defer timer.Stop()
	ready := "@@SEMFS-READY-" + vm.nonce
	for {
		select {
		case l, ok := <-vm.lines:
			if !ok {
				vm.kill()
				return nil, vm.failure("control port closed before READY", "")
			}
			if strings.Contains(l, ready) {
				vm.BootTime = time.Since(t0)
				return vm, nil
			}
		case <-timer.C:
			vm.kill()
			return nil, vm.failure(fmt.Sprintf("no READY within %v", cfg.BootTimeout), "")
		case <-ctx.Done():
			vm.kill()
			return nil, ctx.Err()
		}
	}
}

func (vm *VM) readLines() {
	r := bufio.NewReaderSize(vm.conn, 64<<10)
	for {
		l, err := r.ReadString('\n')
		if l != "" {
			vm.lines <- strings.TrimRight(l, "\r\n")
		}
		if err != nil {
			close(vm.lines)
			return
		}
	}
}

// Run executes script in the guest under `sh`, killed by the guest after
// timeout. A non-zero status is reported in the result, not as an error; an
// error means the guest stopped answering (crash, hang past timeout+30 s, or
// qemu exit), and the VM is then dead for every later step.
func (vm *VM) Run(ctx context.Context, name string, timeout time.Duration, script string) (StepResult, error) {
	vm.mu.Lock()
	defer vm.mu.Unlock()
	res := StepResult{Name: name, Status: -1}
	if vm.dead != nil {
		return res, fmt.Errorf("step %q not run: guest is dead: %w", name, vm.dead)
	}
	vm.nextID++
	id := strconv.Itoa(vm.nextID)
	secs := int(timeout / time.Second)
	if secs < 1 {
		secs = 1
	}
	hdr := fmt.Sprintf("STEP %s %d %d\n", id, secs, len(script))
	vm.conn.SetWriteDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.WriteString(vm.conn, hdr+script); err != nil {
		vm.dead = fmt.Errorf("write step %q: %w", name, err)
		return res, vm.failure(vm.dead.Error(), "")
	}
	end := "@@SEMFS-END-" + vm.nonce + " " + id + " "
	var out strings.Builder
	timer := time.NewTimer(timeout + 30*time.Second)
	defer timer.Stop()
	for {
		select {
		case l, ok := <-vm.lines:
			if !ok {
				vm.dead = fmt.Errorf("control port closed during step %q", name)
				return res, vm.failure(vm.dead.Error(), out.String())
			}
			if i := strings.Index(l, end); i >= 0 {
				out.WriteString(l[:i])
				st, _ := strconv.Atoi(strings.TrimSpace(l[i+len(end):]))
				res.Status = st
				res.Output = strings.TrimSuffix(out.String(), "\n")
				return res, nil
			}
			out.WriteString(l)
			out.WriteByte('\n')
		case <-timer.C:
			vm.dead = fmt.Errorf("step %q: no answer within %v", name, timeout+30*time.Second)
			return res, vm.failure(vm.dead.Error(), out.String())
		case <-ctx.Done():
			vm.dead = fmt.Errorf("step %q: %w", name, ctx.Err())
			return res, vm.failure(vm.dead.Error(), out.String())
		}
	}
}

// WaitNinePConnected waits (bounded by timeout) until QEMU's chardev for the
// 9P port is connected to the server's socket. After a daemon restart QEMU
// reconnects once a second; bytes the guest sends before that are lost, so a
// remount must wait for this. It asks QEMU itself (QMP query-chardev), so
// no sleep or guess is involved.
func (vm *VM) WaitNinePConnected(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var last string
	for time.Now().Before(deadline) {
		st, err := vm.chardevFilename("p9")
		if err == nil && !strings.HasPrefix(st, "disconnected") {
			return nil
		}
		last = fmt.Sprint(st, err)
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("vm: 9P chardev not reconnected within %v (last state: %s)", timeout, last)
}

// chardevFilename returns QEMU's "filename" of a chardev, which starts with
// "disconnected:" while a socket chardev has no peer.
func (vm *VM) chardevFilename(id string) (string, error) {
	c, err := net.DialTimeout("unix", filepath.Join(vm.cfg.Dir, "qmp.sock"), 5*time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	dec := json.NewDecoder(c)
	var greeting map[string]any
	if err := dec.Decode(&greeting); err != nil {
		return "", fmt.Errorf("qmp greeting: %w", err)
	}
	for _, cmd := range []string{`{"execute":"qmp_capabilities"}`, `{"execute":"query-chardev"}`} {
		if _, err := io.WriteString(c, cmd+"\n"); err != nil {
			return "", err
		}
		for {
			var resp struct {
				Return json.RawMessage `json:"return"`
				Error  any             `json:"error"`
				Event  string          `json:"event"`
			}
			if err := dec.Decode(&resp); err != nil {
				return "", fmt.Errorf("qmp: %w", err)
			}
			if resp.Event != "" {
				continue
			}
			if resp.Error != nil {
				return "", fmt.Errorf("qmp %s: %v", cmd, resp.Error)
			}
			if strings.Contains(cmd, "query-chardev") {
				var devs []struct {
					Label    string `json:"label"`
					Filename string `json:"filename"`
				}
				if err := json.Unmarshal(resp.Return, &devs); err != nil {
					return "", err
				}
				for _, d := range devs {
					if d.Label == id {
						return d.Filename, nil
					}
				}
				return "", fmt.Errorf("qmp: no chardev %q", id)
			}
			break
		}
	}
	return "", errors.New("qmp: no answer")
}

// Close powers the guest off (bounded) and stops QEMU.
func (vm *VM) Close() error {
	vm.mu.Lock()
	defer vm.mu.Unlock()
	if vm.conn != nil && vm.dead == nil {
		vm.conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
		io.WriteString(vm.conn, "POWEROFF\n")
	}
	select {
	case <-vm.qemuDone:
	case <-time.After(20 * time.Second):
		vm.kill()
	}
	if vm.conn != nil {
		vm.conn.Close()
	}
	if vm.dead == nil {
		vm.dead = errors.New("powered off")
	}
	return nil
}

func (vm *VM) kill() {
	if vm.cmd != nil && vm.cmd.Process != nil {
		syscall.Kill(-vm.cmd.Process.Pid, syscall.SIGKILL)
		<-vm.qemuDone
	}
}

// ConsoleTail returns the last n lines of the serial console (kernel
// messages, init's progress and fatal errors).
func (vm *VM) ConsoleTail(n int) string {
	b, _ := os.ReadFile(vm.Console)
	lines := strings.Split(strings.TrimRight(string(bytes.ReplaceAll(b, []byte("\r"), nil)), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func (vm *VM) failure(what, stepOut string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "vm: %s", what)
	select {
	case <-vm.qemuDone:
		fmt.Fprintf(&b, " (qemu exited: %v)", vm.qemuErr)
	default:
	}
	if stepOut != "" {
		fmt.Fprintf(&b, "\n--- step output so far ---\n%s", stepOut)
	}
	fmt.Fprintf(&b, "\n--- guest console (%s), last 30 lines ---\n%s", vm.Console, vm.ConsoleTail(30))
	if q, _ := os.ReadFile(filepath.Join(vm.cfg.Dir, "qemu.log")); len(q) > 0 {
		fmt.Fprintf(&b, "\n--- qemu.log ---\n%s", q)
	}
	return errors.New(b.String())
}

// writeInitrd concatenates the cached base initramfs with a per-boot archive
// of cfg.Files under /semfs/ (or at their absolute paths).
func writeInitrd(base, dst string, files map[string]OverlayFile) error {
	b, err := os.ReadFile(base)
	if err != nil {
		return fmt.Errorf("vm: %w", err)
	}
	a := newCPIOArchive()
	a.Dir("semfs", 0o755)
	for name, f := range files {
		if strings.HasPrefix(name, "/") {
			a.File(name, f.Mode, f.Data)
			continue
		}
		a.File("semfs/"+name, f.Mode, f.Data)
	}
	var ov bytes.Buffer
	if _, err := a.WriteTo(&ov); err != nil {
		return fmt.Errorf("vm: overlay: %w", err)
	}
	return os.WriteFile(dst, append(b, ov.Bytes()...), 0o644)
}
