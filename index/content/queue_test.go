package content

import (
	"sync/atomic"
	"testing"
	"time"
)

// Quiet gives way to requests as to changes: it returns only once two reads
// of the request count, quiet apart, agree and no path was marked between
// them, or once max has passed; nil counts none.
func TestQuietWaitsForAPauseInRequests(t *testing.T) {
	stop := make(chan struct{})
	const quiet = time.Millisecond

	q := NewQueue()
	if !q.Quiet(stop, quiet, time.Hour, nil) {
		t.Fatal("Quiet with nothing moving: false")
	}

	// The count moves at each of its first 6 reads, then stands still.
	var reads atomic.Int64
	moving := func() uint64 {
		n := reads.Add(1)
		return uint64(min(n, 6))
	}
	if !q.Quiet(stop, quiet, time.Hour, moving) {
		t.Fatal("Quiet: false")
	}
	if n := reads.Load(); n < 7 {
		t.Errorf("Quiet returned after %d reads of the count: before two agreed", n)
	}

	// Paths marked between the reads hold it as the count does.
	var marks atomic.Int64
	marking := func() uint64 {
		if marks.Add(1) <= 6 {
			q.Apply([]Change{{Op: Written, Path: "f"}})
		}
		return 0
	}
	q.Quiet(stop, quiet, time.Hour, marking)
	if n := marks.Load(); n < 7 {
		t.Errorf("Quiet returned after %d reads with paths marked between them", n)
	}

	// A count that never stops moving holds it for max, no longer.
	var always atomic.Uint64
	if !q.Quiet(stop, quiet, 20*time.Millisecond, func() uint64 { return always.Add(1) }) {
		t.Fatal("Quiet under endless requests: false")
	}

	close(stop)
	if q.Quiet(stop, time.Hour, time.Hour, nil) {
		t.Error("Quiet after stop: true")
	}
}
