package integration_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	nfsc "github.com/willscott/go-nfs-client/nfs"

	"github.com/semfs/semfs/integration/semfstest"
)

// answers runs one client step against d and fails the test if the daemon
// does not answer within 20 s (a bound that only turns a hang into a
// failure): the daemon is then sent SIGQUIT, which makes the Go runtime write
// every goroutine's stack to its log before it exits, and the log is the
// failure message. The step's client call ends when the daemon does, so
// nothing in the test binary stays stuck.
func answers(t *testing.T, d *semfstest.Daemon, what string, step func() error) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- step() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	case <-time.After(20 * time.Second):
		syscall.Kill(d.PID(), syscall.SIGQUIT)
		select {
		case <-done:
		case <-time.After(20 * time.Second):
		}
		d.Kill()
		t.Fatalf("%s: no answer after 20 s: the daemon is stuck; its log and goroutines (SIGQUIT):\n%s", what, d.Log())
	}
}

// TestNoHangWhenATruncatedFileMoves holds the daemon to answering a rename
// or remove of a file NFS truncated, made through NFS or through 9P. Each
// closes the descriptor the NFS server keeps open for the file, inside the
// core's namespace change (the change stream's sink); that close sent the
// file's pending write change, which waited for the namespace lock its own
// rename held: the RENAME never answered and the daemon no longer stopped
// on SIGTERM (differential finding N1: CREATE, SETATTR size 0, RENAME). A
// rename by a host program is not among them: the watcher reconciles the
// index, and sends no rename through the sink.
func TestNoHangWhenATruncatedFileMoves(t *testing.T) {
	// A write change stays pending for the write-quiet period; the hang
	// needed the rename to come before it was sent, as a busy client's
	// does. A long period makes that so for every step, however slow the
	// machine.
	d := semfstest.Start(t, semfstest.Options{ModelDir: "off", Args: []string{"--write-quiet", "10m"}})
	v := d.MountNFS(t, "/@editor", 0)
	root9 := d.Attach9P(t, "@notes", 0)
	truncate := func(p string) func() error {
		return func() error {
			fh, err := v.Create(p, 0o644)
			if err != nil {
				return err
			}
			// SetAttr sends no guard: Setattr's, the ctime of a LOOKUP,
			// is compared with go-nfs's own ctime, its mtime, and fails
			// with NOT_SYNC when the create's own chmod or chown came a
			// clock tick after the file was made.
			_, err = v.SetAttr(fh, nfsc.Sattr3{Size: nfsc.SetSize{SetIt: true, Size: 0}})
			return err
		}
	}

	// Through NFS alone: the finding's sequence, then a remove.
	answers(t, d, "NFS create c, truncate c", truncate("c"))
	answers(t, d, "NFS rename c a after a truncate", func() error { return v.Rename("c", "a") })
	answers(t, d, "NFS create r, truncate r", truncate("r"))
	answers(t, d, "NFS remove r after a truncate", func() error { return v.Remove("r") })

	// Truncated over NFS, renamed over 9P.
	answers(t, d, "NFS create n, truncate n", truncate("n"))
	answers(t, d, "9P rename n n9 after an NFS truncate", func() error { return root9.RenameAt("n", root9, "n9") })

	answers(t, d, "NFS create after all that", func() error { _, err := v.Create("after", 0o644); return err })
	for _, p := range []string{"a", "n9", "after"} {
		if _, err := os.Lstat(filepath.Join(d.Data, p)); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
	// Stop (at cleanup) fails the test unless SIGTERM ends the daemon.
}
