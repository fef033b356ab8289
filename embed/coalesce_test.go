package embed_test

import (
	"context"
	"errors"
	"math"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/semfs/semfs/embed"
	"github.com/semfs/semfs/embed/embedtest"
)

// gate wraps the real model: a call whose first text is "hold" waits for
// release, one holding "panic" panics; every call's texts are recorded.
type gate struct {
	embed.Embedder
	release chan struct{}
	mu      sync.Mutex
	calls   [][]string
}

func (g *gate) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	g.mu.Lock()
	g.calls = append(g.calls, slices.Clone(texts))
	g.mu.Unlock()
	if len(texts) > 0 && texts[0] == "hold" {
		<-g.release
	}
	if slices.Contains(texts, "panic") {
		panic("boom")
	}
	return g.Embedder.Embed(ctx, texts)
}

func (g *gate) recorded() [][]string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.calls)
}

type answer struct {
	text string
	vecs [][]float32
	err  error
}

// held starts a Coalescer over the real model whose first call ("hold")
// waits until the test releases it, so that the callers started after it
// queue; started sends each of their answers on the returned channel.
func held(t *testing.T, max int) (*embed.Coalescer, *gate, chan answer, embed.Embedder) {
	t.Helper()
	m := embedtest.USELite(t)
	g := &gate{Embedder: m, release: make(chan struct{})}
	c := embed.NewCoalescer(g, max)
	answers := make(chan answer, 64)
	go func() {
		v, err := c.Embed(context.Background(), []string{"hold"})
		answers <- answer{"hold", v, err}
	}()
	waitFor(t, "the first call to lead", func() bool { return len(g.recorded()) == 1 })
	return c, g, answers, m
}

// next is the next answer, or a failure when none comes (a caller left
// waiting for a lead nobody took).
func next(t *testing.T, answers chan answer) answer {
	t.Helper()
	select {
	case a := <-answers:
		return a
	case <-time.After(30 * time.Second):
		t.Fatal("a caller got no answer")
		return answer{}
	}
}

func maxDiff(a, b []float32) float64 {
	if len(a) != len(b) {
		return math.Inf(1)
	}
	var d float64
	for i := range a {
		d = max(d, math.Abs(float64(a[i]-b[i])))
	}
	return d
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// Callers that arrive while a call is embedded are embedded together in one
// call of the model, in arrival order up to the joined call's size, and each
// gets exactly the vectors the model gives its texts on their own.
func TestCoalescerJoinsConcurrentCalls(t *testing.T) {
	c, g, answers, m := held(t, 8)
	texts := []string{"quarterly budget review", "kernel driver crash on boot", "grandmother's apple pie recipe",
		"train tickets to the coast", "invoice for the garden work", "sensor alert at the north station",
		"release notes of version two", "meeting agenda for Thursday", "backup of the photo archive", "login token expired"}
	for i, text := range texts {
		go func() {
			v, err := c.Embed(context.Background(), []string{text})
			answers <- answer{text, v, err}
		}()
		waitFor(t, "the caller to queue", func() bool { return c.Queued() == i+1 })
	}
	close(g.release)
	for range len(texts) + 1 {
		a := next(t, answers)
		if a.err != nil {
			t.Fatalf("%q: %v", a.text, a.err)
		}
		want, err := m.Embed(context.Background(), []string{a.text})
		if err != nil {
			t.Fatal(err)
		}
		// Not bit for bit: a text's rows take part in products of another
		// shape in a joined pass (as in any batch), which rounds otherwise.
		if len(a.vecs) != 1 || maxDiff(a.vecs[0], want[0]) > 1e-5 {
			t.Errorf("%q: joined vector is not the model's own for it", a.text)
		}
		if cap(a.vecs) != 1 {
			t.Errorf("%q: the answer's capacity %d reaches into others' vectors", a.text, cap(a.vecs))
		}
	}
	// The held call, then 8 joined (the most a call holds), then the other 2.
	want := [][]string{{"hold"}, texts[:8], texts[8:]}
	if got := g.recorded(); !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("the model's calls: %q, want %q", got, want)
	}
}

