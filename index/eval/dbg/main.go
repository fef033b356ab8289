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
	class := flag.String("class", "", "")
	kwonly := flag.Bool("kw", false, "")
	flag.Parse()
	ctx := context.Background()
	s, err := eval.LoadSandbox("index/eval/testdata", eval.Sandboxes()[0])
	if err != nil {
		panic(err)
	}
	var emb embed.Embedder
	if !*kwonly {
		dir, _ := embed.ResolveModelDir("")
		emb, _ = embed.LoadUSELite(dir)
	}
	tmp, _ := os.MkdirTemp("", "dbg")
	defer os.RemoveAll(tmp)
	x, err := eval.Build(ctx, filepath.Join(tmp, "x"), s.Files, emb)
	if err != nil {
		panic(err)
	}
	for _, q := range s.Queries {
		if *class != "" && q.Class != *class {
			continue
		}
		var out [2][]string
		var sc [2]float64
		var rs [2][]index.Result
		for i, rank := range []string{index.RankSeed, index.RankBest} {
			res, err := x.Query(ctx, index.Query{Text: q.Text, Limit: 10, Rank: rank, Explain: true})
			if err != nil {
				panic(err)
			}
			for _, r := range res {
				out[i] = append(out[i], r.Path)
			}
			rs[i] = res
			sc[i] = eval.Score(out[i], q.Grades).NDCG5
		}
		if sc[1] >= sc[0]-0.001 && sc[1] > 0.5 {
			continue
		}
		fmt.Printf("== %s %q seed %.2f best %.2f\n   want:", q.Class, q.Text, sc[0], sc[1])
		for p, g := range q.Grades {
			fmt.Printf(" %s=%d", p, g)
		}
		fmt.Println()
		for i := range 2 {
			for j, r := range rs[i] {
				if j == 5 {
					break
				}
				e := r.Explain
				sim := 0.0
				if e.Similarity != nil {
					sim = *e.Similarity
				}
				fmt.Printf("   %s %d g%d %.3f kw %.2f sim %.2f n%v %s\n", []string{"S", "B"}[i], j, q.Grades[r.Path], r.Score, e.Keyword, sim, e.Names, r.Path)
			}
		}
	}
}
