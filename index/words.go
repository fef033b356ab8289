package index

import (
	"bytes"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/custom"
	"github.com/blevesearch/bleve/v2/analysis/char/asciifolding"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/analysis/token/camelcase"
	"github.com/blevesearch/bleve/v2/analysis/token/lowercase"
	"github.com/blevesearch/bleve/v2/analysis/token/unicodenorm"
	bregexp "github.com/blevesearch/bleve/v2/analysis/tokenizer/regexp"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/registry"
	unorm "golang.org/x/text/unicode/norm"
)

// Word analysis for the best rank (the seed's rule keeps its own, keyword.go).
//
// A field value is split into runs of letters and runs of digits (so "/", "-",
// "_", "." and every other separator split, and "TP1350" gives "tp", "1350"),
// then NFKC (first: a decomposed "ö", as macOS writes names, is then one
// letter, not a camelCase break), camelCase runs are split ("DatePicker":
// "date", "picker"; the indexed fields keep the whole as well: camelWhole),
// letters with a Latin base are folded to ASCII ("Östra"
// and "ostra", "café" and "cafe": names are often written without the accents
// a user types, or the other way round), lower case, and the Snowball English
// stemmer ("deployment" and "deploying" give "deploy"). The query text goes
// through the same analysis, then drops English stop words ("to", "the",
// "or"…) unless nothing else is left. Stop words are indexed, so a query made
// only of them still finds its whole-token matches.
const (
	wordsAnalyzer  = "semfs_words"       // the indexed fields': camelCase words kept whole too
	splitAnalyzer  = "semfs_words_split" // a query's: camelCase split only (the whole is its group's literal)
	queryAnalyzer  = "semfs_words_query" // splitAnalyzer with English stop words removed before stemming
	wordsTokenizer = "semfs_letters_digits"
	nfkcFilter     = "semfs_nfkc"
	asciiFilter    = "semfs_ascii"          // asciiFold's registered name
	camelFilter    = "semfs_camel_whole"    // camelWhole's registered name
	pluralFilter   = "semfs_acronym_plural" // acronymPlural's registered name

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
		"token_filters": []string{nfkcFilter, pluralFilter, camelFilter, asciiFilter, lowercase.Name, en.SnowballStemmerName},
	}); err != nil {
		return err
	}
	if err := im.AddCustomAnalyzer(splitAnalyzer, map[string]interface{}{
		"type":          custom.Name,
		"tokenizer":     wordsTokenizer,
		"token_filters": []string{nfkcFilter, pluralFilter, camelcase.Name, asciiFilter, lowercase.Name, en.SnowballStemmerName},
	}); err != nil {
		return err
	}
	return im.AddCustomAnalyzer(queryAnalyzer, map[string]interface{}{
		"type":          custom.Name,
		"tokenizer":     wordsTokenizer,
		"token_filters": []string{nfkcFilter, pluralFilter, camelcase.Name, asciiFilter, lowercase.Name, en.StopName, en.SnowballStemmerName},
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

// names returns a record's own names, folded: its full path, its basename with
// and without its extension (the path's names), then its creator and each
// related app (its apps' names), each name once in its group. A query word
// equal to one of them is an exact-name hit. Directory names are not names of
// the file: a directory's word is a word match like any other (weighted by its
// rarity), so that one folder name shared by a handful of files cannot outrank
// a file matching more of the query (issue 27).
func names(p, createdBy string, apps []string) []string {
	ns, _ := nameParts(p, createdBy, apps)
	return ns
}

// nameParts is names, and how many of them are the path's.
func nameParts(p, createdBy string, apps []string) (ns []string, own int) {
	from := 0
	add := func(s string) {
		if s == "" {
			return
		}
		if f := nameFold(s); !slices.Contains(ns[from:], f) {
			ns = append(ns, f)
		}
	}
	add(p)
	base := path.Base(p)
	add(base)
	if ext := path.Ext(base); ext != "" && ext != base {
		add(strings.TrimSuffix(base, ext))
	}
	own, from = len(ns), len(ns)
	add(createdBy)
	for _, a := range apps {
		add(a)
	}
	return ns, own
}

// queryTerms is the analysed query: terms are the distinct analysed words that
// carry keyword evidence (stop words dropped unless they are all there is), and
// nameWords the distinct folded whitespace-separated words (punctuation trimmed
// as the seed trims it) plus the whole text, for the exact-name test.
type queryTerms struct {
	terms     []string
	nameWords []string
	groups    []termGroup
	// forms are the other tokens a term is also found as (several tokens,
	// space-separated: all of them in one field): a month's dated forms
	// (monthForms), the join of two adjacent words ("time zone":
	// "timezone"), a kind's extensions (kindForms), a short form
	// (shortForms: "production": "prod"), "year" in "this year"
	// or "last year" as the year it names (relativeYears), a season in
	// "last fall" or "autumn 2024" as its months of that year, "month" in
	// "last month" as that month (relativePeriods: "2025 09",
	// "oct 25"…), an ordinal as a version ("second": "v 2") and a number word as its
	// digits ("three": "3").
	forms map[string][]string
	// monthNumber is, for a month's term, the two-digit number among its
	// forms ("02" for februari), which counts only where a date puts a
	// month (datedMonth).
	monthNumber map[string]string
	// padNumber is, for a one-digit term, its zero padding among its forms
	// ("09" for 9), which counts only where no date or time puts it
	// (undatedNumber): "ep 9" is ep09, not 2025-09-15.
	padNumber map[string]string
	// written is, for a term, the query's words as written (folded) that
	// analyse to it alone: the infix test looks for them too, since a stem
	// may not be inside the word it stems ("policy": polici, not in
	// Parkeringspolicy).
	written map[string][]string
	// dayOf is, for a number the query puts beside a month ("may 1", "3
	// may"), that day as a date writes it, month and day ("0501"): held by
	// a compact date (20260501) and, as the form "05 01", a date with
	// separators (2026-05-01).
	dayOf map[string]string
	// qualifies[i] says terms[i] qualifies the others rather than selects:
	// "year" in "this year", a season in "last fall" and an ordinal, which
	// only order the files other words found.
	qualifies []bool
}

// termGroup is a query word that analyses to several terms ("v2.2.1",
// "invoice_8841", "tokenRefresh"): terms are their indices in
// queryTerms.terms, literal the word folded as the seed folds (fold), to test
// whether a file holds it as written, and also the way names write it when
// that differs (a day's eight digits: compactDay), and spellings, the
// literal with its separators written another way (respell).
type termGroup struct {
	literal   string
	also      string
	spellings []string
	terms     []int
}

// separators are the characters names put between the parts of one word
// ("gstr-3b", "e_ticket", "v2.2.1").
const separators = "-_. "

// respell returns the literal w (folded, of several tokens) with every run of
// its separators written as each other separator, and without them where no
// separator stands between two digits: "gstr-3b" is GSTR3B and gstr_3b in
// names, "e-ticket" eticket; "v2.2.1" is v2_2_1 but not v221, another
// number. nil when w has no separator.
func respell(w string) []string {
	parts := strings.FieldsFunc(w, func(r rune) bool { return strings.ContainsRune(separators, r) })
	if len(parts) < 2 {
		return nil
	}
	digits := false
	for i := 1; i < len(parts); i++ {
		a, b := parts[i-1], parts[i]
		if isDigit(a[len(a)-1]) && isDigit(b[0]) {
			digits = true
		}
	}
	var out []string
	for _, sep := range append([]string{""}, strings.Split(separators, "")...) {
		if sep == "" && digits {
			continue
		}
		if v := strings.Join(parts, sep); v != w {
			out = append(out, v)
		}
	}
	return out
}

func analyseQuery(all, content analysis.Analyzer, text string, now time.Time) queryTerms {
	var q queryTerms
	bare := withoutClitics(text)
	distinct := func(a analysis.Analyzer) []string {
		var out []string
		seen := map[string]bool{}
		for _, tok := range a.Analyze([]byte(bare)) {
			if t := string(tok.Term); !seen[t] {
				seen[t] = true
				out = append(out, t)
			}
		}
		return out
	}
	used := content
	if q.terms = distinct(content); len(q.terms) == 0 {
		used = all
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
	for _, w := range words[:len(strings.Fields(text))] {
		var g termGroup
		toks := used.Analyze([]byte(w))
		for _, tok := range toks {
			if i := slices.Index(q.terms, string(tok.Term)); i >= 0 && !slices.Contains(g.terms, i) {
				g.terms = append(g.terms, i)
			}
		}
		if len(toks) == 1 {
			if t, f := string(toks[0].Term), fold(w); f != fold(t) && slices.Contains(q.terms, t) && !slices.Contains(q.written[t], f) {
				if q.written == nil {
					q.written = map[string][]string{}
				}
				q.written[t] = append(q.written[t], f)
			}
		}
		if len(g.terms) > 1 && !slices.ContainsFunc(q.groups, func(o termGroup) bool { return o.literal == fold(w) }) {
			g.literal, g.also = fold(w), compactDay(w)
			g.spellings = respell(g.literal)
			if g.also == "" {
				g.also = padDigitRuns(g.literal)
			}
			q.groups = append(q.groups, g)
		}
	}
	addName := func(w string) {
		if f := nameFold(w); f != "" && !seenName[f] {
			seenName[f] = true
			q.nameWords = append(q.nameWords, f)
		}
	}
	for _, w := range words {
		if stopWords[strings.ToLower(w)] && !stopOnly {
			continue // "to" equal to a directory named "to" is no evidence
		}
		addName(w)
	}
	// A name of several words is typed with spaces: "adobe scan" is the app
	// adobe_scan, "youth theatre" the file youth-theatre.pdf. Two or three
	// adjacent words, joined as names join them, are names of the query too
	// (the whole query's too: "adobe scan" alone).
	n := len(strings.Fields(text))
	for size := 2; size <= 3; size++ {
		for i := 0; i+size <= n; i++ {
			for _, sep := range []string{"_", "-", "", " "} {
				addName(strings.Join(words[i:i+size], sep))
			}
		}
	}
	q.findForms(all, used, bare, now)
	return q
}

// mayIsMonth says whether the query's words use "may" as the month, not the
// modal verb: a modal is followed by its verb, so "may" is the
// month when it ends a query of several words ("committee chat may"), stands
// beside a number ("may 2025", "3 may"), or follows a word that places a time
// ("early may", "end of may", "in may").
func mayIsMonth(words []string) bool {
	for i, w := range words {
		if !strings.EqualFold(w, "may") {
			continue
		}
		switch {
		case i == len(words)-1 && i > 0,
			i > 0 && digitsOnly(words[i-1]),
			i+1 < len(words) && digitsOnly(words[i+1]):
			return true
		case i > 0:
			switch strings.ToLower(words[i-1]) {
			case "early", "late", "mid", "end", "of", "in", "since", "before", "after", "until", "last", "this", "next":
				return true
			}
		}
	}
	return false
}

// findForms fills q.forms and q.qualifies from the query text bare (its
// possessives dropped), analysed by used, the analyser of q.terms (all, the
// one that keeps stop words, for extensions: indexed tokens keep them).
func (q *queryTerms) findForms(all, used analysis.Analyzer, bare string, now time.Time) {
	addForm := func(t string, forms ...string) {
		if !slices.Contains(q.terms, t) {
			return
		}
		if q.forms == nil {
			q.forms = map[string][]string{}
		}
		for _, f := range forms {
			if !slices.Contains(q.forms[t], f) {
				q.forms[t] = append(q.forms[t], f)
			}
		}
	}
	for _, t := range q.terms {
		mf := monthForms(t)
		if t == "may" && mayIsMonth(strings.FieldsFunc(bare, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsPunct(r) })) {
			mf = []string{"05"}
		}
		if mf != nil {
			addForm(t, mf...)
			if q.monthNumber == nil {
				q.monthNumber = map[string]string{}
			}
			q.monthNumber[t] = mf[len(mf)-1]
			// "april 2026": names write a month of a year short, Apr26
			// and sep_26, a form of the year (the month's own
			// abbreviation already covers the month), its tokens in a row.
			abbrs := []string{t}
			if len(mf) > 1 {
				abbrs = mf[:len(mf)-1]
			}
			for _, y := range q.terms {
				if isYear(y) {
					for _, a := range abbrs {
						if len(a) <= 4 && !digitsOnly(a) {
							addForm(y, a+" "+y[2:])
						}
					}
				}
			}
		}
	}
	// "may 1", "3 may": a day of that month.
	if len(q.monthNumber) > 0 {
		ws := strings.FieldsFunc(strings.ToLower(bare), func(r rune) bool { return unicode.IsSpace(r) || r == ',' })
		for i, w := range ws {
			d, err := strconv.Atoi(w)
			if !digitsOnly(w) || err != nil || d < 1 || d > 31 || !slices.Contains(q.terms, w) {
				continue
			}
			for _, k := range []int{i - 1, i + 1} {
				if k < 0 || k >= len(ws) {
					continue
				}
				for _, tok := range used.Analyze([]byte(ws[k])) {
					if mm := q.monthNumber[string(tok.Term)]; mm != "" && q.dayOf[w] == "" {
						dd := fmt.Sprintf("%02d", d)
						addForm(w, mm+" "+dd)
						if q.dayOf == nil {
							q.dayOf = map[string]string{}
						}
						q.dayOf[w] = mm + dd
					}
				}
			}
		}
	}
	// Two words written apart are often one token in a name: "on-call" or
	// "on call" and oncall_rotation.ics, "time zone" and timezone_bug.html,
	// "back up" and backup.sh. Their join, analysed, is a form of each of
	// their terms, so a file holding it covers both.
	parts := strings.FieldsFunc(strings.ToLower(bare), func(r rune) bool { return !unicode.IsLetter(r) })
	termsOf := make([][]string, len(parts))
	for i, p := range parts {
		for _, tok := range used.Analyze([]byte(p)) {
			termsOf[i] = append(termsOf[i], string(tok.Term))
		}
	}
	for i, p := range parts {
		for _, t := range termsOf[i] {
			for _, f := range append(kindForms(p), shortForms(p)...) {
				addForm(t, analysed(all, f))
			}
		}
	}
	for i := 1; i < len(parts); i++ {
		if len(termsOf[i-1])+len(termsOf[i]) == 0 {
			continue // two stop words
		}
		joined := used.Analyze([]byte(parts[i-1] + parts[i]))
		if len(joined) != 1 {
			continue
		}
		j := string(joined[0].Term)
		if slices.Contains(q.terms, j) {
			// The join stems back to a word of the query ("mom meds":
			// mommeds, stemmed mom): it names no joined token, and as a
			// form it would let every file holding that word count as
			// holding the other.
			continue
		}
		for _, t := range append(termsOf[i-1], termsOf[i]...) {
			addForm(t, j)
		}
	}
	qualify := func(t string) {
		if i := slices.Index(q.terms, t); i >= 0 {
			if q.qualifies == nil {
				q.qualifies = make([]bool, len(q.terms))
			}
			q.qualifies[i] = true
		}
	}
	for _, y := range relativeYears(bare, now) {
		for _, tok := range used.Analyze([]byte("year")) {
			addForm(string(tok.Term), strconv.Itoa(y))
			qualify(string(tok.Term))
		}
	}
	for _, rs := range relativePeriods(bare, now) {
		for _, tok := range used.Analyze([]byte(rs.word)) {
			for _, f := range rs.forms {
				addForm(string(tok.Term), analysed(all, f))
			}
			qualify(string(tok.Term))
		}
	}
	// "chapter 3", "roll 34", "invoice 187": names pad a number with zeros
	// (ch03, roll_034, invoice-000187, IMG_0042), where the token is 03,
	// not 3: each padding up to padWidth digits is a form of it.
	for _, w := range strings.Fields(bare) {
		for _, f := range paddedForms(w) {
			addForm(w, f)
			if len(w) == 1 && slices.Contains(q.terms, w) {
				if q.padNumber == nil {
					q.padNumber = map[string]string{}
				}
				q.padNumber[w] = f
			}
		}
	}
	// "backup log 2026-11-18": names and logs write a day as one number
	// (backup_20261118.log), a form of each of its three terms (and the
	// group's other literal, keywordEvidence).
	for _, g := range q.groups {
		if g.also != "" {
			for _, i := range g.terms {
				addForm(q.terms[i], g.also)
			}
		}
	}
	// "rough cut two", "all three": names write a number in digits
	// (rough_cut_2, certs_all3).
	for i, p := range parts {
		if _, ago := yearsAgo(parts, i+1); ago {
			continue // "two years ago" is a year (relativeYears), not a 2
		}
		if d := numberDigits(p); d != "" {
			for _, t := range termsOf[i] {
				addForm(t, d)
			}
		}
	}
	// "the first draft", "second version": the file marked v1, v2.
	for i, p := range parts {
		if n := slices.Index([]string{"first", "second", "third", "fourth", "fifth"}, p); n >= 0 {
			for _, t := range termsOf[i] {
				addForm(t, "v "+strconv.Itoa(n+1))
				qualify(t)
			}
		}
	}
}

// padWidth is the widest zero padding paddedForms writes: six digits, as
// invoicing apps number (invoice-000187).
const padWidth = 6

// paddedForms returns w, a number written without leading zeros and with
// fewer than padWidth digits, padded with zeros to each width up to padWidth
// ("34": 034, 0034, 00034, 000034); a digit only to two ("3": 03), since
// 001 and 002 are a camera's clip and card numbers (A002_C001) far more
// often than a first and second; nil for any other word. A number written
// in words gets no padding: "three" as 03 found March in every date.
func paddedForms(w string) []string {
	if !digitsOnly(w) || len(w) >= padWidth || w[0] == '0' {
		return nil
	}
	if len(w) == 1 {
		return []string{"0" + w}
	}
	forms := make([]string, 0, padWidth-len(w))
	for p := "0" + w; len(p) <= padWidth; p = "0" + p {
		forms = append(forms, p)
	}
	return forms
}

// compactDay returns the day w writes as year, month and day apart
// (2026-11-18, 2026.11.18, 2026_11_18, 2026/11/18), as one number of eight
// digits (20261118); "" when w is no such day.
func compactDay(w string) string {
	parts := strings.FieldsFunc(w, func(r rune) bool { return r == '-' || r == '.' || r == '_' || r == '/' })
	if len(parts) != 3 || len(w) != len(parts[0])+len(parts[1])+len(parts[2])+2 ||
		len(parts[0]) != 4 || len(parts[1]) > 2 || len(parts[2]) > 2 || slices.ContainsFunc(parts, func(p string) bool { return !digitsOnly(p) }) {
		return ""
	}
	// Digits only, four and at most two of them: Atoi cannot fail.
	y, _ := strconv.Atoi(parts[0])
	m, _ := strconv.Atoi(parts[1])
	d, _ := strconv.Atoi(parts[2])
	if y < 1900 || y > 2999 || m < 1 || m > 12 || d < 1 || d > 31 {
		return ""
	}
	return fmt.Sprintf("%04d%02d%02d", y, m, d)
}

// padDigitRuns returns w with each lone digit after two letters or more
// (ep7, ch3) padded to two, as names number episodes and chapters (ep07,
// ch03); "" when there is none. Not after one letter: W2 is a tax form, and
// w02 a week.
func padDigitRuns(w string) string {
	var b strings.Builder
	changed := false
	for i := 0; i < len(w); i++ {
		if isDigit(w[i]) && i > 1 && isLetter(w[i-1]) && isLetter(w[i-2]) && (i+1 == len(w) || !isDigit(w[i+1])) {
			b.WriteByte('0')
			changed = true
		}
		b.WriteByte(w[i])
	}
	if !changed {
		return ""
	}
	return b.String()
}

// digitsOnly says whether w is a run of ASCII digits (not empty).
func digitsOnly(w string) bool {
	return w != "" && strings.Trim(w, "0123456789") == ""
}

// NumberDigits returns the digits the best rank takes a number written in
// words to be ("three": "3"), "" for other words: for the evaluation's strict
// paraphrases (index/eval), as KindExtensions.
func NumberDigits(word string) string { return numberDigits(strings.ToLower(word)) }

// numberDigits is NumberDigits of a lower-case word: two to twelve. "one" is
// left out: "the one with", "one sheet" seldom mean a 1 in a name.
func numberDigits(w string) string {
	if n := slices.Index([]string{"two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"}, w); n >= 0 {
		return strconv.Itoa(n + 2)
	}
	return ""
}

// relativeOffset is how many years from now the word before "year" or a
// season points: "this" (or "current") 0, "last" ("previous", "past") −1,
// "next" 1; false for any other word.
func relativeOffset(w string) (int, bool) {
	switch w {
	case "this", "current":
		return 0, true
	case "last", "previous", "past":
		return -1, true
	case "next":
		return 1, true
	}
	return 0, false
}

// relativeYears returns the years text (possessives dropped) names relative
// to now: "this year" (or "current year") is now's, "last year" ("last
// year's", "previous year", "past year") the one before, "next year" the one
// after, and "two years ago" ("3 years ago", "a year ago") that many before. A file dated in
// that year ("family_2026.ics", "taxes/2025/") then matches the query's word
// "year", which otherwise only files named "year" would.
func relativeYears(text string, now time.Time) []int {
	var ys []int
	words := strings.Fields(strings.ToLower(text))
	for i := range words {
		words[i] = strings.TrimFunc(words[i], unicode.IsPunct)
	}
	for i, w := range words {
		if w != "year" && w != "years" || i == 0 {
			continue
		}
		d, ok := relativeOffset(words[i-1])
		if n, ago := yearsAgo(words, i); ago {
			d, ok = -n, true
		}
		if y := now.Year() + d; ok && !slices.Contains(ys, y) {
			ys = append(ys, y)
		}
	}
	return ys
}

// yearsAgo reads "two years ago", "3 years ago" or "a year ago" around
// words[i] (lower case, punctuation trimmed): how many years back, false
// unless words[i] is "year" or "years" between a count and "ago".
func yearsAgo(words []string, i int) (int, bool) {
	if i <= 0 || i+1 >= len(words) || words[i] != "year" && words[i] != "years" || words[i+1] != "ago" {
		return 0, false
	}
	n := words[i-1]
	if n == "a" || n == "one" {
		return 1, true
	}
	if d := numberDigits(n); d != "" {
		n = d
	}
	if v, err := strconv.Atoi(n); err == nil && v > 0 && v < 100 {
		return v, true
	}
	return 0, false
}

// analysed is text's tokens by a, space-separated: a form as the index
// holds it ("m4a": "m 4 a", "september 2025": "septemb 2025").
func analysed(a analysis.Analyzer, text string) string {
	var toks []string
	for _, tok := range a.Analyze([]byte(text)) {
		toks = append(toks, string(tok.Term))
	}
	return strings.Join(toks, " ")
}

// relativePeriod is a season or a month named relative to now ("last fall",
// "this month") or by its year ("autumn 2024"): the word as written and the
// dated forms of its months.
type relativePeriod struct {
	word  string
	forms []string
}

// relativePeriods returns the seasons and months text (possessives dropped)
// names relative to now ("this spring", "last fall", "next summer", "last
// month": a period of one month) or, seasons, with their
// year ("autumn 2024", "2024 autumn", "summer of 2025"; northern
// seasons: spring March–May, summer June–August, fall or autumn
// September–November, winter December to February, named by the year of its
// December), each with the forms of its months as dated names write them,
// with their year: "2025 09" (2025-09-14), "sep 25" (sep25), "sep 2025",
// "september 2025", each to be analysed as a form of several tokens.
func relativePeriods(text string, now time.Time) []relativePeriod {
	var out []relativePeriod
	prev := ""
	words := strings.Fields(strings.ToLower(text))
	for i, w := range words {
		w = strings.TrimFunc(w, unicode.IsPunct)
		first, months := 0, 3 // the period's first month, and how many
		switch w {
		case "month":
			first, months = int(now.Month()), 1
		case "spring":
			first = 3
		case "summer":
			first = 6
		case "fall", "autumn":
			first = 9
		case "winter":
			first = 12
		}
		d, ok := relativeOffset(prev)
		before := prev
		prev = w
		if first == 0 {
			continue
		}
		y := now.Year() + d
		switch {
		case months == 1:
			if !ok {
				continue // "month" without this, last or next: no year beside it counts
			}
			y, first = now.Year(), first+d // month 0 is last December, 13 next January
		case first == 12 && now.Month() <= 2:
			y-- // this winter began last December
		}
		// Or a season of a year written beside it ("autumn 2024", "2024
		// autumn", "summer of 2025"): that year's.
		if n, named := seasonYear(words, i, before); named && months == 3 {
			y, ok = n, true
		}
		if !ok {
			continue
		}
		rs := relativePeriod{word: w}
		for i := range months {
			at := time.Date(y, time.Month(first+i), 1, 0, 0, 0, 0, time.UTC) // month 13 is January
			yy, mm := strconv.Itoa(at.Year()), fmt.Sprintf("%02d", int(at.Month()))
			name := strings.ToLower(at.Month().String())
			rs.forms = append(rs.forms, yy+" "+mm, name[:3]+" "+yy[2:], name[:3]+" "+yy, name+" "+yy)
		}
		out = append(out, rs)
	}
	return out
}

// seasonYear is the year written beside the season words[i]: the next word
// (or the one after "of"), or the word before it (before, as read), a year
// of four digits from 1900 to 2099.
func seasonYear(words []string, i int, before string) (int, bool) {
	year := func(w string) (int, bool) {
		w = strings.TrimFunc(w, unicode.IsPunct)
		n, err := strconv.Atoi(w)
		return n, err == nil && len(w) == 4 && n >= 1900 && n <= 2099
	}
	if i+1 < len(words) {
		next := words[i+1]
		if next == "of" && i+2 < len(words) {
			next = words[i+2]
		}
		if n, ok := year(next); ok {
			return n, true
		}
	}
	return year(before)
}

// qualifier says whether terms[i] only qualifies the others (qualifies).
func (q queryTerms) qualifier(i int) bool { return i < len(q.qualifies) && q.qualifies[i] }

// withoutClitics drops the "'s" of "grandma's" and "last year's": split
// at the apostrophe it would be the word "s", found in every "k8s" and
// joined back into "grandmas". Contractions' clitics go too ("we're",
// "i'm", "they've", "you'll", "we'd", "couldn't"): split, "re" found every
// Re_ email, "m" every .m4a, and "couldn" and "t" were words found nowhere;
// what is left is the stop word it was ("we", "could"; "can't" is "can",
// "won't" "will"). The exact-name test still sees the words as written.
func withoutClitics(text string) string {
	if !strings.ContainsAny(text, "'\u2019") {
		return text
	}
	out := make([]rune, 0, len(text))
	rs := []rune(text)
	for i := 0; i < len(rs); i++ {
		if (rs[i] == '\'' || rs[i] == '\u2019') && i > 0 && unicode.IsLetter(rs[i-1]) {
			e := i + 1
			for e < len(rs) && unicode.IsLetter(rs[e]) {
				e++
			}
			if e == len(rs) || !unicode.IsDigit(rs[e]) {
				switch strings.ToLower(string(rs[i+1 : e])) {
				case "s", "re", "ve", "ll", "d", "m":
					i = e - 1 // the apostrophe and its clitic
					continue
				case "t":
					if n := len(out); n > 0 && (out[n-1] == 'n' || out[n-1] == 'N') {
						out = out[:n-1] // n't
						switch w := strings.ToLower(string(out[max(0, n-3):])); {
						case w == "ca" && (n < 4 || !unicode.IsLetter(out[n-4])):
							out = append(out, 'n') // can't: can
						case w == "wo" && (n < 4 || !unicode.IsLetter(out[n-4])):
							out = append(out[:n-3], []rune("will")...) // won't: will
						}
						i = e - 1
						continue
					}
				}
			}
		}
		out = append(out, rs[i])
	}
	return string(out)
}

// kindForms returns the file name extensions a word for a kind of file
// stands for ("picture": jpg, png…; "spreadsheet": csv, xlsx…), as people
// ask for "the picture of the receipt" of a file named receipt.jpg; nil for
// other words. Keyed by the word as written (lower case), not its stem:
// "recording" is audio, "records" is not.
func kindForms(w string) []string {
	switch w {
	case "picture", "pictures", "photo", "photos", "image", "images", "pic", "pics":
		return []string{"jpg", "jpeg", "png", "heic", "gif", "webp"}
	case "screenshot", "screenshots":
		return []string{"png"} // a camera's jpg or heic is no screenshot
	case "spreadsheet", "spreadsheets":
		return []string{"csv", "xlsx", "xls", "ods", "numbers"}
	case "email", "emails":
		return []string{"eml", "msg"}
	case "invite", "invites", "invitation", "invitations":
		return []string{"ics"}
	case "recording", "recordings", "audio", "voice":
		return []string{"m4a", "mp3", "wav", "ogg", "flac", "opus", "aac"}
	case "video", "videos", "clip", "clips", "footage":
		return []string{"mp4", "mov", "mkv", "webm"}
	case "slides", "deck", "presentation":
		return []string{"pptx", "ppt", "key", "odp"}
	case "archive", "archives", "zipped":
		return []string{"zip", "tar", "gz", "tgz", "7z"}
	case "dump", "database":
		return []string{"sql", "sqlite", "db"}
	case "script", "scripts":
		return []string{"sh", "py"}
	case "raw", "raws":
		return []string{"nef", "cr2", "cr3", "arw", "raf", "dng", "orf", "rw2"}
	case "query", "queries":
		return []string{"sql"}
	case "python":
		return []string{"py"}
	case "notebook", "notebooks":
		return []string{"ipynb"}
	case "markdown":
		return []string{"md"}
	}
	return nil
}

// KindExtensions returns the file name extensions the best rank takes a word
// for a kind of file to stand for ("email": eml, msg), nil for other words:
// for the evaluation's strict paraphrases (index/eval), which must share no
// evidence with the files they want.
func KindExtensions(word string) []string { return kindForms(strings.ToLower(word)) }

// ShortForms returns the other ways the best rank takes names to write a
// word ("chapter": ch, "db": database), nil for other words: for the
// evaluation's strict paraphrases, as KindExtensions.
func ShortForms(word string) []string { return shortForms(strings.ToLower(word)) }

// shortForms returns the other way names often write a word: its usual
// abbreviation ("production": prod, "kubernetes": k8s, "appointment": appt)
// or, for an abbreviation, the word (db: database), or a word names use for
// it ("retreat": offsite, "resume": cv); nil for other words.
// Keyed by the word as written (lower case, letters only: "k8s" in a query
// is three words the seed's literal test already finds, and is not looked
// up; "kubernetes" still finds k8s). A prefix needs no entry (the
// query word "prod" already finds "production"), nor an ambiguous one ("conf":
// configuration or conference).
func shortForms(w string) []string {
	pairs := [][2]string{
		{"production", "prod"}, {"development", "dev"}, {"configuration", "config"},
		{"configuration", "cfg"}, {"certificate", "cert"}, {"certificates", "certs"},
		{"kubernetes", "k8s"}, {"appointment", "appt"}, {"database", "db"},
		{"repository", "repo"}, {"environment", "env"}, {"authentication", "auth"},
		{"authorization", "auth"}, {"temporary", "tmp"}, {"department", "dept"},
		{"account", "acct"}, {"refinance", "refi"}, {"refinancing", "refi"},
		{"specification", "spec"}, {"requirements", "reqs"}, {"invoice", "inv"},
		{"prescription", "rx"}, {"information", "info"}, {"administrator", "admin"},
		{"administration", "admin"}, {"message", "msg"}, {"receipt", "rcpt"},
		{"statement", "stmt"}, {"reference", "ref"}, {"template", "tmpl"},
		{"doctor", "dr"}, {"versus", "vs"}, {"picture", "pic"},
		{"chapter", "ch"}, {"quarter", "q"},
		// Words names use for one another. Tried and left out, as each cost a
		// class of the dev sets: car/auto, bill/invoice, flight/boarding.
		{"resume", "cv"}, {"retreat", "offsite"}, {"vacation", "trip"}, {"vacation", "holiday"},
	}
	var out []string
	for _, p := range pairs {
		switch w {
		case p[0]:
			out = append(out, p[1])
		case p[1]:
			out = append(out, p[0])
		}
	}
	return out
}

// asciiFold is the asciiFilter token filter: Bleve's ASCII folding (Lucene's
// table: "ö" "o", "é" "e", "ß" "ss", "æ" "ae"; letters without a Latin base,
// such as Greek or Han, stay) of each token. It runs after NFKC, so that a
// decomposed "o" and diaeresis (macOS names) folds like the composed "ö"; a
// char filter before the tokenizer would see the two runes apart.
type asciiFold struct {
	f *asciifolding.AsciiFoldingFilter
}

func (a asciiFold) Filter(ts analysis.TokenStream) analysis.TokenStream {
	for _, t := range ts {
		for _, c := range t.Term {
			if c >= utf8.RuneSelf {
				t.Term = a.f.Filter(t.Term)
				break
			}
		}
	}
	return ts
}

// camelWhole is the camelFilter token filter of the indexed fields: Bleve's
// camelCase split of each token, preceded by the token whole where it splits
// ("WhatsApp": whatsapp, whats, app). Brands and products are written in
// camelCase in names (WhatsApp, iPhone, YouTube, OneDrive, eVisa) and typed
// as one lower-case word in queries: split alone, "whatsapp" found no file
// under WhatsApp/. A query is split only (splitAnalyzer): "WhatsApp" typed so
// is the terms whats and app, and its group's literal whatsapp (queryTerms).
// The whole takes its first part's position.
type camelWhole struct{}

func (camelWhole) Filter(ts analysis.TokenStream) analysis.TokenStream {
	split := camelcase.NewCamelCaseFilter()
	out := make(analysis.TokenStream, 0, len(ts))
	pos := 1
	for _, t := range ts {
		parts := split.Filter(analysis.TokenStream{t})
		if len(parts) > 1 {
			whole := *t
			whole.Position = pos
			out = append(out, &whole)
		}
		for _, p := range parts {
			p.Position = pos
			pos++
			out = append(out, p)
		}
	}
	return out
}

// acronymPlural is the pluralFilter token filter: a run of two or more
// capitals and a plural s ("OKRs", "PDFs", "CVs") is one word, lower-cased
// before the camelCase split, which would make it "ok" and "rs" ("OKRs"
// found notes/ok.md, not quarterly_okrs.md) and "CVs" "c" and "vs" (the
// query "versus" found Team CVs.pdf).
type acronymPlural struct{}

func (acronymPlural) Filter(ts analysis.TokenStream) analysis.TokenStream {
	for _, t := range ts {
		n := len(t.Term)
		if n < 3 || t.Term[n-1] != 's' {
			continue
		}
		caps := 0
		for _, r := range string(t.Term[:n-1]) {
			if !unicode.IsUpper(r) {
				caps = -1
				break
			}
			caps++
		}
		if caps >= 2 {
			t.Term = bytes.ToLower(t.Term)
		}
	}
	return ts
}

// Bleve builds an analyzer's filters by name from its registry, the one
// place a custom filter can be named.
func init() {
	registry.RegisterTokenFilter(asciiFilter, func(map[string]interface{}, *registry.Cache) (analysis.TokenFilter, error) {
		return asciiFold{asciifolding.New()}, nil
	})
	registry.RegisterTokenFilter(camelFilter, func(map[string]interface{}, *registry.Cache) (analysis.TokenFilter, error) {
		return camelWhole{}, nil
	})
	registry.RegisterTokenFilter(pluralFilter, func(map[string]interface{}, *registry.Cache) (analysis.TokenFilter, error) {
		return acronymPlural{}, nil
	})
}