// A caller whose context ends while it waits leaves at once with a
// KindCanceled error and is not embedded; a caller's bad input (an empty
// text) is its error alone; a panic in the model answers every caller of the
// joined call with an error, and the Coalescer goes on.
func TestCoalescerCancelBadInputPanic(t *testing.T) {
	c, g, answers, _ := held(t, 8)
	ctx, cancel := context.WithCancel(context.Background())
	canceled := make(chan error, 1)
	go func() {
		_, err := c.Embed(ctx, []string{"never embedded"})
		canceled <- err
	}()
	waitFor(t, "the caller to queue", func() bool { return c.Queued() == 1 })
	for _, text := range []string{"", "a good text"} {
		go func() {
			v, err := c.Embed(context.Background(), []string{text})
			answers <- answer{text, v, err}
		}()
	}
	waitFor(t, "the callers to queue", func() bool { return c.Queued() == 3 })
	cancel()
	var e *embed.Error
	var err error
	select {
	case err = <-canceled:
	case <-time.After(30 * time.Second):
		t.Fatal("the canceled caller did not leave")
	}
	if !errors.As(err, &e) || e.Kind != embed.KindCanceled {
		t.Fatalf("canceled caller: %v, want KindCanceled", err)
	}
	close(g.release)
	got := map[string]answer{}
	for range 3 {
		a := next(t, answers)
		got[a.text] = a
	}
	if a := got[""]; !errors.As(a.err, &e) || e.Kind != embed.KindInput {
		t.Errorf("empty text: %v, want KindInput", a.err)
	}
	if a := got["a good text"]; a.err != nil || len(a.vecs) != 1 {
		t.Errorf("good text beside an empty one: %v %d", a.err, len(a.vecs))
	}
	for _, call := range g.recorded() {
		if slices.Contains(call, "never embedded") {
			t.Errorf("the canceled caller's text was embedded: %q", call)
		}
	}

	// A panic: every caller of the joined call hears of it.
	g2 := &gate{Embedder: g.Embedder, release: make(chan struct{})}
	c2 := embed.NewCoalescer(g2, 8)
	go func() {
		v, err := c2.Embed(context.Background(), []string{"hold"})
		answers <- answer{"hold", v, err}
	}()
	waitFor(t, "the first call to lead", func() bool { return len(g2.recorded()) == 1 })
	for _, text := range []string{"panic", "beside the panic"} {
		go func() {
			v, err := c2.Embed(context.Background(), []string{text})
			answers <- answer{text, v, err}
		}()
	}
	waitFor(t, "the callers to queue", func() bool { return c2.Queued() == 2 })
	close(g2.release)
	got = map[string]answer{}
	for range 3 {
		a := next(t, answers)
		got[a.text] = a
	}
	if got["panic"].err == nil {
		t.Error("the panicking text: no error")
	}
	if a := got["beside the panic"]; a.err != nil || len(a.vecs) != 1 {
		t.Errorf("the text beside the panic, embedded again alone: %v", a.err)
	}
	if _, err := c2.Embed(context.Background(), []string{"after"}); err != nil {
		t.Errorf("after the panic: %v", err)
	}
}

// A call of max texts or more, and one marked Serial (the passage index's
// throttled thread), do not wait for a joined call nor join one.
func TestCoalescerLeavesBigAndSerialCallsAlone(t *testing.T) {
	c, g, answers, _ := held(t, 4)
	big := []string{"one", "two", "three", "four"}
	if _, err := c.Embed(context.Background(), big); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Embed(embed.Serial(context.Background()), []string{"serial"}); err != nil {
		t.Fatal(err)
	}
	close(g.release)
	if a := next(t, answers); a.err != nil {
		t.Fatal(a.err)
	}
	want := [][]string{{"hold"}, big, {"serial"}}
	if got := g.recorded(); !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("the model's calls: %q, want %q", got, want)
	}
}
