package conformance

import (
	"os"
	"testing"
)

// TestCommittedFiles checks that docs/pjdfstest.md's lists and the
// committed peer results parse, so a malformed edit fails `make test`, not
// only the long kernel run.
func TestCommittedFiles(t *testing.T) {
	if _, err := ReadLists("../../docs/pjdfstest.md"); err != nil {
		t.Error(err)
	}
	for _, p := range []string{"testdata/peers-ganesha.txt", "testdata/peers-diod.txt"} {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Error(err)
			continue
		}
		rs, err := ParseResults(string(b))
		if err != nil {
			t.Errorf("%s: %v", p, err)
		} else if len(rs) < 200 {
			t.Errorf("%s: %d test files, want the whole suite", p, len(rs))
		}
	}
}
