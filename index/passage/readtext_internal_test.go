package passage

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/semfs/semfs/index"
)

// readText gives each passage the text of its span as read alone (up to
// maxText's bytes, cut by clip), whether its spans are read by one read
// (close together) or one by one (far apart), on generated files of
// multi-byte text; and a file whose state differs from the hit's (size,
// mtime, or an error) gives none.
func TestReadTextIsEachSpanAlone(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 7))
	runes := []rune("abc xyz\né€𝄞")
	far := 0
	for range 500 {
		var b bytes.Buffer
		size := 1 + r.IntN(300<<10)
		for b.Len() < size {
			b.WriteRune(runes[r.IntN(len(runes))])
		}
		text := b.Bytes()
		h := &index.ContentHit{Size: int64(len(text)), MTime: 42}
		lo, hi := int64(len(text)), int64(0)
		for range 1 + r.IntN(3) {
			s := r.Int64N(int64(len(text)))
			e := min(int64(len(text)), s+1+r.Int64N(6000))
			h.Spans = append(h.Spans, [2]int64{s, e})
			h.Passages = append(h.Passages, index.Passage{})
			lo, hi = min(lo, s), max(hi, min(e, s+maxText+utf8.UTFMax))
		}
		if hi-lo > coalesceMax {
			far++
		}
		st := FileState{Size: h.Size, MTime: h.MTime}
		if !readText(bytes.NewReader(text), st, h) {
			t.Fatalf("readText refused a file of the hit's version")
		}
		for i, sp := range h.Spans {
			want := clip(string(text[sp[0]:min(sp[1], sp[0]+maxText+utf8.UTFMax)]))
			if h.Passages[i].Text != want {
				t.Fatalf("span %v: %q, alone %q", sp, h.Passages[i].Text, want)
			}
		}
		for _, other := range []FileState{{Size: h.Size + 1, MTime: 42}, {Size: h.Size, MTime: 43}, {Err: errors.New("gone")}} {
			if readText(bytes.NewReader(text), other, h) {
				t.Fatalf("readText read a file in state %+v for a hit of %d bytes at 42", other, h.Size)
			}
		}
	}
	if far == 0 {
		t.Fatal("no case read its spans one by one")
	}
}
