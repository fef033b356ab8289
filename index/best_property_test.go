package index_test

import (
	"fmt"
	"math"
	"math/rand"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/semfs/semfs/index"
)

// Random corpora for the best rank's promises (best.go). Words are six
// consonants: the stemmer leaves them whole and, all of one length, none is
// a prefix of another, so a query word matches exactly the files holding it
// as a token.

const consonants = "bcdfghjkmnpqrtvwxz"

func rword(r *rand.Rand) string {
	b := make([]byte, 6)
	for i := range b {
		b[i] = consonants[r.Intn(len(consonants))]
	}
	return string(b)
}

type propFile struct {
	path, by, task string
	apps           []string
	tokens         map[string]bool // the words of path, creator, task and apps
}

// ownNames: the file's full path, basename with and without extension,
// creator and related apps (never a directory).
func (f propFile) ownNames() []string {
	base := f.path[strings.LastIndex(f.path, "/")+1:]
	return append([]string{f.path, base, strings.TrimSuffix(base, ".md"), f.by}, f.apps...)
}

func (f propFile) named(words []string) bool {
	for _, w := range words {
		for _, n := range f.ownNames() {
			if strings.EqualFold(n, w) {
				return true
			}
		}
	}
	return false
}

func (f propFile) isApp(w string) bool { return f.by == w || slices.Contains(f.apps, w) }

// matched returns the query words among f's tokens.
func (f propFile) matched(words []string) []string {
	var out []string
	for _, w := range words {
		if f.tokens[w] {
			out = append(out, w)
		}
	}
	return out
}

// sharesTerm reports whether f holds a term of one of words: a run of
// letters or of digits, as the index splits them, so a full path's "f15",
// "d01" and "md" are terms that other paths hold apart ("f29/d01/x.md"),
// word evidence of their own (a several-term word's scattered share).
func (f propFile) sharesTerm(words []string) bool {
	runs := func(s string) []string {
		var out []string
		cur, digit := []rune{}, false
		for _, c := range strings.ToLower(s) {
			d, l := unicode.IsDigit(c), unicode.IsLetter(c)
			if len(cur) > 0 && (!(d || l) || d != digit) {
				out, cur = append(out, string(cur)), cur[:0]
			}
			if d || l {
				cur, digit = append(cur, c), d
			}
		}
		if len(cur) > 0 {
			out = append(out, string(cur))
		}
		return out
	}
	have := runs(strings.Join(append([]string{f.path, f.by, f.task}, f.apps...), " "))
	for _, w := range words {
		for _, t := range runs(w) {
			if slices.Contains(have, t) {
				return true
			}
		}
	}
	return false
}

func addPropFile(t *testing.T, x *index.Index, i int, f propFile, v *index.Vector) propFile {
	f.tokens = map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.Join(append([]string{f.path, f.by, f.task}, f.apps...), " "), func(c rune) bool {
		return !strings.ContainsRune(consonants, c)
	}) {
		f.tokens[w] = true
	}
	mustCreate(t, x, f.path, f.by, uint64(i+1))
	mustTag(t, x, f.path, f.task, f.apps, v)
	return f
}

func randVec4(r *rand.Rand) *index.Vector {
	return vec4(r.Float32()-0.5, r.Float32()-0.5, r.Float32()-0.5, r.Float32()-0.5)
}

// idfCoverage is the IDF-weighted share of words that the file's matched
// words hold, with BM25's idf over the files' tokens (a word found nowhere
// counts as the rarest), as best.go weighs them.
func idfCoverage(files []propFile, words, matched []string) float64 {
	n := float64(len(files))
	idf := func(w string) float64 {
		df := 0.0
		for _, f := range files {
			if f.tokens[w] {
				df++
			}
		}
		return math.Log(1 + (n-df+0.5)/(df+0.5))
	}
	var all, got float64
	for _, w := range words {
		all += idf(w)
		if slices.Contains(matched, w) {
			got += idf(w)
		}
	}
	return got / all
}

