package servertest

import (
	"testing"
	"time"
)

// WaitFor polls cond until it holds, and fails the test after a generous bound
// (20 s): for events a test has no signal to select on (a timer firing,
// goroutines ending, a counter reaching a value). The bound only turns a hang
// into a failure; it is not a timing assertion.
func WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}
