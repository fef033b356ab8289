package index

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/semfs/semfs/embed"
)

// heldQueue makes x's first tag write wait until release is closed, and
// records the size of every shared write.
type heldQueue struct {
	entered chan struct{}
	release chan struct{}
	mu      sync.Mutex
	sizes   []int
}

func holdTagQueue(x *Index) *heldQueue {
	h := &heldQueue{entered: make(chan struct{}), release: make(chan struct{})}
	first := true
	x.tags.onWrite = func(n int) {
		h.mu.Lock()
		h.sizes = append(h.sizes, n)
		wait := first
		first = false
		h.mu.Unlock()
		if wait {
			close(h.entered)
			<-h.release
		}
	}
	return h
}

// waitQueued waits until n tags are queued behind the held write.
func waitQueued(t *testing.T, x *Index, n int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		x.tags.mu.Lock()
		got := len(x.tags.queued)
		x.tags.mu.Unlock()
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d tags queued, want %d", got, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestConcurrentTagsShareWrites: tags that arrive while a tag write is on its
// way are written together in the next write, each path's tags in the order
// they came (one per write); every call gets its own tags back; a bad
// request fails alone without entering the queue; and every tag is durable
// (the index reopened holds each path's last tags and vector).
func TestConcurrentTagsShareWrites(t *testing.T) {
	dir := t.TempDir()
	x, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	const paths, tags = 8, 30
	for i := range paths {
		if err := x.Create(fmt.Sprintf("f%d.txt", i), "maker", uint64(i+1), time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	r := rand.New(rand.NewPCG(30, 7))
	vec := func() *Vector {
		v := make([]float32, embed.MiniLM.Dims)
		for i := range v {
			v[i] = float32(r.NormFloat64())
		}
		return &Vector{Model: embed.MiniLM.Name, Values: v}
	}
	h := holdTagQueue(x)
	type call struct {
		path, task string
		v          *Vector
		rec        Record
		err        error
	}
	calls := make([]*call, tags+1)
	var wg sync.WaitGroup
	tag := func(c *call) {
		defer wg.Done()
		c.rec, c.err = x.Tag(context.Background(), c.path, c.task, []string{"app"}, c.v)
	}
	calls[0] = &call{path: "f0.txt", task: "first"}
	wg.Add(1)
	go tag(calls[0])
	<-h.entered
	for i := 1; i <= tags; i++ {
		c := &call{path: fmt.Sprintf("f%d.txt", (i-1)%paths), task: fmt.Sprintf("task %d", i)}
		if i%3 == 0 {
			c.v = vec()
		}
		calls[i] = c
		wg.Add(1)
		go tag(c)
		waitQueued(t, x, i) // in this order
	}
	// Invalid requests fail at once, alone, while the write is held.
	if _, err := x.Tag(context.Background(), "f1.txt", "bad \xff", nil, nil); !errors.Is(err, ErrInvalidText) {
		t.Errorf("bad text: %v, want KindInvalid", err)
	}
	if _, err := x.Tag(context.Background(), "../out", "t", nil, nil); KindOf(err) != KindInvalid {
		t.Errorf("bad path: %v, want KindInvalid", err)
	}
	close(h.release)
	wg.Wait()

	if want := []int{1, 8, 8, 8, 6}; !slices.Equal(h.sizes, want) {
		t.Errorf("writes of %v tags, want %v", h.sizes, want)
	}
	last := map[string]*call{}
	for _, c := range calls {
		if c.err != nil {
			t.Fatalf("Tag %s %q: %v", c.path, c.task, c.err)
		}
		if c.rec.Path != c.path || c.rec.Task != c.task {
			t.Errorf("Tag %s %q returned %s %q", c.path, c.task, c.rec.Path, c.rec.Task)
		}
		last[c.path] = c
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	x, err = Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	for p, c := range last {
		got, err := x.Get(p)
		if err != nil || got.Task != c.task || got.CreatedBy != "maker" {
			t.Errorf("%s after reopening: %q by %q (%v), want %q by maker", p, got.Task, got.CreatedBy, err, c.task)
		}
		x.mu.RLock()
		set := x.vecs[embed.MiniLM.Name]
		has := false
		if set != nil {
			_, has = set.pos[p]
		}
		x.mu.RUnlock()
		if has != (c.v != nil) {
			t.Errorf("%s after reopening: vector %v, want %v", p, has, c.v != nil)
		}
	}
}

// failingSaver is a durable-record store whose saves of one path fail.
type failingSaver struct {
	fail string
}

func (s failingSaver) SaveRecord(_ context.Context, p string, update func(Saved, bool) Saved) (Saved, error) {
	if p == s.fail {
		return Saved{}, errors.New("the disk refused it")
	}
	return update(Saved{}, false), nil
}

// TestSharedTagWriteFailsOnlyItsOwn: when a shared write fails for one tag
// (here its durable record cannot be saved), that tag gets the error its own
// write would have had and the others are written, durably; the queue goes on.
func TestSharedTagWriteFailsOnlyItsOwn(t *testing.T) {
	dir := t.TempDir()
	x, err := Open(dir, Options{Saver: failingSaver{fail: "bad.txt"}})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	h := holdTagQueue(x)
	errs := make([]error, 4)
	names := []string{"a.txt", "b.txt", "bad.txt", "c.txt"}
	var wg sync.WaitGroup
	for i, p := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = x.Tag(context.Background(), p, "task of "+p, nil, nil)
		}()
		if i == 0 {
			<-h.entered
		} else {
			waitQueued(t, x, i)
		}
	}
	close(h.release)
	wg.Wait()
	if want := []int{1, 3}; !slices.Equal(h.sizes, want) {
		t.Errorf("writes of %v tags, want %v", h.sizes, want)
	}
	for i, p := range names {
		if (errs[i] != nil) != (p == "bad.txt") {
			t.Errorf("Tag %s: %v", p, errs[i])
		}
		got, err := x.Get(p)
		switch {
		case p == "bad.txt":
			if err == nil && got.Task != "" {
				t.Errorf("%s was written: %q", p, got.Task)
			}
		case err != nil || got.Task != "task of "+p:
			t.Errorf("%s: %q (%v)", p, got.Task, err)
		}
	}
	if _, err := x.Tag(context.Background(), "d.txt", "later", nil, nil); err != nil {
		t.Errorf("a tag after the failed write: %v", err)
	}
}
