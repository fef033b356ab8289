package index_test

import (
	"context"
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/semfs/semfs/index"
)

// The brute-force scorer: the seed's rule written the slow, obvious way, sharing
// nothing with the index but Similarity (the cosine formula itself, tested
// separately). The property test checks Query equals it exactly.

type modelFile struct {
	rec index.Record
	vec []float32 // testModel vector or nil
}

// bruteWords: whitespace split; leading/trailing punctuation trimmed unless that
// empties the word.
func bruteWords(q string) []string {
	var out []string
	for _, w := range strings.Fields(q) {
		r := []rune(w)
		i, j := 0, len(r)
		for i < j && unicode.IsPunct(r[i]) {
			i++
		}
		for j > i && unicode.IsPunct(r[j-1]) {
			j--
		}
		if i < j {
			w = string(r[i:j])
		}
		out = append(out, w)
	}
	return out
}

// containsFold: does some run of runes of hay equal w under strings.EqualFold?
func containsFold(hay, w string) bool {
	n := utf8.RuneCountInString(w)
	r := []rune(hay)
	for i := 0; i+n <= len(r); i++ {
		if strings.EqualFold(string(r[i:i+n]), w) {
			return true
		}
	}
	return false
}

func brute(files map[string]modelFile, q index.Query, threshold float64) []index.Result {
	words := bruteWords(q.Text)
	type hit struct {
		res index.Result
		pts int
	}
	var hits []hit
	for _, f := range files {
		fields := append([]string{f.rec.Path, f.rec.CreatedBy, f.rec.Task}, f.rec.RelatedApps...)
		pts := 0
		for _, w := range words {
			for _, fl := range fields {
				if fl != "" && containsFold(fl, w) {
					pts++
					break
				}
			}
		}
		sim, sem := 0.0, false
		if q.Vector != nil && f.vec != nil {
			sim = index.Similarity(q.Vector.Values, f.vec)
			sem = sim >= threshold
		}
		if pts >= 1 || sem {
			hits = append(hits, hit{index.Result{Record: f.rec, Score: float64(pts) + sim}, pts})
		}
	}
	sort.Slice(hits, func(i, j int) bool {
		a, b := hits[i], hits[j]
		if a.res.Score != b.res.Score {
			return a.res.Score > b.res.Score
		}
		if a.pts != b.pts {
			return a.pts > b.pts
		}
		return a.res.Path < b.res.Path
	})
	if q.Limit > 0 && len(hits) > q.Limit {
		hits = hits[:q.Limit]
	}
	out := make([]index.Result, len(hits))
	for i, h := range hits {
		out[i] = h.res
	}
	return out
}

// Alphabet with case pairs, folding oddities (ſ/s/S, K/k/K, σ/ς/Σ, ǅ, ß/ẞ, İ/ı),
// accents, CJK, emoji, punctuation and a space: words that are substrings of
// others come up constantly.
var alphabet = []rune("aAbBsSſkKKσςΣǄǅǆßẞİıiIéÉ日本🚀-._,/() 0")

func randString(r *rand.Rand, min, max int) string {
	n := min + r.Intn(max-min+1)
	var b strings.Builder
	for range n {
		b.WriteRune(alphabet[r.Intn(len(alphabet))])
	}
	return b.String()
}

func randPath(r *rand.Rand) string {
	parts := make([]string, 1+r.Intn(3))
	for i := range parts {
		for {
			p := strings.ReplaceAll(randString(r, 1, 6), "/", "_")
			if p != "." && p != ".." {
				parts[i] = p
				break
			}
		}
	}
	return strings.Join(parts, "/")
}

func randVec(r *rand.Rand) []float32 {
	for {
		v := []float32{float32(r.Intn(5) - 1), float32(r.Intn(5) - 1), float32(r.Intn(3)), float32(r.Intn(2))}
		if v[0] != 0 || v[1] != 0 || v[2] != 0 || v[3] != 0 {
			return v
		}
	}
}

// randQuery draws words mostly from the corpus (substrings, re-cased), sometimes
// random, with punctuation around them.
func randQuery(r *rand.Rand, files map[string]modelFile, paths []string) index.Query {
	var words []string
	for range 1 + r.Intn(4) {
		var w string
		if len(paths) > 0 && r.Intn(4) > 0 {
			f := files[paths[r.Intn(len(paths))]]
			src := []string{f.rec.Path, f.rec.CreatedBy, f.rec.Task}
			src = append(src, f.rec.RelatedApps...)
			s := []rune(src[r.Intn(len(src))])
			if len(s) == 0 {
				continue
			}
			i := r.Intn(len(s))
			j := i + 1 + r.Intn(min(5, len(s)-i))
			w = string(s[i:j])
			switch r.Intn(3) {
			case 0:
				w = strings.ToUpper(w)
			case 1:
				w = strings.ToLower(w)
			}
		} else {
			w = randString(r, 1, 4)
		}
		if r.Intn(5) == 0 {
			w = "(" + w + ")," // trimmed punctuation
		}
		words = append(words, w)
	}
	q := index.Query{Text: strings.Join(words, " "), Rank: index.RankSeed} // the brute force is the seed's rule
	if r.Intn(3) == 0 {
		q.Limit = 1 + r.Intn(5)
	}
	if r.Intn(2) == 0 {
		q.Vector = &index.Vector{Model: testModel.Name, Values: randVec(r)}
	}
	if len(bruteWords(q.Text)) == 0 && q.Vector == nil {
		q.Text = "a"
	}
	return q
}

