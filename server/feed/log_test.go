package feed_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/semfs/semfs/server/feed"
)

func open(t *testing.T, opt feed.Options) *feed.Log {
	t.Helper()
	l, err := feed.Open(opt)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func appendN(l *feed.Log, from, n int) {
	for i := from; i < from+n; i++ {
		l.Append(feed.Event{Op: feed.OpCreate, Path: fmt.Sprintf("f%05d", i), Type: "file"})
	}
}

// readAll pages through the history from c and checks that revs grow by one.
func readAll(t *testing.T, l *feed.Log, c feed.Cursor, limit int) ([]feed.Event, feed.Cursor) {
	t.Helper()
	var out []feed.Event
	for {
		p := l.Read(c, limit, nil)
		if p.Reset {
			t.Fatalf("reset reading from %v", c)
		}
		prev := c.Rev
		for _, e := range p.Events {
			if e.Rev != prev+1 {
				t.Fatalf("gap: rev %d after %d", e.Rev, prev)
			}
			prev = e.Rev
		}
		out = append(out, p.Events...)
		c = p.Cursor
		if !p.More {
			return out, c
		}
	}
}

func TestPagesLoseNothing(t *testing.T) {
	l := open(t, feed.Options{Path: filepath.Join(t.TempDir(), feed.FileName)})
	defer l.Close()
	start := l.Head()
	appendN(l, 0, 1234)
	evs, end := readAll(t, l, start, 100)
	if len(evs) != 1234 || end != l.Head() {
		t.Fatalf("%d events, cursor %v (head %v)", len(evs), end, l.Head())
	}
	for i, e := range evs {
		if e.Path != fmt.Sprintf("f%05d", i) || e.Rev != uint64(i+1) {
			t.Fatalf("event %d: %+v", i, e)
		}
	}
}

func TestOverflowResets(t *testing.T) {
	l := open(t, feed.Options{Path: filepath.Join(t.TempDir(), feed.FileName), Keep: 10})
	defer l.Close()
	start := l.Head()
	appendN(l, 0, 5)
	if p := l.Read(start, 0, nil); p.Reset || len(p.Events) != 5 {
		t.Fatalf("within the bound: %+v", p)
	}
	appendN(l, 5, 10) // rev 1..5 dropped
	p := l.Read(start, 0, nil)
	if !p.Reset || p.Cursor != l.Head() || len(p.Events) != 0 {
		t.Fatalf("after overflow: %+v", p)
	}
	// A cursor inside the kept window still reads exactly.
	if p := l.Read(feed.Cursor{Epoch: start.Epoch, Rev: 5}, 0, nil); p.Reset || len(p.Events) != 10 || p.Events[0].Rev != 6 {
		t.Fatalf("oldest kept: %+v", p)
	}
	for _, bad := range []feed.Cursor{{Epoch: start.Epoch + 1, Rev: 15}, {Epoch: start.Epoch, Rev: 16}} {
		if p := l.Read(bad, 0, nil); !p.Reset {
			t.Errorf("%v: no reset", bad)
		}
	}
}

// Restarts: a clean close continues; a stop without Close (a crash, SIGKILL)
// resets, since the log cannot prove it holds every change; Fresh resets.
func TestRestarts(t *testing.T) {
	for _, tc := range []struct {
		name  string
		clean bool
		tear  bool
		fresh bool
		keeps bool
	}{
		{"clean", true, false, false, true},
		{"killed", false, false, false, false},
		{"killed mid-write", false, true, false, false},
		{"index rebuilt", true, false, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), feed.FileName)
			l := open(t, feed.Options{Path: path})
			start := l.Head()
			appendN(l, 0, 7)
			mid := l.Head()
			if tc.clean {
				if err := l.Close(); err != nil {
					t.Fatal(err)
				}
			}
			if tc.tear {
				f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
				if err != nil {
					t.Fatal(err)
				}
				f.WriteString(`{"rev":8,"op":"cre`)
				f.Close()
			}
			l2 := open(t, feed.Options{Path: path, Fresh: tc.fresh})
			defer l2.Close()
			p := l2.Read(start, 0, nil)
			if !tc.keeps {
				if !p.Reset || l2.Fresh() == "" {
					t.Fatalf("want a reset, got %+v (fresh %q)", p, l2.Fresh())
				}
				return
			}
			if p.Reset || len(p.Events) != 7 || p.Cursor != mid {
				t.Fatalf("want the 7 events again, got %+v", p)
			}
			appendN(l2, 7, 3)
			if evs, _ := readAll(t, l2, mid, 2); len(evs) != 3 || evs[0].Rev != 8 {
				t.Fatalf("after restart: %+v", evs)
			}
		})
	}
}

