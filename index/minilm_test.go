package index_test

import (
	"math"
	"sort"
	"testing"

	"github.com/semfs/semfs/embed"
	"github.com/semfs/semfs/embed/embedtest"
	"github.com/semfs/semfs/index"
)

// TestMiniLMReferenceRanking: the client-vector path with real all-MiniLM-L6-v2
// vectors (npm @sap-ux/fiori-docs-embeddings). For each subject group one item is
// the query; the others are tagged files. Results must be every file with cosine
// >= 0.2, ordered by cosine (computed here in float64), the best of them about
// the query's own subject.
func TestMiniLMReferenceRanking(t *testing.T) {
	ref := embedtest.LoadMiniLMRef(t)
	byGroup := map[string][]embedtest.MiniLMItem{}
	for _, it := range ref.Items {
		byGroup[it.Group] = append(byGroup[it.Group], it)
	}
	for group, items := range byGroup {
		t.Run(group, func(t *testing.T) {
			x := openIndex(t, t.TempDir(), index.Options{})
			q := items[0]
			type want struct {
				path  string
				cos   float64
				group string
			}
			var wants []want
			for _, it := range ref.Items {
				if it.ID == q.ID {
					continue
				}
				p := "docs/" + it.Group + "/" + it.ID
				mustTag(t, x, p, it.Title, nil, &index.Vector{Model: embed.MiniLM.Name, Values: it.Vector})
				if c := cosine64(q.Vector, it.Vector); c >= embed.MiniLM.Threshold {
					wants = append(wants, want{p, c, it.Group})
				}
			}
			sort.Slice(wants, func(i, j int) bool { return wants[i].cos > wants[j].cos })
			got := query(t, x, index.Query{Vector: &index.Vector{Model: embed.MiniLM.Name, Values: q.Vector}})
			if len(got) != len(wants) {
				t.Fatalf("%d results, want %d", len(got), len(wants))
			}
			for i, g := range got {
				if g.Path != wants[i].path || math.Abs(g.Score-wants[i].cos) > 1e-5 {
					t.Errorf("rank %d: %s %.6f, want %s %.6f", i, g.Path, g.Score, wants[i].path, wants[i].cos)
				}
			}
			// Meaning, not just arithmetic: the best match is about the same subject
			// (the "destination" docs sit close to "deploy" ones, so only the first).
			if wants[0].group != group {
				t.Errorf("best match is from group %s (cos %.3f), want %s", wants[0].group, wants[0].cos, group)
			}
		})
	}
}

func cosine64(a, b []float32) float64 {
	var d, na, nb float64
	for i := range a {
		d += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	return d / math.Sqrt(na*nb)
}
