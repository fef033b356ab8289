// Package semfstest starts the real `semfs serve` binary for end-to-end tests:
// built once per test process, run on temporary directories with loopback ports
// chosen by the kernel, and talked to over its real control socket.
package semfstest

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/semfs/semfs/client"
)

var build struct {
	once sync.Once
	path string
	err  error
}

// Main runs a package's tests and then removes the binary Binary built for
// them, so that test runs do not leave a 30 MB build behind in $TMPDIR each
// time. A package whose tests call Binary (directly or through Start) has
// `func TestMain(m *testing.M) { os.Exit(semfstest.Main(m)) }`.
func Main(m *testing.M) int {
	code := m.Run()
	if build.path != "" {
		os.RemoveAll(filepath.Dir(build.path))
	}
	return code
}

// Binary builds ./cmd/semfs once per test process and returns its path, or
// returns $SEMFS_BIN when set (e.g. a binary built with -race).
func Binary(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("SEMFS_BIN"); p != "" {
		return p
	}
	build.once.Do(func() {
		_, file, _, _ := runtime.Caller(0)
		repo := filepath.Join(filepath.Dir(file), "..", "..")
		dir, err := os.MkdirTemp("", "semfs-bin-")
		if err != nil {
			build.err = err
			return
		}
		build.path = filepath.Join(dir, "semfs")
		cmd := exec.Command("go", "build", "-o", build.path, "./cmd/semfs")
		cmd.Dir = repo
		if out, err := cmd.CombinedOutput(); err != nil {
			build.err = fmt.Errorf("go build ./cmd/semfs: %v\n%s", err, out)
		}
	})
	if build.err != nil {
		t.Fatal(build.err)
	}
	return build.path
}

// Options configure a daemon. Empty directories are made under t.TempDir().
type Options struct {
	Data, Index, Socket string
	NFS, NineP          string   // listen addresses; "" picks a free loopback port, "off" disables
	NinePSocket         string   // optional 9P Unix socket
	ModelDir            string   // "" = the repo's embed/model/dist; "off" = keyword-only
	Env                 []string // extra environment
	Args                []string // extra serve flags
	// NoWaitReconcile: Start returns once the daemon listens, without also
	// waiting for its start-up reconcile, which may run in the background
	// (docs/durability.md, "Start-up"); tests of that and the start-up benchmark set it.
	NoWaitReconcile bool
}

// Daemon is one running `semfs serve`.
type Daemon struct {
	t      testing.TB
	opt    Options
	cmd    *exec.Cmd
	log    *syncBuffer
	exited chan struct{}

	Data, Index, Socket string
	NFS, NineP          string // actual listen addresses
	Client              *client.Client
}