func TestWaitWakes(t *testing.T) {
	l := open(t, feed.Options{})
	defer l.Close()
	c := l.Head()
	woke := make(chan bool)
	go func() { woke <- l.Wait(context.Background(), c) }()
	appendN(l, 0, 1)
	if !<-woke {
		t.Fatal("Wait said nothing new after an append")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	if l.Wait(ctx, l.Head()) {
		t.Fatal("Wait said something new with nothing appended")
	}
}

func TestSeeRenames(t *testing.T) {
	v := viewOf("a")
	e := feed.Event{Op: feed.OpRename, Path: "b/x", From: "a/x"}
	if got, ok := feed.See(v, e); !ok || got.Op != feed.OpRemove || got.Path != "a/x" || got.From != "" {
		t.Errorf("out of view: %+v %v", got, ok)
	}
	e = feed.Event{Op: feed.OpRename, Path: "a/x", From: "b/x"}
	if got, ok := feed.See(v, e); !ok || got.Op != feed.OpCreate || got.Path != "a/x" {
		t.Errorf("into view: %+v %v", got, ok)
	}
	if _, ok := feed.See(v, feed.Event{Op: feed.OpWrite, Path: "b/y"}); ok {
		t.Error("hidden write shown")
	}
}

type viewOf string

func (v viewOf) Sees(p string) bool { return len(p) > len(v) && p[:len(v)+1] == string(v)+"/" }

func TestGlobs(t *testing.T) {
	g, err := feed.ParseGlobs([]string{"src/**/*.go,docs/*"})
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]bool{"src/a/b.go": true, "src/b.go": true, "docs/x": true, "docs/x/y": false, "other.go": false} {
		if got := g.Match(feed.Event{Path: p}); got != want {
			t.Errorf("%s: %v", p, got)
		}
	}
	if _, err := feed.ParseGlobs([]string{"src/[a"}); err == nil {
		t.Error("a bad glob was taken")
	}
}

func TestCursorText(t *testing.T) {
	c := feed.Cursor{Epoch: 0xabc, Rev: 42}
	got, err := feed.ParseCursor(c.String())
	if err != nil || got != c {
		t.Fatalf("%v %v", got, err)
	}
	for _, bad := range []string{"", "42", "c1.", "c1.zz.1", "c1.0.1", "c1.1.-1"} {
		if _, err := feed.ParseCursor(bad); err == nil {
			t.Errorf("%q taken", bad)
		}
	}
}

// Enqueued batches are filled, numbered and appended in order on the log's
// goroutine; Settle returns once those enqueued before it are readable, and
// Close appends what is still queued.
func TestEnqueueKeepsOrder(t *testing.T) {
	path := filepath.Join(t.TempDir(), feed.FileName)
	l := open(t, feed.Options{Path: path, Fill: func(e *feed.Event) { e.Size = int64(len(e.Path)) }})
	start := l.Head()
	for i := 0; i < 500; i++ {
		l.Enqueue([]feed.Event{{Op: feed.OpCreate, Path: fmt.Sprintf("f%05d", i)}, {Op: feed.OpWrite, Path: fmt.Sprintf("f%05d", i)}})
	}
	if err := l.Settle(context.Background()); err != nil {
		t.Fatal(err)
	}
	evs, _ := readAll(t, l, start, 0)
	if len(evs) != 1000 {
		t.Fatalf("%d events after Settle", len(evs))
	}
	for i, e := range evs {
		if e.Path != fmt.Sprintf("f%05d", i/2) || e.Size != 6 {
			t.Fatalf("event %d: %+v", i, e)
		}
	}
	l.Enqueue([]feed.Event{{Op: feed.OpRemove, Path: "last"}})
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l2 := open(t, feed.Options{Path: path})
	defer l2.Close()
	if evs, _ := readAll(t, l2, start, 0); len(evs) != 1001 || evs[1000].Path != "last" {
		t.Fatalf("after Close and reopen: %d events", len(evs))
	}
}
