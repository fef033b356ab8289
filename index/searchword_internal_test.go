package index

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search"
)

// TestSearchWordAsksForWhatCanMatch: searchWord asks Bleve for no more hits
// than its terms' dictionary counts allow, and answers exactly what a search
// for kwMax hits answers (the oracle: the same query at kwMax), on generated
// records whose words share prefixes, include month names and, for one word,
// match more than kwMax files; and bound never undercounts.
func TestSearchWordAsksForWhatCanMatch(t *testing.T) {
	x, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	vocab := []string{"report", "reports", "reporting", "rep", "invoice", "invoices", "january", "jan",
		"01", "kernel", "kern", "net", "network", "networks", "zebra", "md", "a"}
	r := rand.New(rand.NewPCG(30, 7))
	pick := func(n int) string {
		w := make([]string, n)
		for i := range w {
			w[i] = vocab[r.IntN(len(vocab))]
		}
		return strings.Join(w, " ")
	}
	// "common" is in every file: more than kwMax match it.
	const files = kwMax + 200
	reqs := make([]TagRequest, 0, files)
	for i := range files {
		p := fmt.Sprintf("d%d/%s-%d.txt", i%7, strings.ReplaceAll(pick(2), " ", "-"), i)
		if err := x.Create(p, strings.ReplaceAll(pick(1), " ", "-"), uint64(i+1), time.Now()); err != nil {
			t.Fatal(err)
		}
		reqs = append(reqs, TagRequest{Path: p, Task: "common " + pick(1+r.IntN(3)), RelatedApps: []string{pick(1)}})
	}
	if _, err := x.TagMany(context.Background(), reqs); err != nil {
		t.Fatal(err)
	}
	x.flushBleve()
	words := append(slices.Clone(vocab), "common", "nothing", "repo", "networ", "janu")
	a := x.bl.Mapping().AnalyzerNamed(queryAnalyzer)
	x.mu.RLock()
	defer x.mu.RUnlock()
	for _, w := range words {
		for _, tok := range a.Analyze([]byte(w)) {
			term := string(tok.Term)
			q, bound, err := x.wordQuery(&dictMemo{}, term, monthForms(term))
			if err != nil {
				t.Fatal(err)
			}
			want, err := x.bl.Search(bleve.NewSearchRequestOptions(q, kwMax, 0, false))
			if err != nil {
				t.Fatal(err)
			}
			if want.Total > bound {
				t.Errorf("%q: bound %d, but %d files match", term, bound, want.Total)
			}
			got, err := x.searchWord(context.Background(), &dictMemo{}, term, monthForms(term))
			if err != nil {
				t.Fatal(err)
			}
			sameHits(t, term, got, want)
			// A bound that undercounts (a batch landed after the counts) still
			// gets every hit, by the search at kwMax.
			got, err = x.searchAtMost(context.Background(), q, 1)
			if err != nil {
				t.Fatal(err)
			}
			sameHits(t, term+" (bound 1)", got, want)
		}
	}
}

func sameHits(t *testing.T, what string, got, want *bleve.SearchResult) {
	t.Helper()
	if got.Total != want.Total || len(got.Hits) != len(want.Hits) {
		t.Errorf("%s: %d hits of %d, want %d of %d", what, len(got.Hits), got.Total, len(want.Hits), want.Total)
		return
	}
	byID := func(h search.DocumentMatchCollection) map[string]float64 {
		m := make(map[string]float64, len(h))
		for _, d := range h {
			m[d.ID] = d.Score
		}
		return m
	}
	g, w := byID(got.Hits), byID(want.Hits)
	for id, s := range w {
		if gs, ok := g[id]; !ok || gs != s {
			t.Errorf("%s: %s scores %v (found %v), want %v", what, id, gs, ok, s)
		}
	}
}

// TestDictMemoLooksUpOnce: a lookup asked again within a query, at once or
// after, is made once, and every asker gets its answer (a joined form's
// count is asked by both words' searches, which run at once).
func TestDictMemoLooksUpOnce(t *testing.T) {
	var memo dictMemo
	var calls atomic.Int32
	release := make(chan struct{})
	look := func() ([]string, uint64, error) {
		calls.Add(1)
		<-release
		return []string{"timezones"}, 7, nil
	}
	var wg sync.WaitGroup
	got := make([]uint64, 8)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, got[i], _ = memo.lookup(dictKey{"task", "timezone", lookLonger}, look)
		}()
	}
	close(release)
	wg.Wait()
	if _, n, _ := memo.lookup(dictKey{"task", "timezone", lookLonger}, look); n != 7 {
		t.Fatalf("asked after: %d, want 7", n)
	}
	if _, n, _ := memo.lookup(dictKey{"task", "timezone", lookCount}, func() ([]string, uint64, error) { return nil, 3, nil }); n != 3 {
		t.Fatalf("a count of the same token: %d, want its own lookup's 3", n)
	}
	for i, n := range got {
		if n != 7 {
			t.Fatalf("asker %d got %d, want 7", i, n)
		}
	}
	if c := calls.Load(); c != 1 {
		t.Fatalf("the lookup was made %d times, want 1", c)
	}
}