// RepoDir is the module root.
func RepoDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// Start runs the daemon and waits until it listens. It is stopped at cleanup.
func Start(t testing.TB, opt Options) *Daemon {
	t.Helper()
	base := t.TempDir()
	def := func(v *string, name string) {
		if *v == "" {
			*v = filepath.Join(base, name)
		}
	}
	if opt.Data == "" {
		// Shared: a daemon running as root checks its callers' permissions,
		// and tests act as several uids.
		opt.Data = filepath.Join(base, "data")
		if err := os.Mkdir(opt.Data, 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(opt.Data, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	def(&opt.Index, "index")
	def(&opt.Socket, "semfs.sock")
	if opt.NFS == "" {
		opt.NFS = "127.0.0.1:0"
	}
	if opt.NineP == "" {
		opt.NineP = "127.0.0.1:0"
	}
	if opt.ModelDir == "" {
		opt.ModelDir = filepath.Join(RepoDir(), "embed", "model", "dist")
	}
	d := &Daemon{t: t, opt: opt, Data: opt.Data, Index: opt.Index, Socket: opt.Socket}
	d.start()
	t.Cleanup(func() { d.Stop() })
	return d
}

func (d *Daemon) start() {
	t := d.t
	t.Helper()
	args := []string{"serve", "--data", d.opt.Data, "--index", d.opt.Index, "--socket", d.opt.Socket,
		"--nfs", d.opt.NFS, "--9p", d.opt.NineP, "--model-dir", d.opt.ModelDir, "--write-quiet", "200ms"}
	if d.opt.NinePSocket != "" {
		args = append(args, "--9p-socket", d.opt.NinePSocket)
	}
	if lvl := os.Getenv("SEMFS_TEST_LOG_LEVEL"); lvl != "" {
		args = append(args, "--log-level", lvl)
	}
	args = append(args, d.opt.Args...)
	cmd := exec.Command(Binary(t), args...)
	cmd.Env = append(os.Environ(), d.opt.Env...)
	d.log = &syncBuffer{}
	cmd.Stderr = d.log
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	d.cmd = cmd
	d.exited = make(chan struct{})
	ready := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(out)
		sent := false
		for sc.Scan() {
			line := sc.Text()
			d.log.Write([]byte("[stdout] " + line + "\n"))
			f := strings.Fields(line)
			if len(f) == 2 {
				switch f[0] {
				case "nfs":
					d.NFS = f[1]
				case "9p":
					d.NineP = f[1]
				case "index":
					if !sent {
						ready <- nil
						sent = true
					}
				}
			}
		}
		io.Copy(io.Discard, out)
		if !sent {
			ready <- fmt.Errorf("semfs exited before it was ready")
		}
	}()
	go func() { cmd.Wait(); close(d.exited) }()
	select {
	case err := <-ready:
		if err != nil {
			<-d.exited
			t.Fatalf("%v\n%s", err, d.log.String())
		}
	case <-time.After(120 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("semfs did not become ready in 120 s\n%s", d.log.String())
	}
	d.Client = client.New(d.Socket)
	if !d.opt.NoWaitReconcile {
		d.WaitReconciled()
	}
}

// WaitReconciled waits until the daemon's start-up reconcile is done (health's
// last reconcile no longer "in progress").
func (d *Daemon) WaitReconciled() {
	d.t.Helper()
	deadline := time.Now().Add(120 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		h, err := d.Client.Health(ctx)
		cancel()
		if err == nil && !strings.HasPrefix(h.LastReconcile, "in progress") {
			return
		}
		if !d.Alive() || time.Now().After(deadline) {
			d.t.Fatalf("semfs did not finish its start-up reconcile (%v)\n%s", err, d.Log())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// PID is the running daemon's process id (0 when stopped), for tests that read
// its /proc entry: open descriptors, resident memory.
func (d *Daemon) PID() int {
	if d.cmd == nil || d.cmd.Process == nil {
		return 0
	}
	return d.cmd.Process.Pid
}

// Alive reports whether the daemon process has not exited.
func (d *Daemon) Alive() bool {
	if d.cmd == nil {
		return false
	}
	select {
	case <-d.exited:
		return false
	default:
		return true
	}
}

// Log returns everything the daemon wrote so far.
func (d *Daemon) Log() string { return d.log.String() }

// LogLines returns the lines of the daemon's output that hold any of subs
// (level=WARN, say), for a failure's message.
func (d *Daemon) LogLines(subs ...string) []string {
	var out []string
	for _, l := range strings.Split(d.Log(), "\n") {
		for _, s := range subs {
			if strings.Contains(l, s) {
				out = append(out, l)
				break
			}
		}
	}
	return out
}

// WaitLog waits up to timeout for the daemon's output to contain s.
func (d *Daemon) WaitLog(s string, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for {
		if strings.Contains(d.Log(), s) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Stop sends SIGTERM and waits for a clean exit; a non-zero exit fails the test.
func (d *Daemon) Stop() {
	if d.cmd == nil {
		return
	}
	d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.exited:
	case <-time.After(90 * time.Second):
		// Longer than the daemon's own bound on its last Bleve persist (a
		// minute, index.Close), which an fsync-bound machine running many
		// tests may need. SIGQUIT makes the Go runtime print every
		// goroutine's stack and exit: the log then shows where it hangs.
		d.cmd.Process.Signal(syscall.SIGQUIT)
		select {
		case <-d.exited:
		case <-time.After(10 * time.Second):
			d.cmd.Process.Kill()
			<-d.exited
		}
		d.t.Errorf("semfs did not stop within 90 s of SIGTERM (its goroutines, from SIGQUIT, end the log)\n%s", d.Log())
		d.cmd = nil
		return
	}
	if code := d.cmd.ProcessState.ExitCode(); code != 0 {
		d.t.Errorf("semfs exited with %d after SIGTERM\n%s", code, d.Log())
	}
	d.cmd = nil
}

// Kill stops the daemon with SIGKILL (a crash).
func (d *Daemon) Kill() {
	if d.cmd == nil {
		return
	}
	d.cmd.Process.Kill()
	<-d.exited
	d.cmd = nil
}

// Restart stops (or has been stopped) and starts again on the same directories
// and the same ports, as a real restart does.
func (d *Daemon) Restart() {
	d.Stop()
	if d.NFS != "" && d.opt.NFS != "off" {
		d.opt.NFS = d.NFS
	}
	if d.NineP != "" && d.opt.NineP != "off" {
		d.opt.NineP = d.NineP
	}
	d.start()
}

// Context returns a context for one client call.
func (d *Daemon) Context() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	d.t.Cleanup(cancel)
	return ctx
}

// Run runs the semfs CLI against this daemon and returns stdout, stderr and the
// exit code.
func (d *Daemon) Run(args ...string) (string, string, int) {
	cmd := exec.Command(Binary(d.t), args...)
	cmd.Env = append(os.Environ(), "BERTH_SEMANTIC_FS_SOCKET="+d.Socket)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		d.t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// RestartWith is Restart with extra serve flags for this start only.
func (d *Daemon) RestartWith(args ...string) {
	saved := d.opt.Args
	d.opt.Args = append(append([]string(nil), saved...), args...)
	defer func() { d.opt.Args = saved }()
	d.Restart()
}
