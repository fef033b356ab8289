package index_test

import (
	"fmt"
	"math"
	"math/rand"
	"sort"
	"strings"
	"testing"

	"github.com/semfs/semfs/embed"
	"github.com/semfs/semfs/embed/embedtest"
	"github.com/semfs/semfs/index"
)

func best(t testing.TB, x *index.Index, q index.Query) []index.Result {
	t.Helper()
	q.Rank = index.RankBest
	return query(t, x, q)
}

func paths(res []index.Result) []string {
	out := make([]string, len(res))
	for i, r := range res {
		out[i] = r.Path
	}
	return out
}

func rankOf(res []index.Result, p string) int {
	for i, r := range res {
		if r.Path == p {
			return i
		}
	}
	return -1
}

// TestBestWords: how query words meet field words: analysed (case, NFKC,
// stems), tokenised fields (path segments, camelCase, digits), token prefixes
// but never infixes, short words whole only, stop words no evidence unless
// alone.
func TestBestWords(t *testing.T) {
	x := openIndex(t, t.TempDir(), index.Options{})
	files := []struct{ path, by, task string }{
		{"docs/deployment-guide.md", "code-editor", "how we ship"},
		{"src/ui/DatePicker.tsx", "code-editor", "calendar widget"},
		{"tickets/boarding-TP1350.pdf", "browser", "flight home"},
		{"src/feature-flags.go", "code-editor", "toggle rollouts"},
		{"notes/lisbon.md", "notes", "trip ideas"},
		{"notes/go-tips.md", "notes", "language tricks"},
		{"notes/the-end.md", "notes", "last chapter"},
		{"notes/ﬁle-cabinet.md", "notes", "paper storage"}, // "ﬁ" ligature: NFKC gives "fi"
	}
	for i, f := range files {
		mustCreate(t, x, f.path, f.by, uint64(i+1))
		mustTag(t, x, f.path, f.task, nil, nil)
	}
	for _, tc := range []struct {
		q          string
		want, deny []string
	}{
		{"deploy", []string{"docs/deployment-guide.md"}, nil},                     // stem + prefix
		{"DEPLOYING", []string{"docs/deployment-guide.md"}, nil},                  // case + stem
		{"picker", []string{"src/ui/DatePicker.tsx"}, nil},                        // camelCase split
		{"tp1350", []string{"tickets/boarding-TP1350.pdf"}, nil},                  // letters and digits
		{"1350", []string{"tickets/boarding-TP1350.pdf"}, nil},                    // digits alone
		{"lisb", []string{"notes/lisbon.md"}, nil},                                // token prefix
		{"eat", nil, []string{"src/feature-flags.go"}},                            // never an infix
		{"isbon", nil, []string{"notes/lisbon.md"}},                               // never an infix
		{"go", []string{"notes/go-tips.md", "src/feature-flags.go"}, nil},         // short: whole tokens
		{"g", nil, []string{"notes/go-tips.md", "src/feature-flags.go"}},          // short: no prefix
		{"the lisbon", []string{"notes/lisbon.md"}, []string{"notes/the-end.md"}}, // stop word: no evidence
		{"the", []string{"notes/the-end.md"}, nil},                                // ...unless alone
		{"FILE cabinet", []string{"notes/ﬁle-cabinet.md"}, nil},                   // NFKC
		{"calendar widgets", []string{"src/ui/DatePicker.tsx"}, []string{"notes/lisbon.md"}},
	} {
		got := paths(best(t, x, index.Query{Text: tc.q}))
		for _, w := range tc.want {
			if rankOf(best(t, x, index.Query{Text: tc.q}), w) < 0 {
				t.Errorf("%q: %s missing from %v", tc.q, w, got)
			}
		}
		for _, d := range tc.deny {
			for _, g := range got {
				if g == d {
					t.Errorf("%q: %s matched: %v", tc.q, d, got)
				}
			}
		}
	}
}

// TestBestExplain: explain says which words hit which field, the names and
// the similarity.
func TestBestExplain(t *testing.T) {
	x := openIndex(t, t.TempDir(), index.Options{})
	mustCreate(t, x, "notes/2026/trip-lisbon.md", "notes", 1)
	mustTag(t, x, "notes/2026/trip-lisbon.md", "plan the itinerary", []string{"calendar"}, vec4(1, 0, 0, 0))
	res := best(t, x, index.Query{Text: "notes lisbon planning", Vector: vec4(1, 0, 0, 0), Explain: true})
	if len(res) != 1 || res[0].Explain == nil {
		t.Fatalf("results %v", res)
	}
	e := res[0].Explain
	if e.Rank != index.RankBest || strings.Join(e.Names, ",") != "NOTES" ||
		strings.Join(e.Words["path"], ",") != "note,lisbon" || strings.Join(e.Words["task"], ",") != "plan" ||
		strings.Join(e.Words["apps"], ",") != "note" || e.Similarity == nil || *e.Similarity != 1 || e.Keyword <= 0 {
		t.Errorf("explain %+v (similarity %v)", e, e.Similarity)
	}
	if res := best(t, x, index.Query{Text: "lisbon"}); res[0].Explain != nil {
		t.Error("explain without asking")
	}
	seed := query(t, x, index.Query{Text: "lisbon md", Explain: true, Rank: index.RankSeed})
	if len(seed) != 1 || seed[0].Explain == nil || seed[0].Explain.Rank != index.RankSeed || seed[0].Explain.Keyword != 2 ||
		strings.Join(seed[0].Explain.Words["any"], ",") != "LISBON,MD" {
		t.Errorf("seed explain %+v", seed[0].Explain)
	}
}

