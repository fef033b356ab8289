//go:build linux

package main

import (
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/semfs/semfs/server/policy"
)

// policyPoll is how often the daemon looks at the --policy file for a change
// (one stat; SIGHUP reloads at once).
const policyPoll = time.Second

// loadPolicy reads --policy at start: no file is no policy (today's
// behaviour, at no cost); an invalid one stops the daemon with exit 2 and the
// file's line and column.
func loadPolicy(env *cliEnv, file string, log *slog.Logger) (*policy.Live, int) {
	if file == "" {
		return nil, exitOK
	}
	// Absolute: a reload reads the same file whatever the working directory.
	if abs, err := filepath.Abs(file); err == nil {
		file = abs
	}
	p, err := policy.Load(file)
	if err != nil {
		fmt.Fprintf(env.stderr, "semfs serve: --policy: %v\n", err)
		return nil, exitUsage
	}
	return policy.NewLive(file, p, log), exitOK
}

// watchPolicy reloads the policy on SIGHUP and when its file changes (its
// inode, size, mtime or ctime: an editor's rename or an in-place write),
// until the returned stop is called. A failed reload keeps the policy in
// force (policy.Live.Reload).
func (d *daemon) watchPolicy() (stop func()) {
	if d.pol == nil {
		return func() {}
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	done := make(chan struct{})
	exited := make(chan struct{})
	file := d.pol.Status().File
	last := fileStamp(file)
	go func() {
		defer close(exited)
		t := time.NewTicker(policyPoll)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-hup:
				d.log.Info("SIGHUP: reloading the policy", "file", file)
				last = fileStamp(file)
				d.pol.Reload()
			case <-t.C:
				if s := fileStamp(file); s != last {
					last = s
					d.pol.Reload()
				}
			}
		}
	}()
	return func() {
		signal.Stop(hup)
		close(done)
		<-exited
	}
}

// stamp is what tells a changed file from the one loaded.
type stamp struct {
	ino, size   int64
	mtime, ctim int64
	missing     bool
}

func fileStamp(path string) stamp {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return stamp{missing: true}
	}
	return stamp{ino: int64(st.Ino), size: st.Size, mtime: st.Mtim.Nano(), ctim: st.Ctim.Nano()}
}
