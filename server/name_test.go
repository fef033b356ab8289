package server_test

import (
	"testing"

	"github.com/semfs/semfs/server"
)

func TestWithin(t *testing.T) {
	for _, c := range []struct {
		p, dir string
		want   bool
	}{
		{"a", "", true}, {"", "", true}, {"a/b", "a", true}, {"a", "a", true}, {"a/b/c", "a/b", true},
		{"ab", "a", false}, {"a", "a/b", false}, {"", "a", false}, {"b/a", "a", false}, {"a-b/c", "a", false},
	} {
		if got := server.Within(c.p, c.dir); got != c.want {
			t.Errorf("Within(%q, %q) = %v, want %v", c.p, c.dir, got, c.want)
		}
	}
}
