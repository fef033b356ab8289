package passage

import (
	"strings"
	"unicode"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/snowballstem"
	"github.com/blevesearch/snowballstem/english"
	unorm "golang.org/x/text/unicode/norm"
)

// Words are analysed as the best rank analyses tags (index/words.go): runs of
// letters and runs of digits, NFKC, lower case, the Snowball English stemmer;
// camelCase is not split (contents are prose and code, where it would mostly
// add noise). English stop words are not indexed.

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
func terms(text string, f func(string)) {
	start := -1
	kind := 0 // 1 letters, 2 digits
	emit := func(end int) {
		if start < 0 {
			return
		}
		w := text[start:end]
		start = -1
		if len(w) > maxTermLen {
			return
		}
		if kind == 1 {
			w = strings.ToLower(unorm.NFKC.String(w))
			if _, stop := stopWords[w]; stop {
				return
			}
			env := snowballstem.NewEnv(w)
			english.Stem(env)
			w = env.Current()
		}
		f(w)
	}
	for i, r := range text {
		k := 0
		switch {
		case unicode.IsLetter(r) || unicode.Is(unicode.M, r) && kind == 1:
			k = 1
		case unicode.IsDigit(r):
			k = 2
		}
		if k != kind || k == 0 {
			emit(i)
			if k != 0 {
				start = i
			}
			kind = k
		}
	}
	emit(len(text))
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
