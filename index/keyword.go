package index

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Keyword matching, the seed's rule made precise:
//
//   - Words: the query text is split on Unicode white space (strings.Fields).
//     Leading and trailing punctuation (unicode.IsPunct) is trimmed from each word,
//     so "auth," and "(login)" count as "auth" and "login"; punctuation inside a
//     word stays ("login-failure", "notes/auth", "v1.2"). A word made only of
//     punctuation is kept as written ("/", "..."). Every word counts, repeats too:
//     "auth auth" gives a file containing "auth" two points, as the seed's
//     sum-over-words does.
//   - Case: a word hits a field when it is a substring of it under Unicode simple
//     case folding (the relation strings.EqualFold uses, rune by rune), so "AUTH",
//     "Auth" and "auth" are the same word, and so are "ſ"/"s"/"S" and "K"/"k".
//   - Fields: path, created_by, task and each related app, separately; a word never
//     matches across two fields.
//
// A file scores one point per query word that hits at least one of its fields.

// fold maps s to a canonical case-folded form: every rune becomes the smallest rune
// of its simple-folding orbit. Two strings are equal under fold exactly when
// strings.EqualFold says so, and fold keeps the rune count, so trigrams of the
// folded text are the folded trigrams. Invalid UTF-8 bytes become U+FFFD.
func fold(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		b := []byte(s)
		for i, c := range b {
			if 'a' <= c && c <= 'z' {
				b[i] = c - 'a' + 'A' // the orbit of a-z has A-Z as its smallest member
			}
		}
		return string(b)
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		b.WriteRune(foldRune(r))
	}
	return b.String()
}

func foldRune(r rune) rune {
	m := r
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		if f < m {
			m = f
		}
	}
	return m
}

// queryWords returns the folded query words (see the rule above).
func queryWords(text string) []string {
	fields := strings.Fields(text)
	words := make([]string, 0, len(fields))
	for _, w := range fields {
		if t := strings.TrimFunc(w, unicode.IsPunct); t != "" {
			w = t
		}
		words = append(words, fold(w))
	}
	return words
}

// haystack is a record's folded fields.
func haystack(path string, s *stored) []string {
	h := make([]string, 0, 3+len(s.RelatedApps))
	h = append(h, fold(path))
	if s.CreatedBy != "" {
		h = append(h, fold(s.CreatedBy))
	}
	if s.Task != "" {
		h = append(h, fold(s.Task))
	}
	for _, a := range s.RelatedApps {
		if a != "" {
			h = append(h, fold(a))
		}
	}
	return h
}

// fieldSep joins a record's folded fields into one string for the scan. fold's
// output and the folded query words are valid UTF-8, which never contains the
// byte 0xFF, so no word can match across two fields.
const fieldSep = "\xff"

func joinHay(fields []string) string { return strings.Join(fields, fieldSep) }

// points counts the query words that are a substring of some field of the
// joined, folded haystack.
func points(words []string, joined string) int {
	n := 0
	for _, w := range words {
		if strings.Contains(joined, w) {
			n++
		}
	}
	return n
}

// Bleve candidate generation. Each folded field value is wrapped in two marker
// runes and indexed as the set of its rune trigrams (one Bleve field, one value per
// record field, so no trigram spans two fields). A word of three or more runes can
// only be a substring of a value that holds all of its trigrams; a word of one or
// two runes is a substring of a value exactly when some trigram of the padded value
// contains it (the markers make every value at least three runes long). Bleve thus
// returns a superset of the files with a keyword hit, and the exact rule above is
// applied to each candidate: the answer never depends on Bleve's tokenisation.
const (
	padStart = "\x02"
	padEnd   = "\x03"
	kwField  = "k"
)

func bleveValues(hay []string) []string {
	v := make([]string, len(hay))
	for i, f := range hay {
		v[i] = padStart + f + padEnd
	}
	return v
}

// trigrams returns the distinct rune trigrams of w (len(w) >= 3 runes).
func trigrams(w string) []string {
	r := []rune(w)
	seen := map[string]bool{}
	var out []string
	for i := 0; i+3 <= len(r); i++ {
		t := string(r[i : i+3])
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

// shortWordRegexp matches every trigram that contains w; (?s) so that "." also
// matches a newline inside a file name.
func shortWordRegexp(w string) string { return "(?s).*" + regexp.QuoteMeta(w) + ".*" }
