package kernel

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// Server is a set of server processes run inside a Netns: the semfs daemon
// (one process) or stand-ins. Start waits until every listed address accepts
// connections; Stop signals every process and waits, bounded. Start may be
// called again after Stop (a restart) with the same addresses.
type Server struct {
	Netns    *Netns
	Argv     [][]string // one process per entry, each run inside Netns
	WaitTCP  []string   // "127.0.0.1:PORT" inside Netns
	WaitUnix []string   // unix socket paths (filesystem, not netns, scoped)
	LogPath  string     // stdout+stderr of every process, appended across restarts

	procs []*proc
}

type proc struct {
	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

// Start launches the processes and waits up to timeout for every address.
func (s *Server) Start(ctx context.Context, timeout time.Duration) error {
	if len(s.procs) > 0 {
		return errors.New("server: already started")
	}
	log, err := os.OpenFile(s.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("server: log: %w", err)
	}
	defer log.Close()
	fmt.Fprintf(log, "==== %s start\n", time.Now().UTC().Format(time.RFC3339Nano))
	for _, argv := range s.Argv {
		cmd := s.Netns.Command(argv...)
		cmd.Stdout, cmd.Stderr = log, log
		// Pdeathsig: a test binary killed outright must not leave a daemon behind.
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
		if err := cmd.Start(); err != nil {
			s.Stop(syscall.SIGKILL, 5*time.Second)
			return fmt.Errorf("server: start %s: %w", strings.Join(argv, " "), err)
		}
		p := &proc{cmd: cmd, done: make(chan struct{})}
		go func() { p.err = cmd.Wait(); close(p.done) }()
		s.procs = append(s.procs, p)
	}
	deadline := time.Now().Add(timeout)
	for _, a := range s.WaitTCP {
		if err := s.waitAddr(ctx, deadline, func() (net.Conn, error) { return s.Netns.Dial("tcp", a, time.Second) }); err != nil {
			s.Stop(syscall.SIGKILL, 5*time.Second)
			return fmt.Errorf("server: nothing accepts on %s inside netns %s after %v (log %s): %w", a, s.Netns.Name, timeout, s.LogPath, err)
		}
	}
	for _, a := range s.WaitUnix {
		if err := s.waitAddr(ctx, deadline, func() (net.Conn, error) { return net.DialTimeout("unix", a, time.Second) }); err != nil {
			s.Stop(syscall.SIGKILL, 5*time.Second)
			return fmt.Errorf("server: nothing accepts on unix socket %s after %v (log %s): %w", a, timeout, s.LogPath, err)
		}
	}
	return nil
}

func (s *Server) waitAddr(ctx context.Context, deadline time.Time, dial func() (net.Conn, error)) error {
	var err error
	for time.Now().Before(deadline) {
		var c net.Conn
		if c, err = dial(); err == nil {
			c.Close()
			return nil
		}
		for _, p := range s.procs {
			select {
			case <-p.done:
				return fmt.Errorf("process %s exited: %v", strings.Join(p.cmd.Args, " "), p.err)
			default:
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return err
}

// Stop sends sig to every process (SIGTERM for a clean shutdown, SIGKILL for
// a crash) and waits up to timeout for all of them; processes still alive
// then are killed and an error says so.
func (s *Server) Stop(sig syscall.Signal, timeout time.Duration) error {
	var errs []error
	for _, p := range s.procs {
		p.cmd.Process.Signal(sig)
	}
	deadline := time.After(timeout)
	for _, p := range s.procs {
		select {
		case <-p.done:
		case <-deadline:
			errs = append(errs, fmt.Errorf("server: %s did not exit within %v of %v", strings.Join(p.cmd.Args[4:], " "), timeout, sig))
			syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
			<-p.done
		}
		// Reap helpers the process may have left in its group.
		syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	}
	s.procs = nil
	return errors.Join(errs...)
}

// Running reports whether every process is still alive.
func (s *Server) Running() bool {
	if len(s.procs) == 0 {
		return false
	}
	for _, p := range s.procs {
		select {
		case <-p.done:
			return false
		default:
		}
	}
	return true
}
