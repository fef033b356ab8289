package index

import (
	"path"
	"strings"
	"unicode"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/custom"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/analysis/token/camelcase"
	"github.com/blevesearch/bleve/v2/analysis/token/lowercase"
	"github.com/blevesearch/bleve/v2/analysis/token/unicodenorm"
	bregexp "github.com/blevesearch/bleve/v2/analysis/tokenizer/regexp"
	"github.com/blevesearch/bleve/v2/mapping"
	unorm "golang.org/x/text/unicode/norm"
)

// Word analysis for the best rank (the seed's rule keeps its own, keyword.go).
//
// A field value is split into runs of letters and runs of digits (so "/", "-",
// "_", "." and every other separator split, and "TP1350" gives "tp", "1350"),
// camelCase runs are split ("DatePicker": "date", "picker"), then NFKC, lower
// case, and the Snowball English stemmer ("deployment" and "deploying" give
// "deploy"). The query text goes through the same analysis, then drops English
// stop words ("to", "the", "or"…) unless nothing else is left. Stop words are
// indexed, so a query made only of them still finds its whole-token matches.
const (
	wordsAnalyzer  = "semfs_words"
	queryAnalyzer  = "semfs_words_query" // wordsAnalyzer with English stop words removed before stemming
	wordsTokenizer = "semfs_letters_digits"
	nfkcFilter     = "semfs_nfkc"

	pathField = "p" // the path's words
	taskField = "t" // the task's words
	appsField = "a" // the creator's and related apps' words
)

// wordFields are the analysed fields the best rank searches, with the weight of
// a match in each (a boost on Bleve's BM25 score) and the name explain uses.
var wordFields = []struct {
	field, name string
	boost       float64
}{
	{taskField, "task", 1.0},
	{pathField, "path", 1.0},
	{appsField, "apps", 0.7},
}

func addWordAnalyzers(im *mapping.IndexMappingImpl) error {
	if err := im.AddCustomTokenizer(wordsTokenizer, map[string]interface{}{
		"type": bregexp.Name, "regexp": `\p{L}[\p{L}\p{M}]*|\p{N}+`,
	}); err != nil {
		return err
	}
	if err := im.AddCustomTokenFilter(nfkcFilter, map[string]interface{}{
		"type": unicodenorm.Name, "form": unicodenorm.NFKC,
	}); err != nil {
		return err
	}
	if err := im.AddCustomAnalyzer(wordsAnalyzer, map[string]interface{}{
		"type":          custom.Name,
		"tokenizer":     wordsTokenizer,
		"token_filters": []string{camelcase.Name, nfkcFilter, lowercase.Name, en.SnowballStemmerName},
	}); err != nil {
		return err
	}
	return im.AddCustomAnalyzer(queryAnalyzer, map[string]interface{}{
		"type":          custom.Name,
		"tokenizer":     wordsTokenizer,
		"token_filters": []string{camelcase.Name, nfkcFilter, lowercase.Name, en.StopName, en.SnowballStemmerName},
	})
}

// stopWords is Bleve's English stop list (read-only after init), for the
// exact-name test of whole query words.
var stopWords = func() analysis.TokenMap {
	m := analysis.NewTokenMap()
	if err := m.LoadBytes(en.EnglishStopWords); err != nil {
		panic(err) // a compiled-in list
	}
	return m
}()

// nameFold is the folding of whole names and query words for the exact-name
// test: NFKC, then the seed's case folding (fold).
func nameFold(s string) string { return fold(unorm.NFKC.String(s)) }

// names returns a record's whole names, folded: the path, each of its segments,
// the basename without its extension, the creator and each related app. A
// query word equal to one of them is an exact-name hit.
func names(p, createdBy string, apps []string) []string {
	var out []string
	seen := map[string]bool{}
	add := func(s string) {
		if s == "" {
			return
		}
		if f := nameFold(s); !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	add(p)
	for _, seg := range strings.Split(p, "/") {
		add(seg)
	}
	base := path.Base(p)
	if ext := path.Ext(base); ext != "" && ext != base {
		add(strings.TrimSuffix(base, ext))
	}
	add(createdBy)
	for _, a := range apps {
		add(a)
	}
	return out
}

// queryTerms is the analysed query: terms are the distinct analysed words that
// carry keyword evidence (stop words dropped unless they are all there is), and
// nameWords the distinct folded whitespace-separated words (punctuation trimmed
// as the seed trims it) plus the whole text, for the exact-name test.
type queryTerms struct {
	terms     []string
	nameWords []string
}

func analyseQuery(all, content analysis.Analyzer, text string) queryTerms {
	var q queryTerms
	distinct := func(a analysis.Analyzer) []string {
		var out []string
		seen := map[string]bool{}
		for _, tok := range a.Analyze([]byte(text)) {
			if t := string(tok.Term); !seen[t] {
				seen[t] = true
				out = append(out, t)
			}
		}
		return out
	}
	if q.terms = distinct(content); len(q.terms) == 0 {
		q.terms = distinct(all) // only stop words: they are the evidence
	}
	seenName := map[string]bool{}
	stopOnly := true
	var words []string
	for _, w := range strings.Fields(text) {
		if t := strings.TrimFunc(w, unicode.IsPunct); t != "" {
			w = t
		}
		words = append(words, w)
		if !stopWords[strings.ToLower(w)] {
			stopOnly = false
		}
	}
	if len(words) > 1 {
		words = append(words, strings.TrimFunc(strings.TrimSpace(text), unicode.IsPunct))
	}
	for _, w := range words {
		if stopWords[strings.ToLower(w)] && !stopOnly {
			continue // "to" equal to a directory named "to" is no evidence
		}
		if f := nameFold(w); f != "" && !seenName[f] {
			seenName[f] = true
			q.nameWords = append(q.nameWords, f)
		}
	}
	return q
}