// TestBestCoverageBeatsFolder (issue 27, item 1): on random corpora where a
// handful of files share each directory name, a file matching more of the
// query's informative words ranks above a file whose evidence includes one
// directory name equal to a query word, whenever the IDF-weighted coverage
// gap is more than what strength (1 − p) and meaning (λ) can add: keyword-only
// and with vectors. Under the first pass, a directory name was an exact-name
// hit that outranked coverage.
func TestBestCoverageBeatsFolder(t *testing.T) {
	checked := 0
	for seed := int64(1); seed <= 6; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			r := rand.New(rand.NewSource(seed))
			pool := make([]string, 40)
			for i := range pool {
				pool[i] = rword(r)
			}
			folders := pool[:6]
			apps := []string{rword(r), rword(r), rword(r)} // never in a query
			x := openIndex(t, t.TempDir(), index.Options{})
			var files []propFile
			for i := range 100 {
				dir := fmt.Sprintf("d%02d", i) // digits: no query word
				if r.Intn(4) == 0 {
					dir = folders[r.Intn(len(folders))]
				}
				var task []string
				for range 1 + r.Intn(3) {
					task = append(task, pool[6+r.Intn(len(pool)-6)])
				}
				f := propFile{path: fmt.Sprintf("f%02d/%s/%s.md", i, dir, pool[r.Intn(len(pool))]), by: apps[r.Intn(len(apps))], task: strings.Join(task, " ")}
				files = append(files, addPropFile(t, x, i, f, randVec4(r)))
			}
			for qi := range 80 {
				d := folders[r.Intn(len(folders))]
				words := []string{d}
				for range 1 + r.Intn(3) {
					if w := pool[6+r.Intn(len(pool)-6)]; !slices.Contains(words, w) {
						words = append(words, w)
					}
				}
				r.Shuffle(len(words), func(i, j int) { words[i], words[j] = words[j], words[i] })
				q := index.Query{Text: strings.Join(words, " ")}
				lambda := 0.0
				if qi%2 == 1 {
					q.Vector = randVec4(r)
				}
				res := best(t, x, q)
				for _, a := range files {
					ma := a.matched(words)
					if a.named(words) || len(ma) == 0 {
						continue
					}
					covA := idfCoverage(files, words, ma)
					if q.Vector != nil {
						// The best kw is at least a's, and λ only falls as it grows.
						lambda = index.FusionLambda(index.Presence * covA)
					}
					for _, b := range files {
						mb := b.matched(words)
						if b.named(words) || !strings.Contains(b.path, "/"+d+"/") || len(mb) >= len(ma) {
							continue
						}
						covB := idfCoverage(files, words, mb)
						if index.Presence*covA-covB <= lambda {
							continue // within what strength and meaning may reorder
						}
						checked++
						ra, rb := rankOf(res, a.path), rankOf(res, b.path)
						if ra < 0 || (rb >= 0 && rb < ra) {
							t.Fatalf("query %q: %s (matches %v) at %d below %s (matches %v, folder %s) at %d: %v",
								q.Text, a.path, ma, ra, b.path, mb, d, rb, scores(res))
						}
					}
				}
			}
		})
	}
	if checked < 200 {
		t.Fatalf("only %d pairs checked: the corpora test too little", checked)
	}
}

