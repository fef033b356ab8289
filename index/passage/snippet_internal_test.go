package passage

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"
)

// snippet, on generated passages of inflected, mixed-case and non-ASCII
// words, against a brute-force reading of the same passage (every word
// analysed, every window tried):
//   - a passage of at most snippetMax bytes is whole;
//   - else the snippet is the passage's bytes from a word or a line, at most
//     snippetMax of them, valid UTF-8, and its line offset counts the lines
//     before it;
//   - it starts at a passage's start when no query word is there, and else
//     holds the first word of a window of snippetMax-lead bytes from a query
//     word that holds the most distinct query words, from the first word of
//     the lead bytes before it unless it starts a line.
func TestSnippetShowsTheDensestPlace(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 11))
	vocab := strings.Fields("run running runs Runner happy happiness happily Apple APPLES apple's über Über ÜBER naïve café cafés 2024 x86 the and of token tokens Tokenized expire expired EXPIRES login logins ﬁle file files " +
		"lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua")
	seps := []string{" ", " ", " ", " ", ", ", ". ", "\n", "\t", "  ", "\n\n", "—", "/"}
	for n := range 3000 {
		var b strings.Builder
		size := r.IntN(4000)
		for b.Len() < size {
			b.WriteString(vocab[r.IntN(len(vocab))])
			b.WriteString(seps[r.IntN(len(seps))])
		}
		text := b.String()
		var q []string
		for range 1 + r.IntN(4) {
			q = append(q, vocab[r.IntN(len(vocab))])
		}
		qt := queryTerms(strings.Join(q, " "))
		got, skip := snippet(text, qt)
		trimmed := strings.TrimRight(text, "\n")
		if len(trimmed) <= snippetMax {
			if got != trimmed || skip != 0 {
				t.Fatalf("case %d: a passage of %d bytes became %q at +%d", n, len(trimmed), got, skip)
			}
			continue
		}
		// Where the snippet starts: its text's offset at the line it says.
		lineStarts := []int{0}
		for i := range len(trimmed) {
			if trimmed[i] == '\n' {
				lineStarts = append(lineStarts, i+1)
			}
		}
		if skip < 0 || skip >= len(lineStarts) {
			t.Fatalf("case %d: line offset %d of %d lines", n, skip, len(lineStarts))
		}
		ls := lineStarts[skip]
		at := ls + strings.Index(trimmed[ls:], got)
		if got == "" || len(got) > snippetMax || !utf8.ValidString(got) || at < ls || skip+1 < len(lineStarts) && at >= lineStarts[skip+1] ||
			at > 0 && !strings.ContainsRune(" \t\n", rune(trimmed[at-1])) {
			t.Fatalf("case %d: %q at line +%d is not %d bytes or fewer of the passage from a word of that line", n, got, skip, snippetMax)
		}
		// The brute force: every word analysed, every window from a query
		// word tried.
		type occ struct{ at, end, term int }
		var occs []occ
		words(trimmed, func(w string, kind, at int) bool {
			if a, ok := analyse(w, kind); ok {
				for i, t := range qt {
					if a == t {
						occs = append(occs, occ{at, at + len(w), i})
					}
				}
			}
			return true
		})
		if len(occs) == 0 {
			if at != 0 {
				t.Fatalf("case %d: no query word %v in the passage, yet the snippet starts at %d", n, qt, at)
			}
			continue
		}
		distinct := func(from int) int {
			seen := map[int]bool{}
			for _, o := range occs {
				if o.at >= from && o.at < from+snippetMax-lead {
					seen[o.term] = true
				}
			}
			return len(seen)
		}
		best := 0
		for _, o := range occs {
			best = max(best, distinct(o.at))
		}
		ok := false
		for _, o := range occs {
			if distinct(o.at) == best && o.at >= at && o.end <= at+len(got) {
				ok = true
				// Unless it starts its line, it starts at the first word of
				// the lead bytes before it (a space or tab before it).
				if at > 0 && trimmed[at-1] != '\n' && (at < o.at-lead || strings.ContainsAny(trimmed[max(0, o.at-lead):at-1], " \t")) {
					t.Fatalf("case %d: query %v: the snippet %q starts %d bytes before its first query word, not at the first word of the %d before", n, q, got, o.at-at, lead)
				}
				break
			}
		}
		if !ok {
			t.Fatalf("case %d: query %v: the snippet at %d (%q) holds no first word of a window of %d distinct query words", n, q, at, got, best)
		}
	}
}

// BenchmarkSnippet is one long passage's snippet (16 KiB of one line, as the
// mixed load's seed files are) for a query of three words.
func BenchmarkSnippet(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	vocab := strings.Fields("login token expired session cache quarter revenue report draft invoice budget kernel driver network latency deploy release notes editor meeting agenda schedule backup restore archive sensor metric alert dashboard")
	var s strings.Builder
	for s.Len() < 16<<10 {
		s.WriteString(vocab[r.IntN(len(vocab))] + " ")
	}
	text := s.String()[:16<<10]
	qt := queryTerms("budget kernel meeting")
	b.SetBytes(int64(len(text)))
	for i := 0; i < b.N; i++ {
		snippet(text, qt)
	}
}

// words finds the runs of letters and of digits that a plain reading of the
// text rune by rune through the Unicode tables finds, on generated text of
// ASCII, Latin, Greek, CJK, combining marks, digits of several scripts and
// invalid UTF-8.
func TestWordsAreTheRuns(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 12))
	alphabet := []string{"a", "Z", "q", "7", "0", " ", "\n", ".", "-", "_", "é", "ß", "Ω", "λ", "中", "文", "\u0301", "\u0308", "٣", "৭", "Ⅻ", "\xff", "\xe2\x82", "𝄞", "ﬁ", "$"}
	type run struct {
		w        string
		kind, at int
	}
	plain := func(text string) (out []run) {
		start, kind := -1, 0
		for i, r := range text {
			k := 0
			switch {
			case unicode.IsLetter(r) || unicode.Is(unicode.M, r) && kind == 1:
				k = 1
			case unicode.IsDigit(r):
				k = 2
			}
			if k != kind || k == 0 {
				if start >= 0 {
					out = append(out, run{text[start:i], kind, start})
					start = -1
				}
				if k != 0 {
					start = i
				}
				kind = k
			}
		}
		if start >= 0 {
			out = append(out, run{text[start:], kind, start})
		}
		return out
	}
	for n := range 5000 {
		var b strings.Builder
		for range r.IntN(60) {
			b.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		text := b.String()
		var got []run
		words(text, func(w string, kind, at int) bool {
			got = append(got, run{w, kind, at})
			return true
		})
		if want := plain(text); !slices.Equal(got, want) {
			t.Fatalf("case %d: %q: %v, want %v", n, text, got, want)
		}
	}
}
