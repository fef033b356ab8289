// Command run prints the ranking evaluation (`make eval`): for the sandbox dev
// set and the known-item sets (man pages, Debian packages), nDCG@5, recall@10 and MRR@10 per query
// class, for each rank mode, with the in-process USE-lite model and keyword-only.
//
//	go run ./index/eval/run [-model embed/model/dist] [-data index/eval/testdata]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/semfs/semfs/embed"
	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/index/eval"
)

func main() {
	model := flag.String("model", "", "USE-lite model directory (default: as the daemon resolves it)")
	data := flag.String("data", filepath.Join("index", "eval", "testdata"), "data set directory")
	flag.Parse()
	if err := run(*model, *data); err != nil {
		fmt.Fprintln(os.Stderr, "eval:", err)
		os.Exit(1)
	}
}

func run(modelDir, data string) error {
	ctx := context.Background()
	sandbox, err := eval.LoadSandbox(data)
	if err != nil {
		return err
	}
	man, err := eval.LoadKnownItems(data, "manpages.txt")
	if err != nil {
		return err
	}
	pkgs, err := eval.LoadKnownItems(data, "packages.txt")
	if err != nil {
		return err
	}
	dir, _ := embed.ResolveModelDir(modelDir)
	use, err := embed.LoadUSELite(dir)
	if err != nil {
		return fmt.Errorf("USE-lite model (run `make model`): %w", err)
	}
	tmp, err := os.MkdirTemp("", "semfs-eval")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	fmt.Printf("sandbox: %d files, %d queries; known-item: %d man pages, %d packages\n\n", len(sandbox.Files), len(sandbox.Queries), len(man.Files), len(pkgs.Files))
	fmt.Printf("%-9s %-12s %-5s %-11s %4s %7s %7s %7s\n", "set", "vectors", "rank", "class", "n", "nDCG@5", "R@10", "MRR@10")
	for _, set := range []struct {
		name string
		s    eval.Set
		cls  []string
	}{{"sandbox", sandbox, append(append([]string{}, eval.Classes...), "all")}, {"man", man, []string{eval.KnownItem}}, {"packages", pkgs, []string{eval.KnownItem}}} {
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
				if err != nil {
					x.Close()
					return err
				}
				for _, c := range set.cls {
					s := res[c]
					fmt.Printf("%-9s %-12s %-5s %-11s %4d %7.3f %7.3f %7.3f\n", set.name, m.name, rank, c, s.N, s.NDCG5, s.Recall10, s.MRR10)
				}
			}
			if err := x.Close(); err != nil {
				return err
			}
		}
	}
	return nil
}
