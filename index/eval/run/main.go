// Command run prints the ranking evaluation (`make eval`): for each sandbox dev
// set and the known-item sets (man pages, Debian packages), nDCG@5, recall@10
// and MRR@10 per query class (and the strict paraphrases, eval.Strict, as a
// class of their own), for each rank mode, with the in-process USE-lite
// model and keyword-only. With -curve it prints instead the calibration of the
// best rank's weight of meaning (index.Fusion): nDCG@5 per class (MRR@10 for
// the known-item sets) over a grid of weights, with USE-lite. With -failures
// it prints instead, for the sandbox sets with USE-lite, each query the best
// rank answers worse than the seed's rule or below nDCG@5 0.5: its top files
// and where its wanted files ranked, each with why it matched (Explain): the
// starting point of ranking work.
//
//	go run ./index/eval/run [-model embed/model/dist] [-data index/eval/testdata] [-curve | -failures]
package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/semfs/semfs/embed"
	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/index/eval"
)

func main() {
	model := flag.String("model", "", "USE-lite model directory (default: as the daemon resolves it)")
	data := flag.String("data", filepath.Join("index", "eval", "testdata"), "data set directory")
	curve := flag.Bool("curve", false, "print the calibration curve of the weight of meaning instead")
	only := flag.String("sets", "", "comma-separated names of the sets to run (default: all)")
	grid := flag.String("grid", "0,0.05,0.1,0.2;0,0.5,1;0,0.25,0.4,1", "with -curve: the weights tried, \"ties;rescues;weaks\" (index.Fusion)")
	contents := flag.Int("contents", 500, "pages of the content known-item set (0: skip it)")
	man := flag.String("man", "/usr/share/man", "with -contents: the man page root the set is generated from")
	failures := flag.Bool("failures", false, "print the sandbox queries best answers worse than seed (nDCG@5 or MRR@10) or below nDCG@5 0.5, with explanations, instead")
	every := flag.Bool("every", false, "with -failures: every query, not only those (to compare two builds query by query)")
	flag.Parse()
	var err error
	if *failures {
		err = printFailures(*model, *data, *only, *every)
	} else {
		err = run(*model, *data, *curve, *only, *grid, *contents, *man)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "eval:", err)
		os.Exit(1)
	}
}

type namedSet struct {
	name   string
	s      eval.Set
	cls    []string
	strict []eval.Judged // eval.Strict(s): reported as their own class
}

func run(modelDir, data string, curve bool, only, grid string, contents int, man string) error {
	ctx := context.Background()
	var sets []namedSet
	for _, sb := range eval.Sandboxes() {
		s, err := eval.LoadSandbox(data, sb)
		if err != nil {
			return err
		}
		strict := eval.Strict(s)
		fmt.Printf("%s: %d files, %d queries (%d paraphrases share no word with a wanted file: %s)\n", sb.Name, len(s.Files), len(s.Queries), len(strict), eval.StrictClass)
		sets = append(sets, namedSet{sb.Name, s, present(s), strict})
	}
	for _, k := range []struct{ name, file string }{{"man", "manpages.txt"}, {"packages", "packages.txt"}} {
		s, err := eval.LoadKnownItems(data, k.file)
		if err != nil {
			return err
		}
		fmt.Printf("%s: %d known items\n", k.name, len(s.Files))
		sets = append(sets, namedSet{k.name, s, []string{eval.KnownItem}, nil})
	}
	fmt.Println()
	if only != "" {
		want := strings.Split(only, ",")
		sets = slices.DeleteFunc(sets, func(s namedSet) bool { return !slices.Contains(want, s.name) })
	}
	use, tmp, err := setUp(modelDir)
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if curve {
		return printCurve(ctx, tmp, sets, use, grid)
	}
	if contents > 0 && (only == "" || slices.Contains(strings.Split(only, ","), "contents")) {
		if err := printContents(ctx, tmp, man, contents, use); err != nil {
			return err
		}
	}
	fmt.Printf("%-10s %-12s %-5s %-11s %4s %7s %7s %7s\n", "set", "vectors", "rank", "class", "n", "nDCG@5", "R@10", "MRR@10")
	for _, set := range sets {
		for _, m := range []struct {
			name string
			emb  embed.Embedder
		}{{"use-lite", use}, {"keyword-only", nil}} {
			x, err := eval.Build(ctx, filepath.Join(tmp, set.name+"-"+m.name), set.s.Files, m.emb)
			if err != nil {
				return err
			}
			for _, rank := range []string{index.RankSeed, index.RankBest} {
				res, err := eval.Evaluate(ctx, x, set.s.Queries, rank)
				if err == nil && len(set.strict) > 0 {
					var st map[string]eval.Scores
					st, err = eval.Evaluate(ctx, x, set.strict, rank)
					res[eval.StrictClass] = st[eval.StrictClass]
				}
				if err != nil {
					x.Close()
					return err
				}
				for _, c := range withStrict(set) {
					s := res[c]
					fmt.Printf("%-10s %-12s %-5s %-11s %4d %7.3f %7.3f %7.3f\n", set.name, m.name, rank, c, s.N, s.NDCG5, s.Recall10, s.MRR10)
				}
			}
			if err := x.Close(); err != nil {
				return err
			}
		}
	}
	return nil
}

