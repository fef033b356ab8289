package server_test

import (
	"runtime"
	"strings"
	"testing"
	"time"
)

// parked reports whether a goroutine header ("goroutine 7 [sync.RWMutex.RLock]:")
// says it waits on a lock, channel or condition: not running, and not in a
// system call, which a write that was let through could be in.
func parked(head string) bool {
	for _, w := range []string{"[sync.", "[chan ", "[select", "[semacquire"} {
		if strings.Contains(head, w) {
			return true
		}
	}
	return false
}

// waitParked waits until a goroutine whose stack contains fn is parked
// (see parked), and fails if done closes
// first: the goroutine then got through where the test expects it held back.
// It replaces "sleep a while, then check it has not happened": the goroutine
// being parked inside fn is the event that proves it is held, on any machine.
// The bound only turns a hang into a failure.
func waitParked(t *testing.T, fn string, done <-chan struct{}) {
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
