package passage

import (
	"fmt"
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
	st := FileState{Size: 3, MTime: 1, CTime: 2, Ino: 4}
	h := &index.ContentHit{Path: "a", Size: 3, MTime: 1, CTime: 2, Ino: 4, Spans: [][2]int64{{0, 3}}}

	g := x.generation()
	x.forget([]content.Change{{Op: content.Written, Path: "a"}})
	x.put(h, st, []string{"old"}, g)
	if _, ok := x.get(h); ok {
		t.Fatal("bytes read across a report of the file were kept")
	}
	g = x.generation()
	x.forget([]content.Change{{Op: content.Written, Path: "elsewhere"}})
	x.put(h, st, []string{"old"}, g)
	if _, ok := x.get(h); ok {
		t.Fatal("bytes read across a report were kept")
	}

	x.put(h, st, []string{"new"}, x.generation())
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

// A source that gives no ctime keeps nothing (no version to tell another
// from); the files and bytes kept stay within textsFiles and textsMax.
func TestTextsKeepOnlyKnownVersionsWithinBounds(t *testing.T) {
	var x texts
	h := &index.ContentHit{Path: "a", Size: 3, MTime: 1, Spans: [][2]int64{{0, 3}}}
	x.put(h, FileState{Size: 3, MTime: 1}, []string{"abc"}, x.generation())
	if _, ok := x.get(h); ok || len(x.m) != 0 {
		t.Fatal("bytes kept for a file of no known version")
	}
	big := string(make([]byte, textsMax/4))
	for i := range 2 * textsFiles {
		h := &index.ContentHit{Path: fmt.Sprint(i), Size: 1, MTime: 1, CTime: 1, Spans: [][2]int64{{0, 1}, {1, 2}}}
		b := "x"
		if i%100 == 0 {
			b = big
		}
		x.put(h, FileState{Size: 1, MTime: 1, CTime: 1}, []string{b, "y"}, x.generation())
		if len(x.m) > textsFiles || x.bytes > textsMax {
			t.Fatalf("after %d files: %d files, %d bytes kept", i+1, len(x.m), x.bytes)
		}
		if _, ok := x.get(h); !ok {
			t.Fatalf("file %d, just read, not kept", i)
		}
	}
	n := 0
	for _, f := range x.m {
		n += f.bytes
	}
	if n != x.bytes {
		t.Fatalf("%d bytes counted, %d kept", x.bytes, n)
	}
}
