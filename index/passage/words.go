package passage

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/char/asciifolding"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/snowballstem"
	"github.com/blevesearch/snowballstem/english"
	unorm "golang.org/x/text/unicode/norm"
)

// Words are analysed as the best rank analyses tags (index/words.go): runs of
// letters and runs of digits, NFKC, letters with a Latin base folded to ASCII
// ("café" and "cafe" are one word), lower case, the Snowball English stemmer;
// camelCase is not split (contents are prose and code, where it would mostly
// add noise). English stop words are not indexed. wordsVersion numbers this
// analysis in the save file: an index saved under an older one reads its
// files again (store.go).
const wordsVersion = 1 // 1: letters folded to ASCII

// asciiFold is Bleve's ASCII folding (Lucene's table), as the tag words use
// it; stateless.
var asciiFold = asciifolding.New()

// stopWords is Bleve's English stop list, read-only after init.
var stopWords = func() analysis.TokenMap {
	m := analysis.NewTokenMap()
	if err := m.LoadBytes(en.EnglishStopWords); err != nil {
		panic(err)
	}
	return m
}()

// maxTermLen drops runs longer than this (base64, hashes): never a query word.
const maxTermLen = 40

// terms calls f with each analysed word of text, in order, stop words
// dropped.
func terms(text string, f func(string)) { (*wordMemo)(nil).terms(text, f) }

// memoMax bounds a wordMemo: about 64k words and their terms, a few MiB. A
// file's words follow Zipf's law, so most of any file's words are already in
// it; when full it starts again.
const memoMax = 1 << 16

// wordMemo remembers runs of letters' analyses: NFKC, lower case and the
// stemmer cost about 0.5 µs a word, a lookup tens of ns. One goroutine owns
// it (the worker); a nil *wordMemo remembers nothing.
type wordMemo struct {
	m map[string]memoTerm
}

type memoTerm struct {
	t  string
	ok bool
}

// terms is the package's terms, with m's analyses.
func (m *wordMemo) terms(text string, f func(string)) {
	words(text, func(w string, kind, _ int) bool {
		if t, ok := m.analyse(w, kind); ok {
			f(t)
		}
		return true
	})
}

// analyse is the package's analyse, remembered for runs of letters.
func (m *wordMemo) analyse(w string, kind int) (string, bool) {
	if m == nil || kind != 1 || len(w) > maxTermLen {
		return analyse(w, kind)
	}
	if a, seen := m.m[w]; seen {
		return a.t, a.ok
	}
	t, ok := analyse(w, kind)
	if m.m == nil || len(m.m) >= memoMax {
		m.m = make(map[string]memoTerm)
	}
	// Copies: a word cut from the text would keep the text alive.
	k, kt := strings.Clone(w), t
	if t == w {
		kt = k
	} else {
		kt = strings.Clone(t)
	}
	m.m[k] = memoTerm{kt, ok}
	return t, ok
}

// words calls f with each run of letters (kind 1) or of digits (kind 2) of
// text, in order, and its byte offset, until f returns false.
func words(text string, f func(w string, kind, at int) bool) {
	start := -1
	kind := 0 // 1 letters, 2 digits
	more := true
	emit := func(end int) {
		if start >= 0 {
			more = f(text[start:end], kind, start)
			start = -1
		}
	}
	for i := 0; i < len(text) && more; {
		// ASCII without decoding or the Unicode tables: most text is.
		c, size, k := text[i], 1, 0
		switch {
		case 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z':
			k = 1
		case '0' <= c && c <= '9':
			k = 2
		case c >= utf8.RuneSelf:
			var r rune
			r, size = utf8.DecodeRuneInString(text[i:])
			switch {
			case unicode.IsLetter(r) || unicode.Is(unicode.M, r) && kind == 1:
				k = 1
			case unicode.IsDigit(r):
				k = 2
			}
		}
		if k != kind || k == 0 {
			emit(i)
			if k != 0 {
				start = i
			}
			kind = k
		}
		i += size
		if size == 1 && k != 0 {
			// The rest of an ASCII run at once: a file's bytes pass here.
			for i < len(text) && asciiKind(text[i]) == k {
				i++
			}
		}
	}
	if more {
		emit(len(text))
	}
}

// asciiKind is the ASCII byte c's kind of run as words reads it: 1 a letter,
// 2 a digit, 0 neither (and for every byte of a longer UTF-8 sequence).
func asciiKind(c byte) int {
	switch {
	case (c|0x20)-'a' < 26:
		return 1
	case c-'0' < 10:
		return 2
	}
	return 0
}

// analyse is the word w (a run of kind, as words gives it) as indexed: a
// run of letters NFKC, folded to ASCII, lower case and stemmed; false for a
// stop word or a run longer than maxTermLen.
func analyse(w string, kind int) (string, bool) {
	if len(w) > maxTermLen {
		return "", false
	}
	if kind != 1 {
		return w, true
	}
	for i := 0; i < len(w); i++ {
		if w[i] >= utf8.RuneSelf { // ASCII is its own NFKC and folding
			w = string(asciiFold.Filter([]byte(unorm.NFKC.String(w))))
			break
		}
	}
	w = strings.ToLower(w)
	if _, stop := stopWords[w]; stop {
		return "", false
	}
	env := snowballstem.NewEnv(w)
	english.Stem(env)
	return env.Current(), true
}

// queryTerms is the query's distinct analysed words, in order.
func queryTerms(text string) []string {
	var out []string
	seen := map[string]bool{}
	terms(text, func(t string) {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	})
	return out
}
