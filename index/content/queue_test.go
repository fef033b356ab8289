package content

import (
	"testing"
	"time"
)

// Quiet holds a worker back while the daemon's doors are answering requests
// (busy's count moves), and gives up waiting at max.
func TestQuietWaitsForTheDoorsToStop(t *testing.T) {
	q := NewQueue()
	stop := make(chan struct{})

	// The first 20 looks at the count each see a new value: requests are
	// still arriving. Quiet may return only after a whole quiet period in
	// which the count stood still, so after it has looked past them.
	const moving = 20
	looks := 0
	busy := func() uint64 {
		looks++
		return uint64(min(looks, moving))
	}
	if !q.Quiet(stop, time.Millisecond, time.Hour, busy) {
		t.Fatal("Quiet answered false with stop open")
	}
	if looks < moving+2 {
		t.Fatalf("Quiet returned after %d looks at the doors' count, while it was still moving (it moves for %d)", looks, moving)
	}

	// A count that never stops: max ends the wait.
	always := func() uint64 { looks++; return uint64(looks) }
	if !q.Quiet(stop, time.Millisecond, 20*time.Millisecond, always) {
		t.Fatal("Quiet answered false with stop open")
	}

	close(stop)
	if q.Quiet(stop, time.Hour, time.Hour, always) {
		t.Fatal("Quiet answered true after stop was closed")
	}
}
