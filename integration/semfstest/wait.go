package semfstest

import (
	"testing"
	"time"

	"github.com/semfs/semfs/server/servertest"
)

// WaitBound is how long WaitFor waits before it fails: a file settling, the
// index following a host's change, a door serving again. It only turns a hang
// into a failure on a loaded machine; it is not a timing assertion (the
// daemon's promised delays are about a second).
const WaitBound = 60 * time.Second

// WaitFor polls cond until it returns nil, for an event the daemon gives no
// signal of but its state (the index following a change, the content index
// settling, a connection's descriptor closed). It fails t, saying what it
// waited for, cond's last answer and the daemon's log, when WaitBound passes
// or the daemon exits first. cond's error says what it saw instead
// ("grep: [a], want [a b]"). It is servertest.WaitFor for a daemon in
// another process.
func (d *Daemon) WaitFor(t testing.TB, what string, cond func() error) {
	t.Helper()
	var last error
	done := false
	defer func() {
		// A t.Fatal below ends the goroutine through here: say why.
		if !done {
			t.Logf("while waiting for %s, last: %v\nsemfs log:\n%s", what, last, d.Log())
		}
	}()
	servertest.WaitForWithin(t, what, WaitBound, func() bool {
		last = cond()
		if last != nil && !d.Alive() {
			t.Fatalf("semfs exited while the test waited for %s", what)
		}
		return last == nil
	})
	done = true
}
