package index

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/semfs/semfs/server/servertest"
)

// The Bleve batch that bleveBatchMax pending changes force runs beside the
// index's writers, not inside the write that filled it: the next Apply (an NFS
// COMMIT waits for one) returns while the batch is still being built, and a
// query waits for the batch in flight, so it still sees every change committed
// before it. Closing waits for the batch; the next Open finds Bleve in step.
func TestForcedBleveBatchRunsBesideWriters(t *testing.T) {
	dir := t.TempDir()
	x, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	entered := make(chan struct{}, 16)
	release := make(chan struct{})
	x.onBleveBatch = func() {
		entered <- struct{}{}
		<-release
	}
	create := func(from, n int) {
		t.Helper()
		paths := make([]string, 0, n)
		for i := from; i < from+n; i++ {
			paths = append(paths, fmt.Sprintf("d/file%05d.txt", i))
		}
		applyCreates(t, x, uint64(from+1), paths...)
	}
	// Fills the batch, which starts on its own goroutine. Run aside: were the
	// batch sent inside the write, this Apply would wait on the hook.
	filled := make(chan struct{})
	go func() {
		defer close(filled)
		create(0, bleveBatchMax)
	}()
	select {
	case <-entered:
	case <-time.After(10 * time.Second):
		t.Fatal("bleveBatchMax pending changes started no Bleve batch")
	}
	select {
	case <-filled:
	case <-time.After(10 * time.Second):
		close(release)
		<-filled
		t.Fatal("the Apply that filled the batch waited for Bleve")
	}
	// The batch is held in Bleve's hands; writers go on.
	applied := make(chan struct{})
	go func() {
		defer close(applied)
		create(bleveBatchMax, 10)
	}()
	// (t.Fatal from a goroutine other than the test's: create reports through
	// t.Fatal only on an index error, which fails the test either way.)
	select {
	case <-applied:
	case <-time.After(10 * time.Second):
		close(release)
		t.Fatal("Apply waited for the Bleve batch in flight")
	}
	// A query waits for the batch in flight, then sends what came after it.
	answered := make(chan []Result, 1)
	returned := make(chan struct{})
	go func() {
		defer close(returned)
		res, err := x.Query(context.Background(), Query{Text: "file00007", Limit: 5})
		if err != nil {
			t.Error(err)
		}
		answered <- res
	}()
	// The query parked in flushBleve (on the batch's lock) is the proof it
	// waits for the batch; WaitParked fails if it answers first instead.
	servertest.WaitParked(t, "(*Index).flushBleve(", returned)
	close(release)
	res := <-answered
	if len(res) == 0 || res[0].Path != "d/file00007.txt" {
		t.Fatalf("query after the batch: %v, want d/file00007.txt first", res)
	}
	x.onBleveBatch = nil
	for _, q := range []string{"file00000", fmt.Sprintf("file%05d", bleveBatchMax+9)} {
		res, err := x.Query(context.Background(), Query{Text: q, Limit: 1})
		if err != nil || len(res) != 1 || res[0].Path != "d/"+q+".txt" {
			t.Fatalf("query %q: %v %v", q, res, err)
		}
	}
	create(bleveBatchMax+10, bleveBatchMax) // another forced batch, then Close at once
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	y, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer y.Close()
	if d := y.Damage(); d.Records != "" || d.Bleve != "" {
		t.Fatalf("reopened after Close with a batch in flight: damage %+v", d)
	}
	last := fmt.Sprintf("file%05d", 2*bleveBatchMax+9)
	res, err = y.Query(context.Background(), Query{Text: last, Limit: 1})
	if err != nil || len(res) != 1 || res[0].Path != "d/"+last+".txt" {
		t.Fatalf("query %q after reopen: %v %v", last, res, err)
	}
}
