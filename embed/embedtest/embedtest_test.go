package embedtest_test

import (
	"math"
	"testing"

	"github.com/semfs/semfs/embed/embedtest"
)

// TestMiniLMRefGroups checks what ranking tests rely on: every item is a
// unit vector, and each item's nearest other item is in its own group.
func TestMiniLMRefGroups(t *testing.T) {
	ref := embedtest.LoadMiniLMRef(t)
	if len(ref.Items) < 30 {
		t.Fatalf("%d items", len(ref.Items))
	}
	dot := func(a, b []float32) float64 {
		var d float64
		for i := range a {
			d += float64(a[i]) * float64(b[i])
		}
		return d
	}
	for i, a := range ref.Items {
		if n := dot(a.Vector, a.Vector); math.Abs(n-1) > 1e-4 {
			t.Errorf("%s: |v|^2 = %v", a.ID, n)
		}
		if a.Text == "" || a.Group == "" {
			t.Errorf("%s: no text or group", a.ID)
		}
		best, bestJ := -2.0, -1
		for j, b := range ref.Items {
			if j != i {
				if d := dot(a.Vector, b.Vector); d > best {
					best, bestJ = d, j
				}
			}
		}
		if g := ref.Items[bestJ].Group; g != a.Group {
			t.Errorf("%s (%s): nearest item %s is in group %s", a.ID, a.Group, ref.Items[bestJ].ID, g)
		}
	}
}

func TestUSERef(t *testing.T) {
	ref := embedtest.LoadUSERef(t)
	for i, v := range ref.Emb {
		if len(v) != 512 {
			t.Fatalf("sentence %d: %d dims", i, len(v))
		}
	}
}
