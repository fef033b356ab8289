package server

import (
	"context"
	"sync"
	"testing"
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

// TestBatcherStartFlushAppliesBeforeTheWait: StartFlush ends the linger at
// once, so the index's transaction runs while the caller does its own disk
// work (File.Sync's fsync), before the caller waits; the wait then sees the
// change applied.
func TestBatcherStartFlushAppliesBeforeTheWait(t *testing.T) {
	took := make(chan string, 4)
	b := NewBatcher(func(_ context.Context, cs []Change) error {
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
	if what := <-took; what != "linger" {
		t.Fatalf("applier: %s, want it lingering", what)
	}
	wait := b.StartFlush()
	select {
	case what := <-took:
		if what != "apply" {
			t.Fatalf("after StartFlush: %s, want the batch applied", what)
		}
	case <-time.After(time.Minute): // failure bound only
		t.Fatal("StartFlush did not end the linger: the batch waits for the caller's wait")
	}
	if err := wait(ctx); err != nil {
		t.Fatal(err)
	}
	if b.Pending() {
		t.Fatal("changes pending after the wait")
	}
	// Nothing queued: the wait returns at once.
	if err := b.StartFlush()(ctx); err != nil {
		t.Fatal(err)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.flushing != 0 {
		t.Fatalf("flushing = %d after the waits", b.flushing)
	}
}
