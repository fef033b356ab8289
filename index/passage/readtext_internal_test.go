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

// readText and setText give each passage the snippet of its span as read alone (up to
// scanMax's bytes), and the line it starts on, whether its spans are read by one read
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
			for s > 0 && !utf8.RuneStart(text[s]) { // at a rune, as a passage (at a line) does
				s--
			}
			e := min(int64(len(text)), s+1+r.Int64N(3*scanMax))
			h.Spans = append(h.Spans, [2]int64{s, e})
			h.Passages = append(h.Passages, index.Passage{})
			lo, hi = min(lo, s), max(hi, min(e, s+scanMax+utf8.UTFMax))
		}
		if hi-lo > coalesceMax {
			far++
		}
		st := FileState{Size: h.Size, MTime: h.MTime}
		qt := queryTerms("xyz abc")
		bs, ok := readText(bytes.NewReader(text), st, h)
		if !ok {
			t.Fatalf("readText refused a file of the hit's version")
		}
		setText(h, bs, qt)
		for i, sp := range h.Spans {
			alone := text[sp[0]:min(sp[1], sp[0]+scanMax+utf8.UTFMax)]
			for !utf8.Valid(alone) { // the read's last rune cut short
				alone = alone[:len(alone)-1]
			}
			want, skip := snippet(string(alone), qt)
			if h.Passages[i].Text != want || h.Passages[i].Line != skip || !utf8.ValidString(want) {
				t.Fatalf("span %v: %q at line %d, alone %q at %d", sp, h.Passages[i].Text, h.Passages[i].Line, want, skip)
			}
			h.Passages[i].Line = 0
		}
		for _, other := range []FileState{{Size: h.Size + 1, MTime: 42}, {Size: h.Size, MTime: 43}, {Err: errors.New("gone")}} {
			if _, ok := readText(bytes.NewReader(text), other, h); ok {
				t.Fatalf("readText read a file in state %+v for a hit of %d bytes at 42", other, h.Size)
			}
		}
	}
	if far == 0 {
		t.Fatal("no case read its spans one by one")
	}
}
