package servertest

import (
	"runtime"
	"strings"
	"testing"
	"time"
)

// WaitFor polls cond until it holds, and fails the test after a generous bound
// (20 s): for events a test has no signal to select on (a timer firing,
// goroutines ending, a counter reaching a value). The bound only turns a hang
// into a failure; it is not a timing assertion.
func WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	WaitForWithin(t, what, 20*time.Second, cond)
}

// WaitForWithin is WaitFor with the bound given, for events whose work grows
// with the test's data (a content index settling over a generated corpus) or
// that wait on another process on a loaded machine.
func WaitForWithin(t testing.TB, what string, bound time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(bound)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", bound, what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// WaitParked waits until a goroutine whose stack contains fn is parked (on a
// lock, a channel, a condition or the network poller: not running, not in a
// system call), and fails if done closes first: the goroutine then got
// through where the test expects it held back. It replaces "sleep a while,
// then check it has not happened" and "sleep so the goroutine gets there":
// the goroutine being parked inside fn is the event that proves it is held,
// on any machine. fn is matched as a substring of the stack, so name it as
// the stack does, with the opening parenthesis when another function's name
// starts with it ("(*Index).flushBleve(", not flushBleveBlLocked). The bound
// only turns a hang into a failure.
func WaitParked(t testing.TB, fn string, done <-chan struct{}) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	buf := make([]byte, 1<<20)
	for {
		select {
		case <-done:
			t.Fatalf("the goroutine in %s finished; it should have been held back", fn)
		default:
		}
		n := runtime.Stack(buf, true)
		for _, g := range strings.Split(string(buf[:n]), "\n\n") {
			head, _, _ := strings.Cut(g, "\n")
			if strings.Contains(g, fn) && parked(head) {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no goroutine parked in %s within 20s", fn)
		}
		runtime.Gosched()
		time.Sleep(time.Millisecond)
	}
}

// parked reports whether a goroutine header ("goroutine 7 [sync.RWMutex.RLock]:")
// says it waits on a lock, channel, condition or the network poller: not
// running, and not in a system call, which a write that was let through could
// be in. ("IO wait" is a descriptor registered with the poller, a socket or
// pipe: a regular file's read or write never parks there.)
func parked(head string) bool {
	for _, w := range []string{"[sync.", "[chan ", "[select", "[semacquire", "[IO wait"} {
		if strings.Contains(head, w) {
			return true
		}
	}
	return false
}
