package servertest

import (
	"fmt"
	"os"
	"runtime"
	"testing"
	"time"
)

// hangBound is how long NoHang lets its steps take. Like WaitFor's bound, it
// only turns a hang into a failure; it is not a timing assertion. It is
// shorter than the test clients' own reply timeouts (the NFS tests' raw
// client waits 20 s): a client giving up first would fail the test with
// t.Fatal, whose cleanups then wait for the stuck call.
const hangBound = 10 * time.Second

// NoHang fails the test binary when the steps between NoHang and a call of the
// function it returns have not ended after 10 s: a step that waits forever
// (a deadlock in the server) would otherwise wedge the binary until go test's
// own timeout, since the server under test runs in this process and its
// cleanup waits for the stuck call too. The message and every goroutine's
// stack go to standard error, then the process exits with status 1: t.Fatal
// cannot end the test, because its cleanups would wait for the stuck call.
//
//	done := servertest.NoHang(t, "rename after a truncate")
//	... steps ...
//	done()
func NoHang(t testing.TB, what string) (done func()) {
	t.Helper()
	stop := make(chan struct{})
	go func() {
		timer := time.NewTimer(hangBound)
		defer timer.Stop()
		select {
		case <-stop:
			return
		case <-timer.C:
		}
		buf := make([]byte, 8<<20)
		buf = buf[:runtime.Stack(buf, true)]
		fmt.Fprintf(os.Stderr, "--- FAIL: %s: %s: no answer after %v: the server is stuck (a deadlock?); every goroutine:\n\n%s\nFAIL\n",
			t.Name(), what, hangBound, buf)
		os.Exit(1)
	}()
	return func() { close(stop) }
}

// testNoHangAfterWrite changes a file's data and then renames or removes
// it: a server that keeps files open between calls (NFS's descriptor cache)
// closes them on the rename or remove, and a close of a file written
// through sends the core's pending ChangeWrite. That close, made while the
// core held its namespace lock for the rename, waited for the lock forever
// (differential finding N1: CREATE, SETATTR size, RENAME got no reply, and
// the daemon then did not stop).
func testNoHangAfterWrite(t *testing.T, e Env) {
	defer NoHang(t, "a rename or remove after a write or truncate")()
	c := e.Client
	// The finding's sequence, then its variant over an existing name.
	must(t, c.WriteFile("c", nil, 0o644), "create c")
	must(t, c.Truncate("c", 0), "truncate c 0")
	must(t, c.Rename("c", "a"), "rename c a")
	must(t, c.WriteFile("c", nil, 0o644), "create c again")
	must(t, c.Truncate("c", 3), "truncate c 3")
	must(t, c.Rename("c", "a"), "rename c over a")
	// A write followed by a truncate, then a remove.
	must(t, c.WriteFile("r", []byte("data"), 0o644), "write r")
	must(t, c.Truncate("r", 1), "truncate r 1")
	must(t, c.Remove("r"), "remove r")
	// A file in a directory that is renamed (the directory's entries are
	// evicted), then the daemon must still take changes.
	must(t, c.Mkdir("d", 0o755), "mkdir d")
	must(t, c.WriteFile("d/f", []byte("x"), 0o644), "write d/f")
	must(t, c.Truncate("d/f", 0), "truncate d/f 0")
	must(t, c.Rename("d", "d2"), "rename d d2")
	must(t, c.WriteFile("after", []byte("y"), 0o644), "write after")
	if got := onDisk(t, e, "a"); len(got) != 3 {
		t.Fatalf("a holds %q, want 3 zero bytes", got)
	}
	if got := onDisk(t, e, "d2/f"); len(got) != 0 {
		t.Fatalf("d2/f holds %q, want nothing", got)
	}
	if _, err := os.Lstat(e.Backing + "/r"); err == nil {
		t.Fatal("r still on disk after its remove")
	}
}
