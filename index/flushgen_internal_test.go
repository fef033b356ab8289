package index

import (
	"context"
	"sync/atomic"
	"testing"
)

// Queries that arrive while another query's Bleve batch is on its way wait for
// it when it carries changes they must see, and send no batch of their own
// when it carried all of them; a change committed meanwhile waits for the
// next query that must see it. Before, a query that found nothing pending
// answered at once, without the changes in the batch still on its way (a
// query could miss a write that had returned before it began), and each
// waiting query sent a small batch of its own, with a records.db sync, one
// after another (integration/bench/mixed: queries queued behind those syncs).
func TestQueriesShareTheBatchOnItsWay(t *testing.T) {
	x, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	applyCreates(t, x, 1, "a/alpha.md")

	var batches atomic.Int32
	entered, release := make(chan struct{}), make(chan struct{})
	x.onBleveBatch = func() {
		if batches.Add(1) == 1 {
			close(entered)
			<-release
		}
	}
	waiting := make(chan struct{}, 4)
	x.onFlushWait = func() { waiting <- struct{}{} }
	query := func(text string, out chan<- []Result) {
		res, err := x.Query(context.Background(), Query{Text: text, Limit: 5})
		if err != nil {
			t.Error(err)
		}
		out <- res
	}

	first := make(chan []Result, 1)
	go query("alpha", first)
	<-waiting // the first query's flush; its batch is then held in the hook
	<-entered

	// Two queries begin with alpha.md committed and its batch on its way.
	later := make(chan []Result, 2)
	for range 2 {
		go query("alpha", later)
		select {
		case <-waiting:
		case res := <-later:
			close(release)
			t.Fatalf("a query answered while the batch carrying alpha.md was on its way: %v", res)
		}
	}
	// A change committed after they began: theirs need not carry it.
	applyCreates(t, x, 2, "a/beta.md")
	close(release)
	for _, ch := range []chan []Result{first, later, later} {
		if res := <-ch; len(res) != 1 || res[0].Path != "a/alpha.md" {
			t.Fatalf("query alpha: %v, want a/alpha.md", res)
		}
	}
	if n := batches.Load(); n != 1 {
		t.Fatalf("%d Bleve batches for three queries that all needed the first one only", n)
	}

	// The next query must see beta.md, so it sends it.
	res, err := x.Query(context.Background(), Query{Text: "beta", Limit: 5})
	if err != nil || len(res) != 1 || res[0].Path != "a/beta.md" {
		t.Fatalf("query beta: %v %v, want a/beta.md", res, err)
	}
	if n := batches.Load(); n != 2 {
		t.Fatalf("%d Bleve batches after the query that needed beta.md, want 2", n)
	}
	// Nothing committed since: no batch.
	if _, err := x.Query(context.Background(), Query{Text: "alpha beta", Limit: 5}); err != nil {
		t.Fatal(err)
	}
	if n := batches.Load(); n != 2 {
		t.Fatalf("%d Bleve batches after a query with nothing new to see, want 2", n)
	}
}
