package integration_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/semfs/semfs/client"
	"github.com/semfs/semfs/integration/semfstest"
)

// grepPairs is /v1/grep's path:line pairs for pattern.
func grepPairs(t *testing.T, c *client.Client, req client.GrepRequest) []string {
	t.Helper()
	return apiGrep(t, c, req)
}

// A daemon running as root greps as its caller: a file the caller may not
// read, or below a directory it may not list, is not searched, through the
// CLI (SO_PEERCRED) as through .semfs/grep over NFS (AUTH_UNIX).
func TestGrepOnlyWhatTheCallerMayRead(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root: the daemon acts as its callers only when it runs as root")
	}
	sockDir, err := os.MkdirTemp("", "semfs-grep-views-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	os.Chmod(sockDir, 0o755)
	data := filepath.Join(t.TempDir(), "data")
	writeFiles(t, data, map[string]string{
		"public.txt":        "needle public\n",
		"secret.txt":        "needle secret\n",
		"closed/inside.txt": "needle inside a closed directory\n",
		"open/readable.txt": "needle readable\n",
		"nolist/listed.txt": "needle in a directory that cannot be listed\n",
	})
	os.Chmod(filepath.Join(data, "secret.txt"), 0o600)
	os.Chmod(filepath.Join(data, "closed"), 0o700)
	os.Chmod(filepath.Join(data, "nolist"), 0o711)
	d := semfstest.Start(t, semfstest.Options{Data: data, ModelDir: "off", Socket: filepath.Join(sockDir, "s.sock")})
	waitContentSettled(t, d)
	os.Chmod(d.Socket, 0o666)
	for dir := filepath.Dir(data); dir != "/" && dir != os.TempDir(); dir = filepath.Dir(dir) {
		os.Chmod(dir, 0o755) // the daemon's paths are the test's; nobody reads them, but must reach the socket
	}

	if got := grepPairs(t, d.Client, client.GrepRequest{Pattern: "needle"}); len(got) != 5 {
		t.Fatalf("root sees %v, want all five", got)
	}
	// The CLI from a directory nobody may enter.
	bin, err := os.ReadFile(semfstest.Binary(t))
	if err != nil {
		t.Fatal(err)
	}
	cli := filepath.Join(sockDir, "semfs")
	if err := os.WriteFile(cli, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(cli, "grep", "-l", "needle")
	cmd.Env = append(os.Environ(), "BERTH_SEMANTIC_FS_SOCKET="+d.Socket)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("semfs grep as nobody: %v\n%s", err, out)
	}
	got := strings.Fields(string(out))
	slices.Sort(got)
	if want := []string{"open/readable.txt", "public.txt"}; !slices.Equal(got, want) {
		t.Fatalf("nobody sees %v, want %v", got, want)
	}
	// -c counts every file searched, with none matching too, but only those
	// the caller may read: the others' names stay unsaid.
	for pat, want := range map[string]string{"needle": "open/readable.txt:1\npublic.txt:1\n", "absent": "open/readable.txt:0\npublic.txt:0\n"} {
		cmd := exec.Command(cli, "grep", "-c", pat)
		cmd.Env = append(os.Environ(), "BERTH_SEMANTIC_FS_SOCKET="+d.Socket)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		out, _ := cmd.Output()
		if code, wantCode := cmd.ProcessState.ExitCode(), map[string]int{"needle": 0, "absent": 1}[pat]; string(out) != want || code != wantCode {
			t.Fatalf("semfs grep -c %s as nobody: %q, exit %d; want %q, exit %d (as GNU grep)", pat, out, code, want, wantCode)
		}
	}
	// .semfs/grep answers as the caller at both doors.
	want := "open/readable.txt:1:needle readable\npublic.txt:1:needle public\n"
	if b := read9P(t, d.Attach9P(t, "/", 65534), ".semfs/grep/needle/matches"); string(b) != want {
		t.Fatalf(".semfs/grep as nobody over 9P: %q", b)
	}
	if b := read9P(t, d.Attach9P(t, "/", 0), ".semfs/grep/needle/matches"); strings.Count(string(b), "\n") != 5 {
		t.Fatalf(".semfs/grep as root over 9P: %q", b)
	}
	if b := nfsRead(t, d.MountNFS(t, "/", 0), ".semfs/grep/needle/matches"); strings.Count(string(b), "\n") != 5 {
		t.Fatalf(".semfs/grep as root over NFS: %q", b)
	}
	if b := nfsRead(t, d.MountNFS(t, "/", 65534), ".semfs/grep/needle/matches"); string(b) != want {
		t.Fatalf(".semfs/grep as nobody over NFS: %q", b)
	}
}

