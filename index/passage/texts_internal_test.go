package passage

import (
	"testing"

	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/index/content"
)

// Bytes read while a change was reported are not kept, whichever path the
// report named (it may have come for this file before its bytes were stored,
// and forget then had nothing to drop); bytes read after it are, and a later
// report of the file drops them.
func TestTextsKeepNothingReadAcrossAReport(t *testing.T) {
	var x texts
	v := version{size: 3, mtime: 1, ctime: 2, ino: 4}
	h := &index.ContentHit{Path: "a", Size: 3, MTime: 1, CTime: 2, Ino: 4, Spans: [][2]int64{{0, 3}}}

	g := x.generation()
	x.forget([]content.Change{{Op: content.Written, Path: "a"}})
	x.put("a", v, 0, "old", g)
	if _, ok := x.get(h); ok {
		t.Fatal("bytes read across a report of the file were kept")
	}
	g = x.generation()
	x.forget([]content.Change{{Op: content.Written, Path: "elsewhere"}})
	x.put("a", v, 0, "old", g)
	if _, ok := x.get(h); ok {
		t.Fatal("bytes read across a report were kept")
	}

	x.put("a", v, 0, "new", x.generation())
	if b, ok := x.get(h); !ok || b[0] != "new" {
		t.Fatalf("bytes read after the report: %q, %v", b, ok)
	}
	other := *h
	other.CTime++
	if _, ok := x.get(&other); ok {
		t.Fatal("bytes of one version shown for another")
	}
	x.forget([]content.Change{{Op: content.Written, Path: "a"}})
	if _, ok := x.get(h); ok {
		t.Fatal("a report of the file left its bytes")
	}
	if x.bytes != 0 || len(x.m) != 0 {
		t.Fatalf("after the last report: %d bytes in %d files", x.bytes, len(x.m))
	}
}