// TestBestNamePromise (issue 27, item 2): on random corpora, (1) a file whose
// creator, related app, basename (with or without extension) or full path
// equals a query word ranks above every file matched by meaning alone or by
// stop words alone; (2) at equal coverage (the same query words matched), a
// file whose creator or related app is a query word ranks above a file of
// another app, even one holding that word as a directory name.
func TestBestNamePromise(t *testing.T) {
	stops := []string{"the", "of", "and", "to"}
	var floors, twins int
	for seed := int64(1); seed <= 6; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			r := rand.New(rand.NewSource(seed))
			pool := make([]string, 30)
			for i := range pool {
				pool[i] = rword(r)
			}
			appNames := pool[:5]
			x := openIndex(t, t.TempDir(), index.Options{})
			var files []propFile
			for i := range 90 {
				dir := fmt.Sprintf("d%02d", i%7)
				if r.Intn(3) == 0 {
					dir = appNames[r.Intn(len(appNames))] // an app's name as another app's folder
				}
				task := []string{stops[r.Intn(len(stops))]}
				for range r.Intn(3) {
					task = append(task, pool[r.Intn(len(pool))], stops[r.Intn(len(stops))])
				}
				f := propFile{path: fmt.Sprintf("f%02d/%s/%s.md", i, dir, pool[5+r.Intn(len(pool)-5)]), by: appNames[r.Intn(len(appNames))], task: strings.Join(task, " ")}
				if r.Intn(3) == 0 {
					f.apps = []string{appNames[r.Intn(len(appNames))]}
				}
				files = append(files, addPropFile(t, x, i, f, randVec4(r)))
			}
			for qi := range 80 {
				// A name (an app, a basename, a full path) with stop words,
				// other words of the pool, or a word found nowhere.
				var name string
				switch f := files[r.Intn(len(files))]; r.Intn(4) {
				case 0:
					name = f.path
				case 1:
					name = f.ownNames()[2]
				default:
					name = appNames[r.Intn(len(appNames))]
				}
				words := []string{name}
				for range r.Intn(3) {
					switch r.Intn(3) {
					case 0:
						words = append(words, stops[r.Intn(len(stops))])
					case 1:
						words = append(words, pool[5+r.Intn(len(pool)-5)])
					default:
						words = append(words, "zzzzzz")
					}
				}
				r.Shuffle(len(words), func(i, j int) { words[i], words[j] = words[j], words[i] })
				q := index.Query{Text: strings.Join(words, " ")}
				if qi%2 == 0 {
					q.Vector = randVec4(r)
				}
				res := best(t, x, q)
				informative := slices.DeleteFunc(slices.Clone(words), func(w string) bool { return slices.Contains(stops, w) })
				for _, a := range files {
					if !a.named(words) {
						continue
					}
					ra := rankOf(res, a.path)
					if ra < 0 {
						t.Fatalf("query %q: named file %s not returned", q.Text, a.path)
					}
					for _, b := range files {
						rb := rankOf(res, b.path)
						if b.named(words) || rb < 0 {
							continue
						}
						// (1) b matched by meaning or stop words alone.
						if !b.sharesTerm(informative) {
							floors++
							if rb < ra {
								t.Fatalf("query %q: %s (meaning or stop words only) at %d above named %s at %d: %v", q.Text, b.path, rb, a.path, ra, scores(res))
							}
						}
						// (2) the same query words matched; a's app is one, b's is not.
						appWord := slices.ContainsFunc(words, a.isApp)
						if appWord && !slices.ContainsFunc(words, b.isApp) && slices.Equal(a.matched(informative), b.matched(informative)) &&
							!slices.ContainsFunc(words, func(w string) bool { return w != name && (a.named([]string{w}) && !a.isApp(w)) }) {
							twins++
							if rb < ra {
								t.Fatalf("query %q: %s (app %s, matches %v) at %d below %s (app %s, matches %v) at %d: %v",
									q.Text, a.path, a.by, a.matched(informative), ra, b.path, b.by, b.matched(informative), rb, scores(res))
							}
						}
					}
				}
			}
		})
	}
	if floors < 500 || twins < 200 {
		t.Fatalf("only %d meaning/stop-word pairs and %d same-coverage pairs checked", floors, twins)
	}
}

// TestBestNoVectorIsNoEvidence: a file matched by the query's words but with
// no vector (most of a real tree: only tagged files are embedded) is not
// ranked as the least similar file. On random corpora whose word-matched
// files all have the same word evidence, it ranks above every such file
// whose meaning (Explain.Semantic) is below the mean of theirs, and below
// every one above it.
func TestBestNoVectorIsNoEvidence(t *testing.T) {
	checked := 0
	for seed := int64(1); seed <= 6; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			r := rand.New(rand.NewSource(seed))
			x := openIndex(t, t.TempDir(), index.Options{})
			w, other := rword(r), rword(r)
			i := 0
			bare := map[string]bool{}
			// Paths of one shape ("d/<w>_<k>.md", k one digit): every match
			// of w has the same BM25 score, so the same kw.
			for k := range 10 {
				p := fmt.Sprintf("%s/%s_%d.md", rword(r), w, k)
				var v *index.Vector
				if r.Intn(3) > 0 {
					v = randVec4(r)
				} else {
					bare[p] = true
				}
				addPropFile(t, x, i, propFile{path: p, by: "app"}, v)
				i++
			}
			for k := range 10 {
				addPropFile(t, x, i, propFile{path: fmt.Sprintf("%s/%s_%d.md", rword(r), other, k), by: "app"}, randVec4(r))
				i++
			}
			res := best(t, x, index.Query{Text: w, Vector: randVec4(r), Explain: true})
			var sum float64
			n := 0
			for _, re := range res {
				if !bare[re.Path] && re.Explain.Keyword > 0 {
					sum += re.Explain.Semantic
					n++
				}
			}
			if n == 0 || len(bare) == 0 {
				t.Skip("no file with a vector or none without")
			}
			mean := sum / float64(n)
			for _, a := range res {
				if !bare[a.Path] {
					continue
				}
				ra := rankOf(res, a.Path)
				for _, b := range res {
					if bare[b.Path] || b.Explain.Keyword == 0 || math.Abs(b.Explain.Semantic-mean) < 1e-9 {
						continue
					}
					checked++
					if rb := rankOf(res, b.Path); (b.Explain.Semantic < mean) != (ra < rb) {
						t.Errorf("query %q: %s (no vector) at %d, %s (semantic %.3f, mean %.3f) at %d: %v",
							w, a.Path, ra, b.Path, b.Explain.Semantic, mean, rb, scores(res))
					}
				}
			}
		})
	}
	if checked < 20 {
		t.Fatalf("only %d pairs checked", checked)
	}
}
