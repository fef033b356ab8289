package server_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/semfs/semfs/server"
	"github.com/semfs/semfs/server/servertest"
)

func TestBatcherKeepsOrderAndFlushes(t *testing.T) {
	var mu sync.Mutex
	var got []string
	var batches int
	gate := make(chan struct{})
	b := server.NewBatcher(func(_ context.Context, cs []server.Change) error {
		<-gate
		mu.Lock()
		defer mu.Unlock()
		batches++
		for _, c := range cs {
			got = append(got, c.Path)
		}
		return nil
	}, 8, nil)
	ctx := context.Background()
	done := make(chan struct{})
	go func() {
		for i := 0; i < 100; i++ {
			// Beyond 8 queued changes Apply blocks until the applier catches up.
			if err := b.Apply(ctx, server.Change{Op: server.ChangeCreate, Path: fmt.Sprint(i)}); err != nil {
				t.Error(err)
			}
		}
		close(done)
	}()
	// The producer parked inside Apply (not done) while the applier is stuck:
	// the queue is bounded.
	servertest.WaitParked(t, "(*Batcher).Apply", done)
	close(gate)
	<-done
	if err := b.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	if len(got) != 100 {
		t.Fatalf("flush returned with %d of 100 applied", len(got))
	}
	for i, p := range got {
		if p != fmt.Sprint(i) {
			t.Fatalf("change %d applied as %s: order lost", i, p)
		}
	}
	if batches >= 100 {
		t.Fatalf("%d batches for 100 changes: nothing was batched", batches)
	}
	mu.Unlock()
	b.Close()
	if err := b.Apply(ctx, server.Change{Path: "late"}); err == nil {
		t.Fatal("Apply after Close succeeded")
	}
}
