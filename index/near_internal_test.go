package index

import (
	"context"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2/index/scorch"
	bindex "github.com/blevesearch/bleve_index_api"
)

// nearTerms gives what Bleve's own fuzzy dictionary gives (FieldDictFuzzy,
// which builds its automaton anew each call: the independent reading), term
// for term, on generated vocabularies of words and their typos (a letter
// changed, added, dropped, two swapped, twice), with capitals and accents,
// over several segments and after removals.
func TestNearTermsAreBleveFuzzy(t *testing.T) {
	at := time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC)
	for seed := int64(1); seed <= 3; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			r := rand.New(rand.NewSource(seed))
			x, err := Open(t.TempDir(), Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer x.Close()
			letters := []rune("abcdeeeilmnorstuéß")
			word := func() string {
				var b strings.Builder
				for range 5 + r.Intn(7) {
					b.WriteRune(letters[r.Intn(len(letters))])
				}
				return b.String()
			}
			typo := func(w string) string {
				rs := []rune(w)
				for range 1 + r.Intn(2) {
					i := r.Intn(len(rs))
					switch r.Intn(4) {
					case 0:
						rs[i] = letters[r.Intn(len(letters))]
					case 1:
						rs = slices.Insert(rs, i, letters[r.Intn(len(letters))])
					case 2:
						if len(rs) > 1 {
							rs = slices.Delete(rs, i, i+1)
						}
					default:
						if i+1 < len(rs) {
							rs[i], rs[i+1] = rs[i+1], rs[i]
						}
					}
				}
				return string(rs)
			}
			var base []string
			for range 40 {
				base = append(base, word())
			}
			var vocab []string
			for _, w := range base {
				vocab = append(vocab, w)
				for range r.Intn(4) {
					vocab = append(vocab, typo(w))
				}
			}
			pick := func() string {
				w := vocab[r.Intn(len(vocab))]
				if r.Intn(5) == 0 {
					first, size := utf8.DecodeRuneInString(w)
					w = strings.ToUpper(string(first)) + w[size:]
				}
				return w
			}
			var paths []string
			for i := range 300 {
				p := fmt.Sprintf("%s/%s-%d.txt", pick(), pick(), i)
				if err := x.Create(p, pick(), uint64(i+1), at); err != nil {
					t.Fatal(err)
				}
				if r.Intn(2) == 0 {
					if _, err := x.Tag(context.Background(), p, pick()+" "+pick(), []string{pick()}, nil); err != nil {
						t.Fatal(err)
					}
				}
				paths = append(paths, p)
				if i%50 == 49 {
					x.flushBleve() // another segment
				}
			}
			for _, p := range paths[:40] {
				if err := x.Remove(p); err != nil {
					t.Fatal(err)
				}
			}
			x.flushBleve()
			x.mu.RLock()
			defer x.mu.RUnlock()
			adv, err := x.bl.Advanced()
			if err != nil {
				t.Fatal(err)
			}
			rd, err := adv.Reader()
			if err != nil {
				t.Fatal(err)
			}
			defer rd.Close()
			fr := rd.(bindex.IndexReaderFuzzy)
			checked := 0
			for range 300 {
				q := strings.ToLower(typo(vocab[r.Intn(len(vocab))]))
				for _, f := range wordFields {
					var got, want []string
					if k := utf8.RuneCountInString(q); k >= 6 {
						first, _ := utf8.DecodeRuneInString(q)
						fuzz := 1
						if k >= 8 {
							fuzz = 2
						}
						dfa, err := x.near.get(q, uint8(fuzz))
						if err != nil {
							t.Fatal(err)
						}
						// The same snapshot for both: scorch's merges drop
						// removed files' counts in between.
						if got, err = nearIn(rd.(*scorch.IndexSnapshot), dfa, f.field, q); err != nil {
							t.Fatal(err)
						}
						d, err := fr.FieldDictFuzzy(f.field, q, fuzz, string(first))
						if err != nil {
							t.Fatal(err)
						}
						want, _, err = termsOf(d, q)
						d.Close()
						if err != nil {
							t.Fatal(err)
						}
					}
					if !slices.Equal(got, want) {
						t.Fatalf("%s %q: near terms %q, Bleve's fuzzy dictionary %q", f.field, q, got, want)
					}
					checked += len(got)
				}
			}
			if checked < 100 {
				t.Fatalf("only %d near terms found: the vocabulary tests too little", checked)
			}
		})
	}
}

// A word's automaton is built once for its three fields and kept for the
// next queries; a word fewer than nearKept words ago is not built again.
func TestNearAutomataAreKept(t *testing.T) {
	x, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	at := time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC)
	if err := x.Create("bank/statement_2025.pdf", "mail", 1, at); err != nil {
		t.Fatal(err)
	}
	ask := func(text string) {
		t.Helper()
		if _, err := x.Query(context.Background(), Query{Text: text}); err != nil {
			t.Fatal(err)
		}
	}
	built := func() int {
		x.near.mu.Lock()
		defer x.near.mu.Unlock()
		return x.near.built
	}
	ask("statment 2025")
	if b := built(); b != 1 {
		t.Fatalf("one word of three fields: %d automata built", b)
	}
	ask("statment")
	words := []string{"balancee", "invoicse", "recieptt", "paymnets"}
	for _, w := range words[:nearKept-1] {
		ask(w)
	}
	ask("statment")
	if b := built(); b != nearKept {
		t.Fatalf("after %d words: %d automata built, want %d", nearKept, b, nearKept)
	}
	ask(words[nearKept-1])
	ask("balancee") // the least recently used of the kept, "statment" having been asked again
	if b := built(); b != nearKept+2 {
		t.Fatalf("after the cache filled: %d automata built, want %d", b, nearKept+2)
	}
}
