package passage

import (
	"strings"
	"unicode/utf8"
)

// An answer's passage text is a snippet: at most snippetMax bytes of the
// passage, the whole passage when it is shorter, else the part where the
// query's words are densest (its start when none is there: a passage found
// by meaning alone), beginning at a line or a word and ending at a line, a
// word or a rune. It is the file's own bytes, and its Line is the line it
// begins on. The whole passage (2,000 bytes an answer's passage until
// 2026-12-03) cost the mixed load's queries more than their search: the
// answers were 22 KB for ten files of long lines, all of it encoded by the
// daemon and decoded by every client.
const (
	snippetMax = 480
	// scanMax bounds the bytes of a passage read and searched for the
	// query's words (a passage of one long line can be megabytes).
	scanMax = 8 << 10
	// lead is the room kept before the densest place's first word when it
	// does not start near a line.
	lead = snippetMax / 8
)

// snippet cuts text, a passage's bytes from its start, to the snippet for
// the query's analysed words qt, and says how many lines of text come
// before it.
func snippet(text string, qt []string) (string, int) {
	text = strings.TrimRight(text, "\n")
	if len(text) <= snippetMax {
		return text, 0
	}
	start := densest(text, qt)
	if start > 0 {
		ls := strings.LastIndexByte(text[:start], '\n') + 1
		if start-ls <= snippetMax/4 {
			start = ls
		} else if i := strings.IndexAny(text[start-lead:start], " \t"); i >= 0 {
			start = start - lead + i + 1 // the first word starting in the lead
		}
	}
	return clip(text[start:], snippetMax), strings.Count(text[:start], "\n")
}

// match is one occurrence of a query word in a passage: its byte offset and
// which of the query's words it is.
type match struct{ at, term int }

// densest is the offset of a query word that begins a window of
// snippetMax-lead bytes holding the most distinct query words, or 0 when
// text holds none. One pass over the words: the matches from ms[i] on are
// the last one's window (a window from a match holds the words of the window
// ending at its own last match, and the other way round); it stops at the
// first window holding every query word.
func densest(text string, qt []string) int {
	if len(qt) == 0 {
		return 0
	}
	var ms []match
	is := map[string]int{} // a candidate's answer from wordIs: passages repeat their words
	count := make([]int, len(qt))
	best, bestAt, distinct, i := 0, 0, 0, 0
	words(text, func(w string, kind, at int) bool {
		if !maybeQueryWord(w, qt) {
			return true
		}
		t, seen := is[w]
		if !seen {
			t = wordIs(w, kind, qt)
			is[w] = t
		}
		if t < 0 {
			return true
		}
		ms = append(ms, match{at, t})
		if count[t]++; count[t] == 1 {
			distinct++
		}
		for ; ms[i].at <= at-(snippetMax-lead); i++ {
			if count[ms[i].term]--; count[ms[i].term] == 0 {
				distinct--
			}
		}
		if distinct > best {
			best, bestAt = distinct, ms[i].at
		}
		return distinct < len(qt)
	})
	return bestAt
}

// maybeQueryWord says whether the word w may be one of the query's analysed
// words qt: most words of a passage are none, and this spares them the
// analysis (NFKC, lower case, the stemmer). It may when its first bytes,
// lower-cased, are a query word's (a stem keeps its word's first three
// letters but in a few irregular forms the stemmer lists, dying → die,
// which a snippet then does not look for) or it does not begin in ASCII.
func maybeQueryWord(w string, qt []string) bool {
	if w[0] >= utf8.RuneSelf {
		return true
	}
	for _, t := range qt {
		if len(w) >= len(t)-2 && asciiFoldPrefix(w, t[:min(3, len(t), len(w))]) {
			return true
		}
	}
	return false
}

// wordIs says which of the query's analysed words qt the word w (a run of
// kind, as words gives it) is, or -1.
func wordIs(w string, kind int, qt []string) int {
	a, ok := analyse(w, kind)
	if !ok {
		return -1
	}
	for i, t := range qt {
		if t == a {
			return i
		}
	}
	return -1
}

// asciiFoldPrefix says whether w may begin with p (lower case): ASCII
// letters compared without case, and a byte of a non-ASCII rune taken to
// match (NFKC and the folding to ASCII may make "naïve" "naiv", "ﬁle" "file";
// no rune changes a letter before it).
func asciiFoldPrefix(w, p string) bool {
	if len(w) < len(p) {
		return false
	}
	for i := 0; i < len(p); i++ {
		c := w[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != p[i] {
			return c >= utf8.RuneSelf
		}
	}
	return true
}

// wholeRunes is b without a rune cut short at its end (a read that stopped
// before its passage's end may end inside one).
func wholeRunes(b []byte) []byte {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return b[:i]
			}
			break
		}
	}
	return b
}

// clip trims s to at most max bytes: at its last line end in the second
// half, else its last space or tab there, else at a rune.
func clip(s string, max int) string {
	s = strings.TrimRight(s, "\n")
	if len(s) <= max {
		return s
	}
	s = s[:max]
	if i := strings.LastIndexByte(s, '\n'); i > max/2 {
		return s[:i]
	}
	if i := strings.LastIndexAny(s, " \t"); i > max/2 {
		return s[:i]
	}
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}
