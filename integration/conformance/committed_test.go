package conformance

import (
	"os"
	"strings"
	"testing"
)

// TestCommittedFiles checks that docs/pjdfstest.md's lists and the
// committed peer results parse, so a malformed edit fails `make test`, not
// only the long kernel run.
func TestCommittedFiles(t *testing.T) {
	if _, err := ReadLists("../../docs/pjdfstest.md"); err != nil {
		t.Error(err)
	}
	// Both headings must be there as the gate spells them: a renamed heading
	// would leave its list unread, and every entry under it ignored.
	doc, err := os.ReadFile("../../docs/pjdfstest.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{AcceptedHeading, KnownHeading} {
		if !strings.Contains("\n"+string(doc), "\n"+h+"\n") {
			t.Errorf("docs/pjdfstest.md has no line %q, so the gate reads nothing under it", h)
		}
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
