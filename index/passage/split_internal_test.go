package passage

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"
)

// countWords counts what a plain reading of the text rune by rune through
// the Unicode tables counts: runs of letters or digits, on generated text of
// ASCII, other scripts, marks and invalid UTF-8.
func TestCountWordsCountsTheRuns(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 13))
	alphabet := []string{"a", "Z", "q", "7", "0", " ", "\t", ".", "-", "_", "é", "ß", "Ω", "中", "\u0301", "٣", "Ⅻ", "\xff", "\xe2\x82", "𝄞", "ﬁ", "$", "\x7f", "\x00"}
	plain := func(l []byte) int {
		n, in := 0, false
		for len(l) > 0 {
			r, size := utf8.DecodeRune(l)
			l = l[size:]
			w := unicode.IsLetter(r) || unicode.IsDigit(r)
			if w && !in {
				n++
			}
			in = w
		}
		return n
	}
	for c := range 20000 {
		var b strings.Builder
		for range r.IntN(40) {
			b.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		l := []byte(b.String())
		if got, want := countWords(l), plain(l); got != want {
			t.Fatalf("case %d: %q: %d words, want %d", c, l, got, want)
		}
	}
}

// benchTexts are a new file's 4 KiB as the benchmarks' writers make them
// (one letter repeated) and 4 KiB of prose (this package's doc).
func benchTexts(b *testing.B) map[string][]byte {
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		b.Fatal(err)
	}
	for len(doc) < 4096 {
		doc = append(doc, doc...)
	}
	return map[string][]byte{"prose": doc[:4096], "one-letter": []byte(strings.Repeat("x", 4096))}
}

// BenchmarkSplit is what the passage worker spends cutting a new 4 KiB file
// into passages.
func BenchmarkSplit(b *testing.B) {
	for name, text := range benchTexts(b) {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				split(text)
			}
		})
	}
}

// BenchmarkCutText is what the passage worker spends splitting and analysing
// a new 4 KiB file (its words' analyses remembered from the files before).
func BenchmarkCutText(b *testing.B) {
	for name, text := range benchTexts(b) {
		b.Run(name, func(b *testing.B) {
			var c cutter
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				c.cutText(text)
			}
		})
	}
}

// The worker's remembered analyses give what terms gives, word for word,
// through the memo's refills: generated text of inflected words, stop words,
// capitals, digits, non-ASCII and over-long runs, more distinct words than
// the memo holds.
func TestWordMemoIsTerms(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 14))
	stems := []string{"run", "index", "the", "and", "Connect", "RELATE", "happy", "Ærø", "ﬁle", "naïve", "42", "x"}
	suffixes := []string{"", "s", "ing", "ed", "ness", "ly", "ies", "ation"}
	var memo wordMemo
	refills, last := 0, 0
	for c := 0; c < 300; c++ {
		var sb strings.Builder
		for range 1 + r.IntN(2000) {
			switch r.IntN(4) {
			case 0:
				for range 4 + r.IntN(6) { // most likely a new word: refills the memo
					sb.WriteByte(byte('a' + r.IntN(26)))
				}
				fmt.Fprint(&sb, r.IntN(100))
			case 1:
				sb.WriteString(strings.Repeat("long", 1+r.IntN(15)))
			default:
				sb.WriteString(stems[r.IntN(len(stems))] + suffixes[r.IntN(len(suffixes))])
			}
			sb.WriteString([]string{" ", ", ", "\n", "-", "."}[r.IntN(5)])
		}
		text := sb.String()
		var want, got []string
		terms(text, func(t string) { want = append(want, t) })
		memo.terms(text, func(t string) { got = append(got, t) })
		if !slices.Equal(got, want) {
			t.Fatalf("case %d: %q: %q, want %q", c, text, got, want)
		}
		if len(memo.m) < last {
			refills++
		}
		last = len(memo.m)
	}
	if refills == 0 {
		t.Fatalf("the memo was never refilled: the test reached %d words", len(memo.m))
	}
	if len(memo.m) > memoMax {
		t.Fatalf("the memo holds %d words, more than %d", len(memo.m), memoMax)
	}
}
