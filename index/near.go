package index

import (
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2/index/scorch"
	segment "github.com/blevesearch/scorch_segment_api/v2"
	"github.com/blevesearch/vellum/levenshtein"
)

// Near words: a query word no file holds in any form is looked for again as
// the indexed words a typo away (searchNear). What that costs is the word's
// Levenshtein automaton: Bleve's fuzzy dictionary builds one per call, so
// three a word (one per word field), and one of two edits takes about 280 µs
// and 0.7 MB to build (vellum's builder, 2 vCPUs): under the 64-client mixed
// load, whose queries are words of the files' text, 17 % of the daemon's CPU
// (docs/benchmarks-history.md, 2026-12-05). So the index builds each word's
// automaton once, keeps the last few for the next queries, and walks every
// segment's dictionary of each field with it.

// nearKept is how many automata are kept between queries: a two-edit one
// holds 0.7–0.9 MB (a 256-entry row per state).
const nearKept = 4

// nearAutomata builds and keeps the automata; safe for concurrent use.
type nearAutomata struct {
	once  sync.Once
	lb    [3]*levenshtein.LevenshteinAutomatonBuilder // by edits: 1 and 2
	err   error
	mu    sync.Mutex
	kept  []nearDFA // the most recently used last
	built int       // automata built, for the tests
}

type nearDFA struct {
	word  string
	edits uint8
	dfa   *levenshtein.DFA
}

// get is word's automaton of up to edits (1 or 2) edits, a transposition
// counting as one, as Bleve's fuzzy dictionary builds it.
func (a *nearAutomata) get(word string, edits uint8) (*levenshtein.DFA, error) {
	a.once.Do(func() {
		for e := uint8(1); e <= 2 && a.err == nil; e++ {
			a.lb[e], a.err = levenshtein.NewLevenshteinAutomatonBuilder(e, true)
		}
	})
	if a.err != nil {
		return nil, a.err
	}
	a.mu.Lock()
	for i, k := range a.kept {
		if k.word == word && k.edits == edits {
			a.kept = append(append(a.kept[:i:i], a.kept[i+1:]...), k)
			a.mu.Unlock()
			return k.dfa, nil
		}
	}
	a.mu.Unlock()
	// Built outside the lock: two queries of one new word may both build it.
	dfa, err := a.lb[edits].BuildDfa(word, edits)
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.built++
	if len(a.kept) == nearKept {
		a.kept = slices.Delete(a.kept, 0, 1)
	}
	a.kept = append(a.kept, nearDFA{word, edits, dfa})
	return dfa, nil
}

// nearTerms returns the indexed tokens of field within a typo of t: of the
// same first letter (typos rarely touch it), one edit away for words of 6 or
// 7 letters, two from 8 ("statment": statement; a swap is one edit); none for
// shorter words or any with a character other than a letter, where one edit
// is another word ("ready": readme, "2024"). Two edits from 7 letters, or one
// from 5, found homelab for "homemade" and README for "ready"
// (docs/benchmarks-history.md). At most maxExpansion of them, the least in
// byte order (as termsOf reads a dictionary). Their document counts are not
// read (searchNear). Precondition: x.mu held for reading.
func (x *Index) nearTerms(field, t string) ([]string, error) {
	n := utf8.RuneCountInString(t)
	if n < 6 || strings.ContainsFunc(t, func(r rune) bool { return !unicode.IsLetter(r) }) {
		return nil, nil
	}
	edits := uint8(1)
	if n >= 8 {
		edits = 2
	}
	adv, err := x.bl.Advanced()
	if err != nil {
		return nil, err
	}
	r, err := adv.Reader()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	snap, ok := r.(*scorch.IndexSnapshot)
	if !ok {
		return nil, nil // not a segment index: no typo's words
	}
	dfa, err := x.near.get(t, edits)
	if err != nil {
		return nil, err
	}
	return nearIn(snap, dfa, field, t)
}

// nearIn is nearTerms in one snapshot of the index, with t's automaton.
func nearIn(snap *scorch.IndexSnapshot, dfa *levenshtein.DFA, field, t string) ([]string, error) {
	_, size := utf8.DecodeRuneInString(t)
	beg := []byte(t[:size])
	end := prefixEnd(beg)
	seen := map[string]bool{}
	var terms []string
	for _, s := range snap.Segments() {
		d, err := s.Segment().Dictionary(field)
		if err != nil {
			return nil, err
		}
		// Terms only, as Bleve's fuzzy dictionary reads them: a segment's
		// dictionary iterator misreports counts after a term of one document
		// (zapx reuses its postings list with the one-hit state kept:
		// blevesearch/zapx#445), and counting each term apart is a postings
		// read per term, segment and field, for a search's size only.
		var it segment.DictionaryIterator
		if oc, ok := d.(interface {
			AutomatonIteratorOmitCount(segment.Automaton, []byte, []byte) segment.DictionaryIterator
		}); ok {
			it = oc.AutomatonIteratorOmitCount(dfa, beg, end)
		} else {
			it = d.AutomatonIterator(dfa, beg, end)
		}
		for {
			e, err := it.Next()
			if err != nil {
				return nil, err
			}
			if e == nil {
				break
			}
			if !seen[e.Term] {
				seen[e.Term] = true
				terms = append(terms, e.Term)
			}
		}
	}
	slices.Sort(terms)
	var out []string
	for _, term := range terms {
		if len(out) == maxExpansion {
			break
		}
		if term != t {
			out = append(out, term)
		}
	}
	return out, nil
}

// prefixEnd is the least key after every key that starts with p (nil: none):
// p with its last byte below 0xff raised by one, what follows it dropped.
func prefixEnd(p []byte) []byte {
	end := slices.Clone(p)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}
