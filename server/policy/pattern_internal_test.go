package policy

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/bmatcuk/doublestar/v4"
)

// TestFastShapesAgreeWithDoublestar checks the shapes answered without the
// matcher ("**", "dir/**", "dir/", literals) against doublestar itself, the
// independent oracle, on generated patterns and paths.
func TestFastShapesAgreeWithDoublestar(t *testing.T) {
	r := rand.New(rand.NewPCG(26, 1))
	segs := []string{"a", "b", "ab", "a.key", "secrets", "x"}
	gen := func(n int) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = segs[r.IntN(len(segs))]
		}
		return strings.Join(parts, "/")
	}
	for i := 0; i < 3000; i++ {
		var src string
		switch r.IntN(4) {
		case 0:
			src = "**"
		case 1:
			src = gen(1+r.IntN(3)) + "/**"
		case 2:
			src = gen(1+r.IntN(3)) + "/"
		default:
			src = gen(1 + r.IntN(3))
		}
		if msg := checkPattern(src); msg != "" {
			t.Fatalf("%q: %s", src, msg)
		}
		p := compilePattern(src)
		if p.kind == patGlob {
			t.Fatalf("%q was not given a fast shape", src)
		}
		path := gen(r.IntN(5))
		want, err := doublestar.Match(p.glob, path)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.match(path); got != want {
			t.Fatalf("pattern %q, path %q: fast %v, doublestar %v", src, path, got, want)
		}
	}
}
