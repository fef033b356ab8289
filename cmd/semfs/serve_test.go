//go:build linux

package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Bad serve flags exit 2 before anything is created or listened on.
func TestServeUsageExitCodes(t *testing.T) {
	base := t.TempDir()
	common := []string{"--data", filepath.Join(base, "data"), "--index", filepath.Join(base, "index"),
		"--socket", filepath.Join(base, "s.sock"), "--nfs", "off", "--9p", "off", "--model-dir", "off"}
	for _, extra := range [][]string{
		{"--no-such-flag"},
		{"unexpected-arg"},
		{"--log-level", "loud"},
		{"--watch", "fanotify"},
		{"--threshold", "use-lite"},
		{"--write-quiet", "soon"},
		{"--index", filepath.Join(base, "data", "index")}, // inside the backing directory
	} {
		var out, errb bytes.Buffer
		args := append(append([]string{"serve"}, common...), extra...)
		if got := run(context.Background(), &cliEnv{stdout: &out, stderr: &errb}, args); got != exitUsage || errb.Len() == 0 {
			t.Errorf("serve %q: exit %d, stderr %q; want %d with a message", extra, got, errb.String(), exitUsage)
		}
	}
	if _, err := os.Stat(filepath.Join(base, "data")); !os.IsNotExist(err) {
		t.Errorf("a refused serve made the backing directory: %v", err)
	}
	// Flags right, start impossible: exit 5.
	var out, errb bytes.Buffer
	args := append(append([]string{"serve"}, common...), "--9p", "256.0.0.1:1")
	if got := run(context.Background(), &cliEnv{stdout: &out, stderr: &errb}, args); got != exitFailed {
		t.Errorf("serve on an impossible address: exit %d, want %d\n%s", got, exitFailed, errb.String())
	}
}

// serveInProcess runs `semfs serve` in this process until the test ends and
// returns its control socket once it prints that it serves.
func serveInProcess(t *testing.T, env []string, args ...string) (sock, served string) {
	t.Helper()
	for i := 0; i+1 < len(env); i += 2 {
		t.Setenv(env[i], env[i+1])
	}
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	var stderr syncBuf
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, &cliEnv{stdout: pw, stderr: &stderr}, append([]string{"serve", "--nfs", "off", "--9p", "off", "--model-dir", "off"}, args...))
		pw.Close()
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case code := <-done:
			if code != exitOK {
				t.Errorf("serve exited %d after cancel, want 0\n%s", code, stderr.String())
			}
		case <-time.After(30 * time.Second):
			t.Errorf("serve did not stop within 30s of its context's cancel")
		}
	})
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		line := sc.Text()
		if s, ok := strings.CutPrefix(line, "semfs "+version+" serving "); ok {
			served = s
		}
		if f := strings.Fields(line); len(f) == 3 && f[0] == "control" && f[1] == "socket" {
			sock = f[2]
		}
		if strings.HasPrefix(strings.TrimSpace(line), "index ") {
			go io.Copy(io.Discard, pr)
			return sock, served
		}
	}
	t.Fatalf("serve ended before it served:\n%s", stderr.String())
	return "", ""
}

// The client commands' exit codes against a real daemon: 0, 1 for nothing
// found, 4 for a refused request; and serve takes its paths from flags over
// the environment.
func TestClientExitCodes(t *testing.T) {
	base := t.TempDir()
	data := filepath.Join(base, "data")
	sock, served := serveInProcess(t,
		[]string{envData, filepath.Join(base, "env-data"), envIndex, filepath.Join(base, "index"), envSocket, filepath.Join(base, "env.sock")},
		"--data", data, "--socket", filepath.Join(base, "s.sock"))
	if served != data || sock != filepath.Join(base, "s.sock") {
		t.Fatalf("serving %q on %q: the flags must win over the environment", served, sock)
	}
	if _, err := os.Stat(filepath.Join(base, "index")); err != nil {
		t.Errorf("the index from the environment (no flag) was not used: %v", err)
	}
	if err := os.WriteFile(filepath.Join(data, "notes.md"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want int
	}{
		{[]string{"status"}, exitOK},
		{[]string{"get", "no/such/file.md"}, exitNotFound},
		{[]string{"tag", "no/such/file.md", "--task", "x"}, exitNotFound},
		{[]string{"register", "not a valid app name"}, exitRefused},
		{[]string{"tag", "../escape", "--task", "x"}, exitRefused},
	} {
		var out, errb bytes.Buffer
		args := append([]string{c.args[0], "--socket", sock}, c.args[1:]...)
		if got := run(context.Background(), &cliEnv{stdout: &out, stderr: &errb}, args); got != c.want {
			t.Errorf("semfs %q: exit %d, want %d\nstdout %q\nstderr %q", c.args, got, c.want, out.String(), errb.String())
		}
	}
}

type syncBuf struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuf) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuf) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
