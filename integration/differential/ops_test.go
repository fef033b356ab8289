package differential

import (
	"reflect"
	"slices"
	"testing"
)

// A seed names one sequence on every machine: a failure's seed replays it.
func TestGenerateIsDeterministic(t *testing.T) {
	a, b := Generate(42, 500), Generate(42, 500)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("the same seed generated two different sequences")
	}
	if reflect.DeepEqual(a, Generate(43, 500)) {
		t.Fatal("seeds 42 and 43 generated the same sequence")
	}
}

// Special names only ever stand last, at depth two or more ("." and "..")
// so that no step reaches above its base; every kind of step is drawn.
func TestGenerateStaysBelowTheBase(t *testing.T) {
	kinds := map[Kind]bool{}
	for _, op := range Generate(7, 20000) {
		kinds[op.Kind] = true
		for _, p := range [][]string{op.Path, op.Path2} {
			for i, n := range p {
				special := !slices.Contains([]string{"a", "b", "c", "d"}, n)
				if special && i != len(p)-1 {
					t.Fatalf("%s: special name %q not last", op, n)
				}
				if (n == "." || n == "..") && len(p) < 2 {
					t.Fatalf("%s: %q at the base", op, n)
				}
			}
		}
	}
	for _, w := range kindWeights {
		if !kinds[w.k] {
			t.Errorf("no %s step in 20000", w.k)
		}
	}
}

// Known failures are told apart by signature, and each says what it is.
func TestKnownFailuresAreWellFormed(t *testing.T) {
	seen := map[string]bool{}
	for _, k := range KnownFailures() {
		for _, sig := range append([]string{k.Signature}, k.Also...) {
			key := k.Proto + " " + sig
			if seen[key] {
				t.Errorf("signature %q listed twice", key)
			}
			seen[key] = true
		}
		if k.Finding == "" || k.Skip == nil {
			t.Errorf("%q: needs a finding and the steps it leaves out", k.Signature)
		}
	}
}