func TestQueryEqualsBruteForce(t *testing.T) {
	for seed := int64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			r := rand.New(rand.NewSource(seed))
			x := openIndex(t, t.TempDir(), index.Options{})
			files := map[string]modelFile{}
			creators := []string{"", "code-editor", "Browser", "ſhell", "日本-app", "ab"}
			var ino uint64
			for range 60 {
				p := randPath(r)
				if isAncestorOrDescendant(files, p) {
					continue
				}
				ino++
				by := creators[r.Intn(len(creators))]
				if err := x.Create(p, by, ino, t0); err != nil {
					t.Fatal(err)
				}
				if f, ok := files[p]; ok { // idempotent create keeps the first creator
					files[p] = f
					continue
				}
				files[p] = modelFile{rec: index.Record{Path: p, CreatedBy: by, RelatedApps: []string{}}}
				if r.Intn(3) > 0 {
					task := ""
					if r.Intn(4) > 0 {
						task = randString(r, 0, 12)
					}
					var apps []string
					for range r.Intn(3) {
						apps = append(apps, randString(r, 0, 5))
					}
					var v *index.Vector
					if r.Intn(2) == 0 {
						v = &index.Vector{Model: testModel.Name, Values: randVec(r)}
					}
					mustTag(t, x, p, task, apps, v)
					f := files[p]
					f.rec.Task, f.rec.RelatedApps = task, nonEmpty(apps)
					if v != nil {
						f.vec = v.Values
					}
					files[p] = f
				}
			}
			// Mutations: renames (files and directories), removes, retags.
			for range 15 {
				paths := sortedPaths(files)
				p := paths[r.Intn(len(paths))]
				switch r.Intn(3) {
				case 0: // remove a file or the directory holding it
					target := p
					if i := strings.LastIndexByte(p, '/'); i > 0 && r.Intn(2) == 0 {
						target = p[:i]
					}
					if err := x.Remove(target); err != nil {
						t.Fatal(err)
					}
					for q := range files {
						if q == target || strings.HasPrefix(q, target+"/") {
							delete(files, q)
						}
					}
				case 1: // rename a file or its directory to a fresh top-level name
					src := p
					if i := strings.IndexByte(p, '/'); i > 0 && r.Intn(2) == 0 {
						src = p[:i]
					}
					dst := "moved" + randString(r, 1, 3)
					dst = strings.ReplaceAll(dst, "/", "_")
					if isAncestorOrDescendant(files, dst) || strings.HasPrefix(dst, src+"/") {
						continue
					}
					if err := x.Rename(src, dst, t0); err != nil {
						t.Fatal(err)
					}
					for q := range files {
						if q == dst || strings.HasPrefix(q, dst+"/") {
							delete(files, q)
						}
					}
					for q, f := range snapshot(files) {
						if q == src || strings.HasPrefix(q, src+"/") {
							delete(files, q)
							f.rec.Path = dst + q[len(src):]
							files[f.rec.Path] = f
						}
					}
				case 2:
					task := randString(r, 1, 8)
					mustTag(t, x, p, task, []string{"", "Browser"}, nil)
					f := files[p]
					f.rec.Task, f.rec.RelatedApps, f.vec = task, []string{"Browser"}, nil
					files[p] = f
				}
			}
			paths := sortedPaths(files)
			for i := range 250 {
				q := randQuery(r, files, paths)
				want := brute(files, q, testModel.Threshold)
				// Every keyword plan (Bleve candidates, full scan, the planner's
				// choice) must give exactly the brute-force answer.
				for _, plan := range []string{"bleve", "scan", "auto"} {
					index.ForceKeywordPlan(x, plan)
					got, err := x.Query(context.Background(), q)
					if err != nil {
						t.Fatalf("query %d %q: %v", i, q.Text, err)
					}
					if !sameResults(got, want) {
						t.Fatalf("query %d %q (vector %v, limit %d, plan %s):\n got  %v\n want %v", i, q.Text, q.Vector, q.Limit, plan, resultsString(got), resultsString(want))
					}
				}
			}
		})
	}
}

// nonEmpty: Tag drops empty app names (documented).
func nonEmpty(apps []string) []string {
	out := []string{}
	for _, a := range apps {
		if a != "" {
			out = append(out, a)
		}
	}
	return out
}

func snapshot(m map[string]modelFile) map[string]modelFile {
	c := make(map[string]modelFile, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

func sortedPaths(m map[string]modelFile) []string {
	out := make([]string, 0, len(m))
	for p := range m {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// isAncestorOrDescendant keeps the corpus a valid tree: no file is also a directory.
func isAncestorOrDescendant(files map[string]modelFile, p string) bool {
	for q := range files {
		if strings.HasPrefix(q, p+"/") || strings.HasPrefix(p, q+"/") {
			return true
		}
	}
	return false
}

func sameResults(a, b []index.Result) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.Path != y.Path || x.Score != y.Score || x.CreatedBy != y.CreatedBy || x.Task != y.Task ||
			strings.Join(x.RelatedApps, "\x00") != strings.Join(y.RelatedApps, "\x00") || len(x.RelatedApps) != len(y.RelatedApps) {
			return false
		}
	}
	return true
}

func resultsString(rs []index.Result) string {
	var b strings.Builder
	for _, r := range rs {
		fmt.Fprintf(&b, "\n   %q %.6f", r.Path, r.Score)
	}
	return b.String()
}
