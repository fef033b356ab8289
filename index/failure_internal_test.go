package index

import (
	"context"
	"testing"
	"time"
)

func failureIndex(t *testing.T) *Index {
	t.Helper()
	x, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range []string{"a/report.md", "b/notes.txt", "c/zebra.png"} {
		if err := x.Create(p, "editor", uint64(i+1), time.Unix(0, 0)); err != nil {
			t.Fatal(err)
		}
	}
	return x
}

// A storage failure is an error, never an empty answer.
func TestQueryStorageFailureIsAnError(t *testing.T) {
	x := failureIndex(t)
	if err := x.db.Close(); err != nil {
		t.Fatal(err)
	}
	res, err := x.Query(context.Background(), Query{Text: "report"})
	if KindOf(err) != KindIO || res != nil {
		t.Errorf("query with buntdb gone: %v, %v", res, err)
	}
	if _, err := x.Get("a/report.md"); KindOf(err) != KindIO {
		t.Errorf("get with buntdb gone: %v", err)
	}
	if err := x.Create("d/new", "", 9, time.Now()); KindOf(err) != KindIO {
		t.Errorf("create with buntdb gone: %v", err)
	}
	x.closed = true // Close would fail on the closed db
	_ = x.bl.Close()
	_ = x.lock.Close()
}

func TestQueryBleveFailureIsAnError(t *testing.T) {
	x := failureIndex(t)
	x.flushBleve() // what the setup wrote is in Bleve: the next query only reads it
	if err := x.bl.Close(); err != nil {
		t.Fatal(err)
	}
	if res, err := x.Query(context.Background(), Query{Text: "zebra"}); KindOf(err) != KindIO || res != nil {
		t.Errorf("query with Bleve gone: %v, %v", res, err)
	}
	// A write whose Bleve update fails (when the next query sends it) degrades the
	// index: queries then scan every record and still answer exactly.
	if err := x.Create("d/zebra2.png", "", 4, time.Unix(0, 0)); err != nil {
		t.Fatal(err)
	}
	res, err := x.Query(context.Background(), Query{Text: "ZEBRA"})
	if err != nil || len(res) != 2 || res[0].Path != "c/zebra.png" || res[1].Path != "d/zebra2.png" {
		t.Errorf("degraded query: %v %v", res, err)
	}
	if x.Stats().Degraded == "" {
		t.Fatal("not degraded")
	}
	x.mu.Lock()
	x.closed = true
	x.mu.Unlock()
	_ = x.db.Close()
	_ = x.lock.Close()
}