// setUp loads the USE-lite model (from modelDir, or where the daemon finds
// it) and makes the directory the evaluation's indexes are built in, which
// the caller removes.
func setUp(modelDir string) (embed.Embedder, string, error) {
	dir, _ := embed.ResolveModelDir(modelDir)
	use, err := embed.LoadUSELite(dir)
	if err != nil {
		return nil, "", fmt.Errorf("USE-lite model (run `make model`): %w", err)
	}
	tmp, err := os.MkdirTemp("", "semfs-eval")
	return use, tmp, err
}

// present returns the classes of Classes that s has queries of, then "all".
func present(s eval.Set) []string {
	has := map[string]bool{}
	for _, q := range s.Queries {
		has[q.Class] = true
	}
	var out []string
	for _, c := range eval.Classes {
		if has[c] {
			out = append(out, c)
		}
	}
	return append(out, "all")
}

// withStrict is set's classes with eval.StrictClass before "all" when it has
// strict paraphrases.
func withStrict(set namedSet) []string {
	if len(set.strict) == 0 {
		return set.cls
	}
	n := len(set.cls)
	return append(slices.Clone(set.cls[:n-1]), eval.StrictClass, set.cls[n-1])
}

// parseGrid reads the calibration grid "ties;rescues;weaks", each a
// comma-separated list (index.Fusion): Tie, the weight of meaning when some
// file covers Weak of the query's words or more, Rescue, what it gains as the
// best coverage falls from Weak to nothing.
func parseGrid(s string) (ties, rescues, weaks []float64, err error) {
	parts := strings.Split(s, ";")
	if len(parts) != 3 {
		return nil, nil, nil, fmt.Errorf("grid %q: want ties;rescues;weaks", s)
	}
	list := func(l string) ([]float64, error) {
		var out []float64
		for _, f := range strings.Split(l, ",") {
			v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
			if err != nil {
				return nil, fmt.Errorf("grid %q: %w", s, err)
			}
			out = append(out, v)
		}
		return out, nil
	}
	if ties, err = list(parts[0]); err != nil {
		return nil, nil, nil, err
	}
	if rescues, err = list(parts[1]); err != nil {
		return nil, nil, nil, err
	}
	weaks, err = list(parts[2])
	return ties, rescues, weaks, err
}

func printCurve(ctx context.Context, tmp string, sets []namedSet, use embed.Embedder, grid string) error {
	curveTies, curveRescues, curveWeaks, err := parseGrid(grid)
	if err != nil {
		return err
	}
	for _, set := range sets {
		x, err := eval.Build(ctx, filepath.Join(tmp, set.name+"-curve"), set.s.Files, use)
		if err != nil {
			return err
		}
		metric := "nDCG@5"
		if set.cls[0] == eval.KnownItem {
			metric = "MRR@10"
		}
		fmt.Printf("%s, %s by weight of meaning (tie, rescue, weak)\n%-16s", set.name, metric, "tie rescue weak")
		for _, c := range withStrict(set) {
			fmt.Printf(" %11s", c)
		}
		fmt.Println()
		for _, tie := range curveTies {
			for _, rescue := range curveRescues {
				for _, weak := range curveWeaks {
					if (rescue == 0) != (weak == 0) && len(curveWeaks) > 1 {
						continue // no rescue: every weak is the same point
					}
					fu := index.Fusion{Tie: tie, Rescue: rescue, Weak: weak}
					res, err := eval.EvaluateFusion(ctx, x, set.s.Queries, fu)
					if err == nil && len(set.strict) > 0 {
						var st map[string]eval.Scores
						st, err = eval.EvaluateFusion(ctx, x, set.strict, fu)
						res[eval.StrictClass] = st[eval.StrictClass]
					}
					if err != nil {
						x.Close()
						return err
					}
					fmt.Printf("%4.2f %5.2f %4.2f ", tie, rescue, weak)
					for _, c := range withStrict(set) {
						v := res[c].NDCG5
						if metric == "MRR@10" {
							v = res[c].MRR10
						}
						fmt.Printf(" %11.3f", v)
					}
					fmt.Println()
				}
			}
		}
		fmt.Println()
		if err := x.Close(); err != nil {
			return err
		}
	}
	return nil
}