// TestBestUnknownRank: a rank that does not exist is KindInvalid.
func TestBestUnknownRank(t *testing.T) {
	x := openIndex(t, t.TempDir(), index.Options{})
	_, err := x.Query(t.Context(), index.Query{Text: "a", Rank: "fancy"})
	if index.KindOf(err) != index.KindInvalid {
		t.Fatalf("rank fancy: %v", err)
	}
}

// TestBestMeaningBeatsCommonWord: a file matched only by one common word
// ranks below the file closest in meaning; a query whose words hit nothing
// still returns the closest file when it stands out, even under the model's
// threshold.
func TestBestMeaningBeatsCommonWord(t *testing.T) {
	x := openIndex(t, t.TempDir(), index.Options{})
	r := rand.New(rand.NewSource(1))
	for i := range 40 {
		p := fmt.Sprintf("misc/file%02d.txt", i)
		mustCreate(t, x, p, "shell", uint64(i+1))
		// "report" is a common word: every other file has it.
		task := "weekly chores"
		if i%2 == 0 {
			task = "old report"
		}
		mustTag(t, x, p, task, nil, vec4(-1-r.Float32(), r.Float32(), r.Float32()-0.5, r.Float32()-0.5))
	}
	mustCreate(t, x, "notes/restaurants.md", "notes", 100)
	mustTag(t, x, "notes/restaurants.md", "tascas and seafood in alfama", nil, vec4(1, 0.2, 0, 0))

	res := best(t, x, index.Query{Text: "report about good places to eat", Vector: vec4(1, 0.1, 0, 0), Limit: 5})
	if len(res) == 0 || res[0].Path != "notes/restaurants.md" {
		t.Errorf("meaning should win over a common word: %v", scores(res))
	}
	// Threshold 0.5 for test-4d: a query at cosine ~0.45 from its closest file,
	// far from every other, still gets that file.
	res = best(t, x, index.Query{Text: "zzzz qqqq", Vector: vec4(0.45, 0, 0.89, 0), Limit: 3})
	if len(res) == 0 || res[0].Path != "notes/restaurants.md" {
		t.Errorf("no empty answer when the closest file stands out: %v", scores(res))
	}
	// The seed's rule gives nothing there: no word hits, nothing over the threshold.
	if res := query(t, x, index.Query{Text: "zzzz qqqq", Vector: vec4(0.45, 0, 0.89, 0), Rank: index.RankSeed}); len(res) != 0 {
		t.Errorf("seed: %v", scores(res))
	}
}

