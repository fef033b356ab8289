// Command calibrate chooses the USE-lite similarity threshold for the hybrid
// query. It embeds every (tag, query) pair of a labelled set — tag text built
// by embed.TagText exactly as the index builds it — and picks the threshold
// on a 0.01 grid that maximises F1 of "cosine >= threshold" against the
// labels, printing precision and recall around it.
//
//	go run ./embed/calibrate [-model dir] [-pairs embed/calibrate/pairs.jsonl]
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"sort"

	"github.com/semfs/semfs/embed"
)

// pair is one line of pairs.jsonl.
type pair struct {
	Query   string   `json:"query"`
	Task    string   `json:"task"`
	Apps    []string `json:"apps"`
	Path    string   `json:"path"`
	Related bool     `json:"related"`
	Topic   string   `json:"topic"` // "auth" for a related pair, "auth/hiring" for query topic / tag topic
}

type scored struct {
	pair
	tag string
	cos float64
}

type stats struct {
	t                 float64
	tp, fp, fn, tn    int
	precision, recall float64
	f1                float64
}

func main() {
	modelFlag := flag.String("model", "", "USE-lite model directory (default: see embed.ResolveModelDir)")
	pairsPath := flag.String("pairs", "embed/calibrate/pairs.jsonl", "labelled pairs, one JSON object per line")
	flag.Parse()
	if err := run(*modelFlag, *pairsPath); err != nil {
		fmt.Fprintln(os.Stderr, "calibrate:", err)
		os.Exit(1)
	}
}

func run(modelFlag, pairsPath string) error {
	pairs, err := readPairs(pairsPath)
	if err != nil {
		return err
	}
	dir, source := embed.ResolveModelDir(modelFlag)
	m, err := embed.LoadUSELite(dir)
	if err != nil {
		return err
	}
	fmt.Printf("model %s from %s (%s)\n", m.Name(), dir, source)

	tags := make([]string, len(pairs))
	queries := make([]string, len(pairs))
	for i, p := range pairs {
		tags[i] = embed.TagText(p.Task, p.Apps, p.Path)
		queries[i] = p.Query
	}
	ctx := context.Background()
	tv, err := m.Embed(ctx, tags)
	if err != nil {
		return err
	}
	qv, err := m.Embed(ctx, queries)
	if err != nil {
		return err
	}
	s := make([]scored, len(pairs))
	pos, neg := 0, 0
	for i, p := range pairs {
		s[i] = scored{pair: p, tag: tags[i], cos: dot(tv[i], qv[i])}
		if p.Related {
			pos++
		} else {
			neg++
		}
	}
	fmt.Printf("pairs: %d (%d related, %d unrelated), ROC AUC %.4f\n", len(s), pos, neg, auc(s))

	best := stats{f1: -1}
	var grid []stats
	for i := 0; i <= 100; i++ {
		st := evaluate(s, float64(i)/100)
		grid = append(grid, st)
		if st.f1 > best.f1 {
			best = st
		}
	}
	fmt.Println("\nthreshold  precision  recall  F1     (tp fp fn tn)")
	for _, st := range grid {
		if math.Abs(st.t-best.t) <= 0.10+1e-9 && int(math.Round(st.t*100))%2 == 0 || st.t == best.t {
			mark := ""
			if st.t == best.t {
				mark = "  <- chosen (max F1)"
			}
			fmt.Printf("%.2f       %.3f      %.3f   %.3f  (%d %d %d %d)%s\n", st.t, st.precision, st.recall, st.f1, st.tp, st.fp, st.fn, st.tn, mark)
		}
	}
	fmt.Printf("\nchosen threshold %.2f: precision %.3f, recall %.3f, F1 %.3f\n", best.t, best.precision, best.recall, best.f1)

	sort.Slice(s, func(a, b int) bool { return s[a].cos > s[b].cos })
	fmt.Println("\nhighest-scoring unrelated pairs:")
	for i, n := 0, 0; i < len(s) && n < 5; i++ {
		if !s[i].Related {
			fmt.Printf("  %.3f  %q vs %q\n", s[i].cos, s[i].Query, s[i].tag)
			n++
		}
	}
	fmt.Println("lowest-scoring related pairs:")
	for i, n := len(s)-1, 0; i >= 0 && n < 5; i-- {
		if s[i].Related {
			fmt.Printf("  %.3f  %q vs %q\n", s[i].cos, s[i].Query, s[i].tag)
			n++
		}
	}
	return nil
}

func readPairs(path string) ([]pair, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []pair
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		var p pair
		if err := json.Unmarshal(sc.Bytes(), &p); err != nil {
			return nil, fmt.Errorf("%s:%d: %v", path, line, err)
		}
		if p.Query == "" || embed.TagText(p.Task, p.Apps, p.Path) == "" {
			return nil, fmt.Errorf("%s:%d: empty query or tag", path, line)
		}
		out = append(out, p)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

func evaluate(s []scored, t float64) stats {
	st := stats{t: t}
	for _, x := range s {
		switch hit := x.cos >= t; {
		case hit && x.Related:
			st.tp++
		case hit:
			st.fp++
		case x.Related:
			st.fn++
		default:
			st.tn++
		}
	}
	if st.tp+st.fp > 0 {
		st.precision = float64(st.tp) / float64(st.tp+st.fp)
	}
	if st.tp+st.fn > 0 {
		st.recall = float64(st.tp) / float64(st.tp+st.fn)
	}
	if st.precision+st.recall > 0 {
		st.f1 = 2 * st.precision * st.recall / (st.precision + st.recall)
	}
	return st
}

// auc is the probability that a random related pair scores above a random
// unrelated one (ties count half).
func auc(s []scored) float64 {
	var wins float64
	var n int
	for _, a := range s {
		if !a.Related {
			continue
		}
		for _, b := range s {
			if b.Related {
				continue
			}
			n++
			switch {
			case a.cos > b.cos:
				wins++
			case a.cos == b.cos:
				wins += 0.5
			}
		}
	}
	return wins / float64(n)
}

func dot(a, b []float32) float64 {
	var d float64
	for i := range a {
		d += float64(a[i]) * float64(b[i])
	}
	return d
}
