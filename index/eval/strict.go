package eval

import (
	"path"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"

	"github.com/semfs/semfs/index"
)

// StrictClass is the class of the strict paraphrases (Strict): reported on
// its own, beside the five classes, and never counted twice in "all".
const StrictClass = "para-strict"

// Strict returns, relabelled StrictClass, the paraphrase queries of s that
// share no content word with any file they want (grade 2): no word of the
// query other than an English stop word equals, or stems like, or (with 4
// runes or more, as the best rank's prefix and infix matches) is found inside a word of that
// file's path, creator, task or apps, nor (6 letters or more) is a typo away from one
// (nearWord), nor is a month such a word writes short (monthShort), none has a short form that is such a
// word ("chapter" for ch2: index.ShortForms), and none names its kind
// ("email" for a .eml file: index.KindExtensions) or writes in words a number
// the file holds in digits ("two" for rough_cut_2: index.NumberDigits). The blind set's paraphrases were
// written as plain-language needs and many still share a word with their
// file; this subset is the held-out evaluation's kind of paraphrase, chosen
// by a mechanical test, not by reading the results.
func Strict(s Set) []Judged {
	files := map[string]File{}
	for _, f := range s.Files {
		files[f.Path] = f
	}
	var out []Judged
	for _, q := range s.Queries {
		if q.Class != "paraphrase" {
			continue
		}
		qw := ContentWords(q.Text)
		shared, wanted := false, false
		for p, g := range q.Grades {
			if g != 2 {
				continue
			}
			wanted = true
			f := files[p]
			fields := f.Fields()
			shared = shared || sharesWord(qw, ContentWords(fields)) || namesKind(q.Text, f.Path) || namesNumber(q.Text, fields)
		}
		if wanted && !shared {
			q.Class = StrictClass
			out = append(out, q)
		}
	}
	return out
}

// namesKind reports whether a word of text names the kind of file p is
// ("email" for a .eml file): the best rank's kind forms find p by it.
func namesKind(text, p string) bool {
	ext := strings.ToLower(strings.TrimPrefix(path.Ext(p), "."))
	for _, w := range strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) }) {
		if ext != "" && slices.Contains(index.KindExtensions(w), ext) {
			return true
		}
	}
	return false
}

// namesNumber reports whether a number text writes in words is a number of
// a file's fields (File.Fields) in digits ("two" and rough_cut_2): the best
// rank's number forms find the file by it (index.NumberDigits).
// ContentWords drops such numbers of one digit, so they are looked for here.
func namesNumber(text, fields string) bool {
	nums := strings.FieldsFunc(fields, func(r rune) bool { return !unicode.IsDigit(r) })
	for _, w := range strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) }) {
		if d := index.NumberDigits(w); d != "" && slices.Contains(nums, d) {
			return true
		}
	}
	return false
}

// sharesWord reports whether a word of q or one of its short forms equals a
// word of f, or, with 4 runes or more, is found inside one (as the best
// rank's prefix and infix matches), or, with 6 letters or more, is a typo
// away from one (the best rank's near words: the same first letter, one edit
// under 8 letters, two from 8).
func sharesWord(q, f map[string]bool) bool {
	for w := range q {
		if f[w] || slices.ContainsFunc(index.ShortForms(w), func(s string) bool { return f[s] }) {
			return true
		}
		for v := range f {
			if nearWord(w, v) || monthShort(w, v) || monthShort(v, w) {
				return true
			}
		}
		if utf8.RuneCountInString(w) < 4 {
			continue
		}
		for v := range f {
			if strings.Contains(v, w) {
				return true
			}
		}
	}
	return false
}

// ContentWords splits text into lower-case runs of letters or digits (camelCase
// runs split too), drops English stop words and single runes, and gives each word with its
// Snowball stem and a crude plural or verb suffix strip: the words a person
// would call "the same word", generously, so that a query counted as sharing
// none really shares none.
func ContentWords(text string) map[string]bool {
	stop := analysis.NewTokenMap()
	_ = stop.LoadBytes(en.EnglishStopWords) // a constant list: cannot fail
	stem := en.NewEnglishStemmerFilter()
	out := map[string]bool{}
	var cur []rune
	flush := func() {
		if len(cur) == 0 {
			return
		}
		w := strings.ToLower(string(cur))
		cur = cur[:0]
		if stop[w] || utf8.RuneCountInString(w) < 2 {
			return // "bob's" leaves an "s"
		}
		out[w] = true
		for _, suf := range []string{"ing", "ed", "es", "s"} {
			if len(w) > len(suf)+2 && strings.HasSuffix(w, suf) {
				out[strings.TrimSuffix(w, suf)] = true
			}
		}
		for _, t := range stem.Filter(analysis.TokenStream{{Term: []byte(w)}}) {
			out[string(t.Term)] = true
		}
	}
	var prev rune
	for _, r := range text {
		switch {
		case unicode.IsLetter(r):
			if len(cur) > 0 && (unicode.IsDigit(prev) || unicode.IsUpper(r) && unicode.IsLower(prev)) {
				flush()
			}
			cur = append(cur, r)
		case unicode.IsDigit(r):
			if len(cur) > 0 && !unicode.IsDigit(prev) {
				flush()
			}
			cur = append(cur, r)
		default:
			flush()
		}
		prev = r
	}
	flush()
	return out
}

// nearWord says whether v is a typo away from w as the best rank's near
// words are: w of 6 letters or more, the same first letter, at most one edit
// (Levenshtein) under 8 letters, two from 8.
func nearWord(w, v string) bool {
	a, b := []rune(w), []rune(v)
	if len(a) < 6 || len(b) == 0 || a[0] != b[0] || slices.ContainsFunc(a, func(r rune) bool { return !unicode.IsLetter(r) }) {
		return false
	}
	k := 1
	if len(a) >= 8 {
		k = 2
	}
	if len(a)-len(b) > k || len(b)-len(a) > k {
		return false
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)] <= k
}

// monthShort says whether v is month w written short ("september": sep or
// sept), as the best rank's month forms find it (index.MonthShortForms).
func monthShort(w, v string) bool { return slices.Contains(index.MonthShortForms(w), v) }