// Changes made directly in the backing directory reach the content index
// through the watcher, and the index survives a restart (and is rebuilt from
// the files when its file is damaged).
func TestGrepFollowsHostChangesAndRestarts(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	writeFiles(t, data, map[string]string{"a.txt": "alpha one\n", "b/c.txt": "gamma two\n"})
	d := semfstest.Start(t, semfstest.Options{Data: data, ModelDir: "off", NineP: "off"})
	waitContentSettled(t, d)
	c := d.Client
	if got := grepPairs(t, c, client.GrepRequest{Pattern: "one|two"}); !slices.Equal(got, []string{"a.txt:1", "b/c.txt:1"}) {
		t.Fatalf("start: %v", got)
	}
	// Host writes: found once the watcher saw them (a wait on the answer).
	os.WriteFile(filepath.Join(data, "host.txt"), []byte("delta three\n"), 0o644)
	os.Remove(filepath.Join(data, "a.txt"))
	waitGrep(t, d, "one|two|three", []string{"b/c.txt:1", "host.txt:1"})
	// The index is saved at a clean stop and used at the next start: only
	// changed files are read again.
	d.Stop()
	os.WriteFile(filepath.Join(data, "b/c.txt"), []byte("gamma changed\nfour\n"), 0o644)
	d.Restart()
	waitContentSettled(t, d)
	h, err := c.Health(context.Background())
	if err != nil || h.Content.Damaged != "" || h.Content.Files != 2 {
		t.Fatalf("after restart: %+v %v", h.Content, err)
	}
	if got := grepPairs(t, c, client.GrepRequest{Pattern: "three|four"}); !slices.Equal(got, []string{"b/c.txt:2", "host.txt:1"}) {
		t.Fatalf("after restart: %v", got)
	}
	// The metrics count the same.
	body, err := c.Get(context.Background(), "/v1/metrics")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(body)
	body.Close()
	for _, want := range []string{"semfs_content_files 2", "semfs_content_pending_files 0", `semfs_content_skipped_files{reason="binary"} 0`} {
		if !strings.Contains(string(raw), want+"\n") {
			t.Errorf("metrics lack %q", want)
		}
	}
	// A damaged index file is set aside and rebuilt from the files.
	d.Stop()
	idx := filepath.Join(d.Index, "content.idx")
	raw, err = os.ReadFile(idx)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(idx, raw[:len(raw)/2], 0o600)
	d.Restart()
	waitContentSettled(t, d)
	h, err = c.Health(context.Background())
	if err != nil || h.Content.Damaged == "" || h.Content.Damaged == "missing" || h.Content.Files != 2 {
		t.Fatalf("after damage: %+v %v", h.Content, err)
	}
	if got := grepPairs(t, c, client.GrepRequest{Pattern: "three|four"}); !slices.Equal(got, []string{"b/c.txt:2", "host.txt:1"}) {
		t.Fatalf("after damage: %v", got)
	}
}

// waitGrep waits until grep for pattern answers want (the content index
// has followed a change made behind the daemon's back).
func waitGrep(t *testing.T, d *semfstest.Daemon, pattern string, want []string) {
	t.Helper()
	d.WaitFor(t, fmt.Sprintf("grep %q to answer %v", pattern, want), func() error {
		if got := grepPairs(t, d.Client, client.GrepRequest{Pattern: pattern}); !slices.Equal(got, want) {
			return fmt.Errorf("grep %q: %v", pattern, got)
		}
		return nil
	})
}

// Bad requests are refused with 400 and say why; the default limit is 1,000
// lines, with truncated set.
func TestGrepRequestsAreChecked(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	writeFiles(t, data, map[string]string{"many.txt": strings.Repeat("x marks\n", 1500)})
	d := semfstest.Start(t, semfstest.Options{Data: data, ModelDir: "off", NineP: "off", NFS: "off"})
	ctx := d.Context()
	for _, body := range []any{
		map[string]any{"pattern": "a(b"},
		map[string]any{"pattern": "x", "limit": -1},
		map[string]any{"pattern": "x", "limit": 1_000_001},
		map[string]any{"pattern": "x", "context": 101},
		map[string]any{"pattern": "x", "paths": []string{"[a"}},
		map[string]any{"pattern": "x", "bogus": true},
		map[string]any{"pattern": 7},
	} {
		_, err := d.Client.Post(ctx, "/v1/grep", body)
		var ae *client.APIError
		if !errors.As(err, &ae) || ae.Status != 400 || ae.Message == "" {
			t.Errorf("%v: %v, want a 400 with a message", body, err)
		}
	}
	ans, err := d.Client.Grep(ctx, client.GrepRequest{Pattern: "marks"})
	if err != nil || len(ans.Matches) != 1000 || !ans.Truncated || ans.Files != 1 {
		t.Fatalf("default limit: %d matches, truncated %v, %v", len(ans.Matches), ans.Truncated, err)
	}
	ans, err = d.Client.Grep(ctx, client.GrepRequest{Pattern: "marks", Limit: 1500})
	if err != nil || len(ans.Matches) != 1500 || ans.Truncated {
		t.Fatalf("limit 1500: %d matches, truncated %v, %v", len(ans.Matches), ans.Truncated, err)
	}
}