// printContents scores the content known-item set (eval.EvaluateContents),
// generated now from the machine's man pages.
func printContents(ctx context.Context, tmp, man string, n int, use embed.Embedder) error {
	docs, err := eval.ManDocs(man, n)
	if err != nil {
		return err
	}
	if len(docs) == 0 {
		fmt.Printf("contents: no man pages under %s (apt-get install man-db manpages); skipped\n\n", man)
		return nil
	}
	fmt.Printf("contents: %d man pages as pages/NNNN.txt (NAME section and command name removed), query = the NAME description; MRR@10\n", len(docs))
	fmt.Printf("%-12s %9s %9s %9s %7s %9s %9s\n", "vectors", "seed", "best-tags", "best", "files", "passages", "embedded")
	for _, m := range []struct {
		name string
		emb  embed.Embedder
	}{{"keyword-only", nil}, {"use-lite", use}} {
		cs, err := eval.EvaluateContents(ctx, filepath.Join(tmp, "contents-"+m.name), docs, m.emb)
		if err != nil {
			return err
		}
		fmt.Printf("%-12s %9.3f %9.3f %9.3f %7d %9d %9d\n", m.name, cs.Seed, cs.BestTags, cs.BestContents, cs.Files, cs.Passages, cs.Embedded)
	}
	fmt.Println()
	return nil
}

// printFailures prints, per sandbox set (USE-lite), the queries the best rank
// answers worse than the seed's rule or below nDCG@5 0.5, worst against the
// seed first: the best rank's top 5, each with its grade and explanation,
// where the wanted files (grade 2) ranked in the first 300, and the seed's
// top 3.
func printFailures(modelDir, data, only string, every bool) error {
	ctx := context.Background()
	use, tmp, err := setUp(modelDir)
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	explain := func(r index.Result) string {
		e := r.Explain
		return fmt.Sprintf("score %.3f names %v words %v kw %.3f sem %.3f", r.Score, e.Names, e.Words, e.Keyword, e.Semantic)
	}
	for _, sb := range eval.Sandboxes() {
		if only != "" && !slices.Contains(strings.Split(only, ","), sb.Name) {
			continue
		}
		s, err := eval.LoadSandbox(data, sb)
		if err != nil {
			return err
		}
		x, err := eval.Build(ctx, filepath.Join(tmp, sb.Name), s.Files, use)
		if err != nil {
			return err
		}
		ask := func(q eval.Judged, rank string, limit int) ([]index.Result, eval.Scores, error) {
			res, err := x.Query(ctx, index.Query{Text: q.Text, Limit: limit, Rank: rank, Explain: true, Now: q.When()})
			if err != nil {
				return nil, eval.Scores{}, fmt.Errorf("query %q: %w", q.Text, err)
			}
			ranked := make([]string, min(len(res), 10))
			for i := range ranked {
				ranked[i] = res[i].Path
			}
			return res, eval.Score(ranked, q.Grades), nil
		}
		type failure struct {
			q          eval.Judged
			seed, best eval.Scores
			top, seeds []index.Result
		}
		var fs []failure
		for _, q := range s.Queries {
			seeds, sd, err := ask(q, index.RankSeed, 10)
			if err == nil {
				var top []index.Result
				var bs eval.Scores
				if top, bs, err = ask(q, index.RankBest, 300); err == nil && (every || bs.Below(sd) || bs.NDCG5 < 0.5) {
					fs = append(fs, failure{q, sd, bs, top, seeds})
				}
			}
			if err != nil {
				x.Close()
				return err
			}
		}
		if err := x.Close(); err != nil {
			return err
		}
		slices.SortStableFunc(fs, func(a, b failure) int { return cmp.Compare(a.best.NDCG5-a.seed.NDCG5, b.best.NDCG5-b.seed.NDCG5) })
		fmt.Printf("%s: %d of %d queries answered worse than seed or below nDCG@5 0.5\n\n", sb.Name, len(fs), len(s.Queries))
		for _, f := range fs {
			fmt.Printf("[%s] %q  nDCG@5 seed %.3f best %.3f  MRR@10 seed %.3f best %.3f\n", f.q.Class, f.q.Text, f.seed.NDCG5, f.best.NDCG5, f.seed.MRR10, f.best.MRR10)
			for i, r := range f.top[:min(5, len(f.top))] {
				fmt.Printf("  best %d  %s (grade %d)  %s\n", i+1, r.Path, f.q.Grades[r.Path], explain(r))
			}
			for p, g := range f.q.Grades {
				if g != 2 {
					continue
				}
				i := slices.IndexFunc(f.top, func(r index.Result) bool { return r.Path == p })
				if i < 0 {
					fmt.Printf("  wanted  %s: not in best's first %d\n", p, len(f.top))
				} else if i >= 5 {
					fmt.Printf("  wanted  %s at %d  %s\n", p, i+1, explain(f.top[i]))
				}
			}
			for i, r := range f.seeds[:min(3, len(f.seeds))] {
				fmt.Printf("  seed %d  %s (grade %d)\n", i+1, r.Path, f.q.Grades[r.Path])
			}
			fmt.Println()
		}
	}
	return nil
}
