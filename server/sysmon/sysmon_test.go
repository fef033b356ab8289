//go:build linux

package sysmon

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/semfs/semfs/server/servertest"
)

func TestHoldEngagesUnderLoadAndLetsGoWhenQuiet(t *testing.T) {
	procs := runtime.GOMAXPROCS(0)
	h := Start(Options{Busy: 0.3, Window: 20 * time.Millisecond, Linger: 60 * time.Millisecond})
	if h == nil {
		t.Fatal("Start returned nil")
	}
	defer h.Stop()
	if got := runtime.GOMAXPROCS(0); got != procs+1 {
		t.Fatalf("GOMAXPROCS = %d with the hold, want %d", got, procs+1)
	}
	var burn atomic.Bool
	burn.Store(true)
	go func() {
		x := 0
		for burn.Load() {
			x++
		}
	}()
	servertest.WaitFor(t, "the hold to engage under load", h.Engaged)
	burn.Store(false)
	servertest.WaitFor(t, "the hold to let go of its P once quiet", func() bool { return !h.Engaged() })
	if n := h.engagedN.Load(); n == 0 {
		t.Fatalf("engaged %d times", n)
	}
	h.Stop()
	if got := runtime.GOMAXPROCS(0); got != procs {
		t.Fatalf("GOMAXPROCS = %d after Stop, want %d back", got, procs)
	}
	h.Stop() // a second Stop is a no-op
}

// TestStopTheWorldDoesNotWaitForThePoll: with the hold's ppoll set to an hour,
// garbage collections (two stop-the-worlds each) still complete, because the
// runtime's preemption signal ends the ppoll and the hold yields; a hold that
// retried its ppoll, or waited it out, would hang here until the test's
// timeout.
func TestStopTheWorldDoesNotWaitForThePoll(t *testing.T) {
	h := startHeld(t, Options{Window: time.Hour, Linger: time.Hour})
	servertest.WaitFor(t, "the hold to engage", h.Engaged)
	for range 3 {
		runtime.GC()
	}
	if h.interrupts.Load() == 0 {
		t.Fatal("no ppoll was ended by a signal during three collections")
	}
	if !h.Engaged() {
		t.Fatal("the hold let go during the collections")
	}
	h.Stop()
	if h.Engaged() {
		t.Fatal("engaged after Stop")
	}
}

// TestStopEndsAnEngagedHold: Stop's eventfd ends an hour-long ppoll.
func TestStopEndsAnEngagedHold(t *testing.T) {
	h := startHeld(t, Options{Window: time.Hour, Linger: time.Hour})
	servertest.WaitFor(t, "the hold to engage", h.Engaged)
	h.Stop() // would wait an hour without the eventfd
}

func startHeld(t *testing.T, opt Options) *Hold {
	t.Helper()
	h := start(opt, true)
	if h == nil {
		t.Fatal("start returned nil")
	}
	t.Cleanup(h.Stop)
	return h
}

func TestAsyncPreemptOff(t *testing.T) {
	for _, c := range []struct {
		godebug string
		off     bool
	}{
		{"", false},
		{"asyncpreemptoff=1", true},
		{"gctrace=1,asyncpreemptoff=1", true},
		{"asyncpreemptoff=1,asyncpreemptoff=0", false},
		{"asyncpreemptoff=0", false},
		{" asyncpreemptoff=1 ", true},
		{"xasyncpreemptoff=1", false},
	} {
		if got := asyncPreemptOff(c.godebug); got != c.off {
			t.Errorf("asyncPreemptOff(%q) = %v, want %v", c.godebug, got, c.off)
		}
	}
}

func TestStartDoesNothingWithoutAsyncPreemption(t *testing.T) {
	t.Setenv("GODEBUG", "asyncpreemptoff=1")
	procs := runtime.GOMAXPROCS(0)
	if h := Start(Options{}); h != nil {
		h.Stop()
		t.Fatal("Start made a hold with asynchronous preemption off")
	}
	if got := runtime.GOMAXPROCS(0); got != procs {
		t.Fatalf("GOMAXPROCS = %d, want %d untouched", got, procs)
	}
}
