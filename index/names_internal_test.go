package index

import (
	"context"
	"fmt"
	"math/rand"
	"slices"
	"testing"
	"time"
)

// TestNameMapFollowsChanges: the best rank's exact-name map (hayTable.byName)
// equals, after every create, tag, rename (of files and of directories) and
// remove made through the index API, and after a reopen, the names computed
// afresh from every record the index holds; and a query of a name finds
// exactly the files bearing it as name hits.
func TestNameMapFollowsChanges(t *testing.T) {
	apps := []string{"spreadsheet", "notes", "mail", "ci"}
	dirs := []string{"docs", "src", "src/auth", "reports"}
	bases := []string{"plan.md", "notes.txt", "mail", "Report.PDF", "ci.yml"}
	at := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	for seed := int64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			r := rand.New(rand.NewSource(seed))
			dir := t.TempDir()
			x, err := Open(dir, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer func() { x.Close() }()
			held := map[string]bool{}
			hits := 0
			pick := func() string {
				ps := make([]string, 0, len(held))
				for p := range held {
					ps = append(ps, p)
				}
				slices.Sort(ps)
				return ps[r.Intn(len(ps))]
			}
			for step := range 120 {
				switch op := r.Intn(10); {
				case op < 4 || len(held) == 0:
					p := dirs[r.Intn(len(dirs))] + "/" + bases[r.Intn(len(bases))]
					if err := x.Create(p, apps[r.Intn(len(apps))], uint64(step+1), at); err != nil {
						t.Fatal(err)
					}
					held[p] = true
				case op < 6:
					var rel []string
					if r.Intn(2) == 0 {
						rel = []string{apps[r.Intn(len(apps))]}
					}
					if _, err := x.Tag(context.Background(), pick(), "task", rel, nil); err != nil {
						t.Fatal(err)
					}
				case op < 8:
					from := pick()
					to := dirs[r.Intn(len(dirs))] + "/" + bases[r.Intn(len(bases))]
					if r.Intn(3) == 0 {
						from, to = "src", "moved" // a directory and everything under it
					}
					if err := x.Rename(from, to, at); err != nil {
						t.Fatal(err)
					}
					for p := range held {
						if p == from || len(p) > len(from) && p[:len(from)+1] == from+"/" {
							delete(held, p)
							held[to+p[len(from):]] = true
						}
					}
					if from == "src" {
						// Rename may drop what was at to; re-read what the index holds.
						held = heldPaths(x)
					}
				default:
					p := pick()
					if r.Intn(4) == 0 {
						p = "src"
					}
					if err := x.Remove(p); err != nil {
						t.Fatal(err)
					}
					held = heldPaths(x)
				}
				if step%30 == 29 {
					if err := x.Close(); err != nil {
						t.Fatal(err)
					}
					if x, err = Open(dir, Options{}); err != nil {
						t.Fatal(err)
					}
				}
				hits += checkNameMap(t, x, step)
			}
			if hits < 100 {
				t.Fatalf("%d name hits in all: the changes left too few named files to test", hits)
			}
		})
	}
}

func heldPaths(x *Index) map[string]bool {
	x.mu.RLock()
	defer x.mu.RUnlock()
	out := map[string]bool{}
	for _, e := range x.hay.entries {
		out[e.path] = true
	}
	return out
}

// checkNameMap compares x.hay.byName with the names of every record, read
// back through Get, and asks a query for each of a few names; it returns how
// many name hits those queries had.
func checkNameMap(t *testing.T, x *Index, step int) (hits int) {
	t.Helper()
	want := map[string][]string{}
	for p := range heldPaths(x) {
		rec, err := x.Get(p)
		if err != nil {
			t.Fatalf("step %d: get %s: %v", step, p, err)
		}
		for _, n := range names(rec.Path, rec.CreatedBy, rec.RelatedApps) {
			want[n] = append(want[n], rec.Path)
		}
	}
	x.mu.RLock()
	got := map[string][]string{}
	for n, e := range x.hay.byName {
		if e.name != n {
			t.Fatalf("step %d: name %q kept as %q", step, n, e.name)
		}
		for _, s := range e.slots {
			got[n] = append(got[n], x.hay.entries[s].path)
		}
	}
	x.mu.RUnlock()
	for _, m := range []map[string][]string{want, got} {
		for _, ps := range m {
			slices.Sort(ps)
		}
	}
	for n, ps := range want {
		if !slices.Equal(got[n], ps) {
			t.Fatalf("step %d: name %q: map has %q, records have %q", step, n, got[n], ps)
		}
	}
	for n, ps := range got {
		if _, ok := want[n]; !ok {
			t.Fatalf("step %d: name %q: map has %q, no record bears it", step, n, ps)
		}
	}
	for _, n := range []string{"spreadsheet", "mail", "src", "plan"} {
		res, err := x.Query(context.Background(), Query{Text: n, Explain: true})
		if err != nil {
			t.Fatal(err)
		}
		f := nameFold(n) // names are kept folded
		var hit []string
		for _, r := range res {
			if r.Explain != nil && slices.Contains(r.Explain.Names, f) {
				hit = append(hit, r.Path)
			}
		}
		slices.Sort(hit)
		named := slices.Compact(slices.Clone(want[f])) // a basename and an app: one file
		if !slices.Equal(hit, named) {
			t.Fatalf("step %d: query %q: name hits %q, files named so %q", step, n, hit, named)
		}
		hits += len(hit)
	}
	return hits
}