// TestBestExactNameInvariant: on random corpora, a file with an exact-name hit
// (a query word equal to its creator, a related app, its basename, or a whole
// path segment) ranks above every file matched only by meaning or by common
// words (words found in more than a tenth of the files).
func TestBestExactNameInvariant(t *testing.T) {
	const letters = "bcdfghjkmnpqrtvwxz" // no vowels: the stemmer leaves them whole
	word := func(r *rand.Rand) string {
		b := make([]byte, 6) // one length: a prefix of another word is that word
		for i := range b {
			b[i] = letters[r.Intn(len(letters))]
		}
		return string(b)
	}
	for seed := int64(1); seed <= 6; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			r := rand.New(rand.NewSource(seed))
			common := []string{word(r), word(r), word(r)}
			rare := make([]string, 30)
			for i := range rare {
				rare[i] = word(r)
			}
			x := openIndex(t, t.TempDir(), index.Options{})
			type file struct {
				path, by string
				apps     []string
				tokens   map[string]bool
			}
			var files []file
			for i := range 80 {
				dir := rare[r.Intn(len(rare))]
				if r.Intn(3) == 0 {
					dir = common[r.Intn(len(common))]
				}
				f := file{path: fmt.Sprintf("%s/%s.md", dir, rare[r.Intn(len(rare))]), by: rare[r.Intn(len(rare))]}
				if r.Intn(2) == 0 {
					f.apps = []string{rare[r.Intn(len(rare))]}
				}
				task := []string{common[r.Intn(len(common))], common[r.Intn(len(common))]}
				if r.Intn(2) == 0 {
					task = append(task, rare[r.Intn(len(rare))])
				}
				f.path = fmt.Sprintf("f%02d/%s", i, f.path)
				f.tokens = map[string]bool{}
				for _, w := range strings.FieldsFunc(strings.Join(append(append([]string{f.path, f.by}, f.apps...), task...), " "), func(c rune) bool { return !strings.ContainsRune(letters, c) && (c < '0' || c > '9') }) {
					f.tokens[w] = true
				}
				mustCreate(t, x, f.path, f.by, uint64(i+1))
				mustTag(t, x, f.path, strings.Join(task, " "), f.apps, vec4(r.Float32()-0.5, r.Float32()-0.5, r.Float32()-0.5, r.Float32()-0.5))
				files = append(files, f)
			}
			// Which words are common: in more than a tenth of the files.
			df := map[string]int{}
			for _, f := range files {
				for w := range f.tokens {
					df[w]++
				}
			}
			for i := range 60 {
				name := rare[r.Intn(len(rare))]
				words := []string{name}
				for range r.Intn(3) {
					words = append(words, common[r.Intn(len(common))])
				}
				r.Shuffle(len(words), func(i, j int) { words[i], words[j] = words[j], words[i] })
				q := index.Query{Text: strings.Join(words, " ")}
				if r.Intn(2) == 0 {
					q.Vector = vec4(r.Float32()-0.5, r.Float32()-0.5, r.Float32()-0.5, r.Float32()-0.5)
				}
				res := best(t, x, q)
				named := map[string]bool{}
				for _, f := range files {
					base := strings.TrimSuffix(f.path[strings.LastIndex(f.path, "/")+1:], ".md")
					segs := strings.Split(f.path, "/")
					for _, w := range words {
						hit := f.by == w || base == w || segs[0] == w || segs[1] == w || f.path == w
						for _, a := range f.apps {
							hit = hit || a == w
						}
						if hit {
							named[f.path] = true
						}
					}
				}
				// Files matched by meaning or common words alone: no name hit and
				// no query word that is rare in the corpus among their tokens.
				weakOnly := func(f file) bool {
					if named[f.path] {
						return false
					}
					for _, w := range words {
						if f.tokens[w] && df[w]*10 <= len(files) {
							return false
						}
					}
					return true
				}
				lastNamed, firstWeak := -1, math.MaxInt
				for i, rr := range res {
					for _, f := range files {
						if f.path != rr.Path {
							continue
						}
						if named[f.path] {
							lastNamed = i
						} else if weakOnly(f) && i < firstWeak {
							firstWeak = i
						}
					}
				}
				for p := range named {
					if rankOf(res, p) < 0 {
						t.Fatalf("query %d %q: named file %s not returned", i, q.Text, p)
					}
				}
				if lastNamed > firstWeak {
					t.Fatalf("query %d %q: a file matched by meaning or common words alone (rank %d) above a named file (rank %d): %v", i, q.Text, firstWeak, lastNamed, scores(res))
				}
			}
		})
	}
}

// TestBestMiniLMClientVectors: client-supplied all-MiniLM-L6-v2 vectors
// (threshold 0.2) in the best mode: every file at or above the threshold is
// returned, in cosine order, before any other.
func TestBestMiniLMClientVectors(t *testing.T) {
	ref := embedtest.LoadMiniLMRef(t)
	x := openIndex(t, t.TempDir(), index.Options{})
	q := ref.Items[0]
	type want struct {
		path string
		cos  float64
	}
	var wants []want
	for _, it := range ref.Items[1:] {
		p := "docs/" + it.Group + "/" + it.ID
		mustTag(t, x, p, it.Title, nil, &index.Vector{Model: embed.MiniLM.Name, Values: it.Vector})
		if c := cosine64(q.Vector, it.Vector); c >= embed.MiniLM.Threshold {
			wants = append(wants, want{p, c})
		}
	}
	sort.Slice(wants, func(i, j int) bool { return wants[i].cos > wants[j].cos })
	got := best(t, x, index.Query{Vector: &index.Vector{Model: embed.MiniLM.Name, Values: q.Vector}, Explain: true})
	if len(got) < len(wants) || len(wants) == 0 {
		t.Fatalf("%d results, want at least %d", len(got), len(wants))
	}
	for i, w := range wants {
		g := got[i]
		if g.Path != w.path || g.Explain.Similarity == nil || math.Abs(*g.Explain.Similarity-w.cos) > 1e-5 {
			t.Errorf("rank %d: %s, want %s %.6f", i, g.Path, w.path, w.cos)
		}
	}
	// With text too, the same vectors rank: the query words add keyword evidence.
	got = best(t, x, index.Query{Text: q.Title, Vector: &index.Vector{Model: embed.MiniLM.Name, Values: q.Vector}, Limit: 3})
	if len(got) == 0 || !strings.HasPrefix(got[0].Path, "docs/"+q.Group+"/") {
		t.Errorf("text + MiniLM vector: %v", scores(got))
	}
}
