package ninep

import (
	"errors"
	"maps"
	"testing"
)

// The fid table's transitions are tested on the table itself (an internal
// test): every transition from every state, the state it leads to or its
// refusal, and after each one the table's counts recomputed from its entries.
// The protocol-level behaviour of the same paths (p9 taught a fid, a stale
// fid's ESTALE, a clunk answered here) is in fast_test.go and
// shimfids_test.go, over real connections.

const (
	tfSrc = 1 // a p9 fid shim-only fids are walked from
	tfFid = 7 // the fid under test
)

var allFidStates = []fidState{fidAbsent, fidP9, fidClunkedHere, fidShimOnly, fidTeachingWalk,
	fidHandingOver, fidTeachingOpen, fidStale}

// tableIn returns a table whose fid tfFid is in state st (walked from tfSrc
// where it is a walk), with tfSrc a p9 fid.
func tableIn(t *testing.T, st fidState) (*fidTable, *file) {
	t.Helper()
	src := &file{path: "/d"}
	tb := &fidTable{}
	tb.put(tfSrc, fidEntry{state: fidP9, file: src})
	walk := func() *shimWalk {
		return &shimWalk{f: &file{path: "/d/x"}, from: tfSrc, src: src, names: []string{"x"}}
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	switch st {
	case fidAbsent:
	case fidP9:
		tb.put(tfFid, fidEntry{state: fidP9, file: &file{path: "/d/p9"}})
	case fidClunkedHere:
		tb.put(tfFid, fidEntry{state: fidP9, file: &file{path: "/d/p9"}})
		must(tb.clunkHere(tfFid))
	case fidShimOnly, fidTeachingWalk:
		_, err := tb.walkHere(tfFid, walk())
		must(err)
		if st == fidTeachingWalk {
			must(tb.teachWalk(tfFid))
		}
	case fidHandingOver, fidTeachingOpen:
		_, err := tb.walkHere(tfFid, walk())
		must(err)
		must(tb.opened(tfFid, &file{path: "/d/x"}, &opening{create: true, name: "x"}))
		must(tb.teachWalk(tfFid))
		must(tb.taught(tfFid, &file{path: "/d"}))
		if st == fidTeachingOpen {
			must(tb.handOver(tfFid))
		}
	case fidStale:
		_, err := tb.walkHere(tfFid, walk())
		must(err)
		_, err = tb.lose(tfFid)
		must(err)
	}
	if got := tb.get(tfFid).state; got != st {
		t.Fatalf("set-up: fid in %v, want %v", got, st)
	}
	checkCounts(t, tb)
	return tb, src
}

// checkCounts recomputes the table's counts and each p9 fid's children from
// its entries.
func checkCounts(t *testing.T, tb *fidTable) {
	t.Helper()
	var clunked, shimOnly, opens int
	children := map[uint32]int{}
	for _, e := range tb.m {
		switch e.state {
		case fidAbsent:
			t.Error("an absent entry is stored")
		case fidClunkedHere:
			clunked++
		case fidShimOnly:
			shimOnly++
			if s := tb.m[e.walk.from]; s.state == fidP9 && s.file == e.walk.src {
				children[e.walk.from]++
			}
		}
		if e.state == fidHandingOver || (e.state == fidTeachingWalk && e.walk.opened != nil) {
			opens++
		}
	}
	if clunked != tb.clunked || shimOnly != tb.shimOnly || opens != tb.opens {
		t.Errorf("counts clunked %d shim-only %d opens %d, entries say %d %d %d",
			tb.clunked, tb.shimOnly, tb.opens, clunked, shimOnly, opens)
	}
	for fid, e := range tb.m {
		if e.state == fidP9 && e.children != children[fid] {
			t.Errorf("fid %d: children %d, entries say %d", fid, e.children, children[fid])
		}
	}
}

func TestFidTableTransitions(t *testing.T) {
	type transition struct {
		name string
		do   func(tb *fidTable, src *file) error
		// to: the state each allowed from-state leads to; any state not
		// listed must be refused.
		to map[fidState]fidState
	}
	anyBut := func(to fidState, except ...fidState) map[fidState]fidState {
		m := map[fidState]fidState{}
		for _, s := range allFidStates {
			m[s] = to
		}
		for _, s := range except {
			delete(m, s)
		}
		return m
	}
	transitions := []transition{
		{"bind", func(tb *fidTable, _ *file) error {
			_, err := tb.bind(tfFid, &file{path: "/d/new"})
			return err
		}, anyBut(fidP9, fidTeachingWalk, fidTeachingOpen)},
		{"bind none", func(tb *fidTable, _ *file) error {
			_, err := tb.bind(tfFid, nil)
			return err
		}, anyBut(fidAbsent, fidTeachingWalk, fidTeachingOpen)},
		{"clunkHere", func(tb *fidTable, _ *file) error { return tb.clunkHere(tfFid) },
			map[fidState]fidState{fidP9: fidClunkedHere}},
		{"forget", func(tb *fidTable, _ *file) error { return tb.forget(tfFid) },
			map[fidState]fidState{fidAbsent: fidAbsent, fidP9: fidAbsent}},
		{"p9Took", func(tb *fidTable, _ *file) error {
			_, err := tb.p9Took(tfFid)
			return err
		}, anyBut(fidAbsent, fidTeachingWalk, fidTeachingOpen)},
		{"walkHere", func(tb *fidTable, src *file) error {
			_, err := tb.walkHere(tfFid, &shimWalk{f: &file{path: "/d/y"}, from: tfSrc, src: src, names: []string{"y"}})
			return err
		}, map[fidState]fidState{fidAbsent: fidShimOnly, fidClunkedHere: fidShimOnly, fidShimOnly: fidShimOnly, fidStale: fidShimOnly}},
		{"opened", func(tb *fidTable, _ *file) error {
			return tb.opened(tfFid, &file{path: "/d/x"}, &opening{flags: 0})
		}, map[fidState]fidState{fidShimOnly: fidShimOnly}},
		{"dropShimOnly", func(tb *fidTable, _ *file) error {
			_, err := tb.dropShimOnly(tfFid)
			return err
		}, map[fidState]fidState{fidShimOnly: fidAbsent}},
		{"dropStale", func(tb *fidTable, _ *file) error { return tb.dropStale(tfFid) },
			map[fidState]fidState{fidStale: fidAbsent}},
		{"teachWalk", func(tb *fidTable, _ *file) error { return tb.teachWalk(tfFid) },
			map[fidState]fidState{fidShimOnly: fidTeachingWalk}},
		{"handOver", func(tb *fidTable, _ *file) error { return tb.handOver(tfFid) },
			map[fidState]fidState{fidHandingOver: fidTeachingOpen}},
		{"taught", func(tb *fidTable, _ *file) error { return tb.taught(tfFid, &file{path: "/d/x"}) },
			map[fidState]fidState{fidTeachingWalk: fidP9, fidTeachingOpen: fidP9}},
		{"taught none", func(tb *fidTable, _ *file) error { return tb.taught(tfFid, nil) },
			map[fidState]fidState{fidTeachingWalk: fidAbsent, fidTeachingOpen: fidAbsent}},
		{"teachFailed", func(tb *fidTable, _ *file) error {
			_, err := tb.teachFailed(tfFid)
			return err
		}, map[fidState]fidState{fidTeachingWalk: fidStale, fidTeachingOpen: fidStale}},
		{"lose", func(tb *fidTable, _ *file) error {
			_, err := tb.lose(tfFid)
			return err
		}, map[fidState]fidState{fidShimOnly: fidStale, fidHandingOver: fidStale}},
	}
	for _, tr := range transitions {
		for _, from := range allFidStates {
			t.Run(tr.name+"/from "+from.String(), func(t *testing.T) {
				tb, src := tableIn(t, from)
				before := maps.Clone(tb.m)
				counts := [3]int{tb.clunked, tb.shimOnly, tb.opens}
				err := tr.do(tb, src)
				want, allowed := tr.to[from]
				if !allowed {
					var te *fidTransitionError
					if !errors.As(err, &te) {
						t.Fatalf("not refused (err %v); fid now %v", err, tb.get(tfFid).state)
					}
					if !maps.Equal(before, tb.m) || counts != [3]int{tb.clunked, tb.shimOnly, tb.opens} {
						t.Fatal("a refused transition changed the table")
					}
					return
				}
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if got := tb.get(tfFid).state; got != want {
					t.Fatalf("fid in %v, want %v", got, want)
				}
				checkCounts(t, tb)
			})
		}
	}
}

// TestFidTableP9HoldsOld: a number p9 still holds a reference under (clunked
// here) stays marked through a shim-only fid walked onto it and a stale one,
// so that letting it go again is a clunk here, not a free number.
func TestFidTableP9HoldsOld(t *testing.T) {
	tb, src := tableIn(t, fidClunkedHere)
	walk := &shimWalk{f: &file{}, from: tfSrc, src: src}
	if _, err := tb.walkHere(tfFid, walk); err != nil {
		t.Fatal(err)
	}
	if !tb.get(tfFid).p9HoldsOld {
		t.Fatal("walked onto a number clunked here: p9HoldsOld lost")
	}
	// A second walk onto it keeps the mark.
	if _, err := tb.walkHere(tfFid, &shimWalk{f: &file{}, from: tfSrc, src: src}); err != nil {
		t.Fatal(err)
	}
	if _, err := tb.lose(tfFid); err != nil {
		t.Fatal(err)
	}
	if e := tb.get(tfFid); e.state != fidStale || !e.p9HoldsOld {
		t.Fatalf("lost: %+v, want stale holding old", e)
	}
	if err := tb.dropStale(tfFid); err != nil {
		t.Fatal(err)
	}
	if st := tb.get(tfFid).state; st != fidClunkedHere {
		t.Fatalf("let go: %v, want clunked here", st)
	}
	checkCounts(t, tb)
}

// TestFidTableTaughtOpened: an opened shim-only fid whose walk p9 took is
// handed over next, and keeps the identity the client was told of.
func TestFidTableTaughtOpened(t *testing.T) {
	tb, _ := tableIn(t, fidShimOnly)
	nf := &file{}
	nf.id.Store(42)
	if err := tb.opened(tfFid, nf, &opening{flags: 2}); err != nil {
		t.Fatal(err)
	}
	if err := tb.teachWalk(tfFid); err != nil {
		t.Fatal(err)
	}
	if tb.opens != 1 {
		t.Fatalf("opens %d, want 1", tb.opens)
	}
	p9f := &file{}
	if err := tb.taught(tfFid, p9f); err != nil {
		t.Fatal(err)
	}
	if got := tb.get(tfFid); got.state != fidHandingOver || got.file != p9f {
		t.Fatalf("taught: %v, want handing over p9's file", got.state)
	}
	if p9f.id.Load() != 42 {
		t.Fatal("p9's file did not keep the identity the client was told of")
	}
	checkCounts(t, tb)
}

// TestFidTableGiveUp: giving up drops p9's fids and makes fids being taught
// stale; shim-only fids stay until p9 must learn them.
func TestFidTableGiveUp(t *testing.T) {
	tb, src := tableIn(t, fidTeachingWalk)
	if _, err := tb.walkHere(9, &shimWalk{f: &file{}, from: tfSrc, src: src}); err != nil {
		t.Fatal(err)
	}
	tb.giveUp()
	if !tb.givenUp {
		t.Fatal("not given up")
	}
	for fid, want := range map[uint32]fidState{tfSrc: fidAbsent, tfFid: fidStale, 9: fidShimOnly} {
		if got := tb.get(fid).state; got != want {
			t.Errorf("fid %d: %v, want %v", fid, got, want)
		}
	}
	if _, err := tb.lose(9); err != nil {
		t.Fatal(err)
	}
	checkCounts(t, tb)
}

// TestFidTableWalkedFrom: dependent's lookup finds the shim-only fids walked
// from a p9 fid, and none once they are taught or the source is replaced.
func TestFidTableWalkedFrom(t *testing.T) {
	tb, _ := tableIn(t, fidShimOnly)
	if fid, ok := tb.walkedFrom(tfSrc); !ok || fid != tfFid {
		t.Fatalf("walkedFrom: %d %v", fid, ok)
	}
	if _, err := tb.bind(tfSrc, &file{}); err != nil {
		t.Fatal(err)
	}
	if _, ok := tb.walkedFrom(tfSrc); ok {
		t.Fatal("a replaced source still has the old walk's child")
	}
	checkCounts(t, tb)
}
