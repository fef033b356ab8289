package server

import (
	"context"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// TestBatcherCommitJoinsCreate: a create and the write that follows it, then a
// Flush (what an NFS CREATE, WRITE, COMMIT sends), reach the index as one batch,
// one transaction and one sync of records.db instead of two. The linger is set
// to an hour, so the test also proves that a Flush ends it (else it hangs) and
// never depends on how fast this machine runs.
func TestBatcherCommitJoinsCreate(t *testing.T) {
	var mu sync.Mutex
	var batches [][]Change
	took := make(chan string, 4) // "linger" or "apply", in the order they happen
	b := NewBatcher(func(_ context.Context, cs []Change) error {
		mu.Lock()
		defer mu.Unlock()
		batches = append(batches, cs)
		took <- "apply"
		return nil
	}, 4096, nil)
	defer b.Close()
	b.mu.Lock()
	b.linger = time.Hour
	b.onLinger = func() { took <- "linger" }
	b.mu.Unlock()
	ctx := context.Background()
	if err := b.Apply(ctx, Change{Op: ChangeCreate, Path: "f"}); err != nil {
		t.Fatal(err)
	}
	// The applier has seen the create: it must wait for company, not apply it.
	select {
	case what := <-took:
		if what != "linger" {
			t.Fatal("the create was applied alone at once: the COMMIT's write will cost a second transaction")
		}
	case <-time.After(time.Minute):
		t.Fatal("the applier never took up the create")
	}
	if err := b.Apply(ctx, Change{Op: ChangeWrite, Path: "f"}); err != nil {
		t.Fatal(err)
	}
	fctx, cancel := context.WithTimeout(ctx, time.Minute) // failure bound only
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- b.Flush(fctx) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Flush did not end the batch's linger")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(batches) != 1 || len(batches[0]) != 2 {
		t.Fatalf("create and write applied as %d batches (%v), want one of two", len(batches), batches)
	}
}

// TestBatcherLingerEnds: a change nobody flushes is still applied, once the
// linger passes.
func TestBatcherLingerEnds(t *testing.T) {
	applied := make(chan []Change, 1)
	b := NewBatcher(func(_ context.Context, cs []Change) error {
		applied <- cs
		return nil
	}, 4096, nil)
	defer b.Close()
	if err := b.Apply(context.Background(), Change{Op: ChangeCreate, Path: "f"}); err != nil {
		t.Fatal(err)
	}
	select {
	case cs := <-applied:
		if len(cs) != 1 || cs[0].Path != "f" {
			t.Fatalf("applied %v", cs)
		}
	case <-time.After(time.Minute):
		t.Fatal("a change without a Flush was never applied")
	}
}

// goid is the calling goroutine's id, from its stack header.
func goid() string {
	var b [64]byte
	n := runtime.Stack(b[:], false)
	f := strings.Fields(string(b[:n]))
	if len(f) < 2 {
		return ""
	}
	return f[1]
}

// TestBatcherFlushHereAppliesOnTheCaller: FlushHere applies the queued batch
// on the calling goroutine (File.Sync's), the applier lingering meanwhile (an
// hour: the test never depends on time), and what it applied is flushed.
func TestBatcherFlushHereAppliesOnTheCaller(t *testing.T) {
	var mu sync.Mutex
	var on []string
	var got []string
	b := NewBatcher(func(_ context.Context, cs []Change) error {
		mu.Lock()
		defer mu.Unlock()
		on = append(on, goid())
		for _, c := range cs {
			got = append(got, c.Path)
		}
		return nil
	}, 4096, nil)
	defer b.Close()
	b.mu.Lock()
	b.linger = time.Hour
	b.mu.Unlock()
	ctx := context.Background()
	for _, p := range []string{"a", "b"} {
		if err := b.Apply(ctx, Change{Op: ChangeCreate, Path: p}); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.FlushHere(ctx); err != nil {
		t.Fatal(err)
	}
	b.mu.Lock()
	pending := b.applied < b.enqueued
	b.mu.Unlock()
	if pending {
		t.Fatal("changes pending after FlushHere")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(on) != 1 || on[0] != goid() {
		t.Fatalf("applied on goroutines %v, want once on the caller's (%s)", on, goid())
	}
	if strings.Join(got, ",") != "a,b" {
		t.Fatalf("applied %v", got)
	}
}

// TestBatcherFlushHereKeepsOrder: callers of FlushHere and the applier
// goroutine apply batches one at a time, in the order the changes were queued.
func TestBatcherFlushHereKeepsOrder(t *testing.T) {
	var mu sync.Mutex
	var got []int
	b := NewBatcher(func(_ context.Context, cs []Change) error {
		for _, c := range cs {
			n, _ := strconv.Atoi(c.Path)
			mu.Lock()
			got = append(got, n)
			mu.Unlock()
			runtime.Gosched() // let another would-be applier try to run now
		}
		return nil
	}, 16, nil) // a quarter-full queue (4) kicks the applier as well
	var seq sync.Mutex // Apply order is the queue's order
	next := 0
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				seq.Lock()
				err := b.Apply(context.Background(), Change{Op: ChangeWrite, Path: strconv.Itoa(next)})
				next++
				seq.Unlock()
				if err != nil {
					t.Error(err)
					return
				}
				if i%3 == 0 {
					if err := b.FlushHere(context.Background()); err != nil {
						t.Error(err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	b.Close()
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 800 {
		t.Fatalf("%d changes applied, want 800", len(got))
	}
	for i, n := range got {
		if n != i {
			t.Fatalf("change %d applied in place %d: batches out of order", n, i)
		}
	}
}

// TestBatcherLingerAfterEarlyFlush: a batch flushed before its linger ended
// leaves the timer armed (arming one wakes a thread); the next batch, started
// before that timer fires, still lingers its own full time: the timer's early
// firing re-arms it for the rest, and it is applied when its own linger ends.
// In a synctest bubble, so the times are exact and nothing waits for real.
func TestBatcherLingerAfterEarlyFlush(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var got []string
		b := NewBatcher(func(_ context.Context, cs []Change) error {
			mu.Lock()
			defer mu.Unlock()
			for _, c := range cs {
				got = append(got, c.Path)
			}
			return nil
		}, 4096, nil)
		defer b.Close()
		applied := func() string {
			synctest.Wait()
			mu.Lock()
			defer mu.Unlock()
			return strings.Join(got, ",")
		}
		ctx := context.Background()
		step := batchLinger / 4
		if err := b.Apply(ctx, Change{Op: ChangeCreate, Path: "a"}); err != nil { // timer: 4 steps
			t.Fatal(err)
		}
		// The sleeps are what is tested (a linger's length), on synctest's
		// fake clock: they return when every goroutine in the bubble waits
		// and the clock has moved, so they wait for no real time.
		time.Sleep(3 * step)
		if err := b.FlushHere(ctx); err != nil {
			t.Fatal(err)
		}
		if err := b.Apply(ctx, Change{Op: ChangeCreate, Path: "b"}); err != nil { // lingers to step 7
			t.Fatal(err)
		}
		time.Sleep(2 * step) // step 5: the first timer fired at step 4
		if s := applied(); s != "a" {
			t.Fatalf("applied %q at step 5, want only a: b's linger was cut short by a's timer", s)
		}
		time.Sleep(2 * step) // step 7
		if s := applied(); s != "a,b" {
			t.Fatalf("applied %q once b's linger ended, want a,b", s)
		}
	})
}
