package index_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/semfs/semfs/embed"
	"github.com/semfs/semfs/index"
)

// TestInProcessEmbedder: tag vectors come from the tag text, queries are embedded
// in-process, a rename re-embeds (the path is in the tag text).
func TestInProcessEmbedder(t *testing.T) {
	emb := hashEmbedder{name: "hash-64", dims: 64}
	x := openIndex(t, t.TempDir(), index.Options{Embedder: emb})
	mustCreate(t, x, "n/a.md", "", 1)
	mustTag(t, x, "n/a.md", "quarterly budget", []string{"sheet"}, nil)
	mustCreate(t, x, "n/b.md", "", 2)
	mustTag(t, x, "n/b.md", "holiday photos", nil, nil)
	mustCreate(t, x, "n/untagged.md", "", 3)
	s := x.Stats()
	if s.Model != "hash-64" || s.KeywordOnly != "" || s.Vectors["hash-64"] != 2 {
		t.Fatalf("stats %+v", s)
	}
	// "budget planning" has no keyword hit on "planning" but shares "budget".
	got := query(t, x, index.Query{Text: "planning budget"})
	if len(got) != 1 || got[0].Path != "n/a.md" || got[0].Score <= 1 {
		t.Errorf("hybrid: %v", scores(got))
	}
	// Semantic-only match: the vector of "photos" tag text is close to "photos holiday".
	vh, _ := emb.Embed(context.Background(), []string{"zzz holiday"})
	vb, _ := emb.Embed(context.Background(), []string{embed.TagText("holiday photos", nil, "n/b.md")})
	want := index.Similarity(vh[0], vb[0])
	if want < emb.Threshold() {
		t.Fatalf("test premise: similarity %v below threshold", want)
	}
	got = query(t, x, index.Query{Text: "zzz holiday"})
	if len(got) != 1 || got[0].Path != "n/b.md" {
		t.Fatalf("semantic: %v", scores(got))
	}

	// Rename: the vector follows now and is re-embedded from the new path.
	if err := x.Rename("n/b.md", "trips/rome.md", t0); err != nil {
		t.Fatal(err)
	}
	waitEmbedded(t, x)
	vq, _ := emb.Embed(context.Background(), []string{"qqq rome"})
	vn, _ := emb.Embed(context.Background(), []string{embed.TagText("holiday photos", nil, "trips/rome.md")})
	got = query(t, x, index.Query{Vector: &index.Vector{Model: "hash-64", Values: vq[0]}})
	if len(got) != 1 || got[0].Path != "trips/rome.md" || got[0].Score != index.Similarity(vq[0], vn[0]) {
		t.Errorf("after rename: %v, want similarity %v", scores(got), index.Similarity(vq[0], vn[0]))
	}
	if p := x.Stats().Reembed; p.Running || p.Pending != 0 || p.Done < 1 {
		t.Errorf("progress %+v", p)
	}
}

// TestClientVectorOfInProcessModel: a client vector of the in-process model is kept
// as sent, and survives a rename without being re-embedded.
func TestClientVectorOfInProcessModel(t *testing.T) {
	emb := hashEmbedder{name: "hash-8", dims: 8}
	x := openIndex(t, t.TempDir(), index.Options{Embedder: emb})
	v := []float32{0, 0, 0, 0, 0, 0, 0, 1}
	mustTag(t, x, "c/f", "some task", nil, &index.Vector{Model: "hash-8", Values: v})
	if err := x.Rename("c/f", "c/g", t0); err != nil {
		t.Fatal(err)
	}
	waitEmbedded(t, x)
	got := query(t, x, index.Query{Vector: &index.Vector{Model: "hash-8", Values: v}})
	if !reflect.DeepEqual(scores(got), []scored{{"c/g", 1}}) {
		t.Errorf("client vector: %v", scores(got))
	}
}

// TestModelChangeReembeds: records tagged under one model (or with none) are
// re-embedded in the background by the next model; queries work meanwhile.
func TestModelChangeReembeds(t *testing.T) {
	dir := t.TempDir()
	x, err := index.Open(dir, index.Options{}) // keyword-only at first
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range []string{"m/a", "m/b", "m/c"} {
		mustCreate(t, x, p, "", uint64(i))
		mustTag(t, x, p, "report "+p, nil, nil)
	}
	mustCreate(t, x, "m/untagged", "", 9)
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}

	first := hashEmbedder{name: "hash-a", dims: 16}
	x, err = index.Open(dir, index.Options{Embedder: first})
	if err != nil {
		t.Fatal(err)
	}
	if got := query(t, x, index.Query{Text: "report"}); len(got) != 3 {
		t.Errorf("query during re-embedding: %v", scores(got))
	}
	waitEmbedded(t, x)
	if s := x.Stats(); s.Vectors["hash-a"] != 3 || s.Reembed.Done != 3 || s.Reembed.Queued != 3 {
		t.Errorf("after first model: %+v", s)
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}

	second := hashEmbedder{name: "hash-b", dims: 32}
	x = openIndex(t, dir, index.Options{Embedder: second, Models: []embed.Model{{Name: "hash-a", Dims: 16, Threshold: 0.3}}})
	waitEmbedded(t, x)
	s := x.Stats()
	if s.Vectors["hash-b"] != 3 || s.Vectors["hash-a"] != 0 || s.Model != "hash-b" {
		t.Errorf("after model change: %+v", s)
	}
	got := query(t, x, index.Query{Text: "report"})
	if len(got) != 3 || got[0].Score <= 1 {
		t.Errorf("hybrid after change: %v", scores(got))
	}
}

func TestTagMany(t *testing.T) {
	emb := hashEmbedder{name: "hash-32", dims: 32}
	x := openIndex(t, t.TempDir(), index.Options{Embedder: emb})
	var reqs []index.TagRequest
	for i := range 300 {
		reqs = append(reqs, index.TagRequest{Path: "batch/f" + string(rune('a'+i%26)) + string(rune('a'+i/26)), Task: "sorting photos", RelatedApps: []string{"viewer"}})
	}
	reqs = append(reqs, index.TagRequest{Path: "batch/faa", Task: "the later request wins"})
	reqs = append(reqs, index.TagRequest{Path: "batch/client", Task: "t", Vector: vec4(1, 0, 0, 0)})

	// One bad request: nothing at all is written.
	bad := append(append([]index.TagRequest(nil), reqs...), index.TagRequest{Path: "../x"})
	if _, err := x.TagMany(context.Background(), bad); index.KindOf(err) != index.KindInvalid {
		t.Fatalf("bad batch: %v", err)
	}
	if s := x.Stats(); s.Records != 0 {
		t.Fatalf("bad batch wrote %d records", s.Records)
	}

	recs, err := x.TagMany(context.Background(), reqs)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != len(reqs) || recs[0].Task != "sorting photos" || recs[300].Task != "the later request wins" {
		t.Fatalf("records %d %+v %+v", len(recs), recs[0], recs[300])
	}
	s := x.Stats()
	if s.Records != 301 || s.Tagged != 301 || s.Vectors["hash-32"] != 301 || s.Vectors[testModel.Name] != 1 {
		t.Errorf("stats %+v", s)
	}
	if r, _ := x.Get("batch/faa"); r.Task != "the later request wins" {
		t.Errorf("duplicate: %+v", r)
	}
	got := query(t, x, index.Query{Text: "photos", Limit: 3})
	if len(got) != 3 || got[0].Score <= 1 {
		t.Errorf("query after batch: %v", scores(got))
	}
}

// TestTagManyBesideBleveBatch: a large TagMany runs the pending Bleve batch
// beside its embedding (the second batch here finds 600 changes pending). Both
// batches must be in Bleve afterwards, and in the records, and survive a
// reopen without a rebuild; run with -race, this is also the check that the
// two do not share anything unguarded.
func TestTagManyBesideBleveBatch(t *testing.T) {
	emb := hashEmbedder{name: "hash-32", dims: 32}
	dir := t.TempDir()
	x := openIndex(t, dir, index.Options{Embedder: emb})
	index.ForceKeywordPlan(x, "bleve")
	batch := func(word string) []index.TagRequest {
		var reqs []index.TagRequest
		for i := range 600 {
			reqs = append(reqs, index.TagRequest{Path: fmt.Sprintf("%s/f%03d", word, i), Task: word + " report", RelatedApps: []string{"editor"}})
		}
		return reqs
	}
	for _, w := range []string{"alpha", "beta"} {
		if _, err := x.TagMany(context.Background(), batch(w)); err != nil {
			t.Fatal(err)
		}
	}
	check := func(x *index.Index) {
		t.Helper()
		for _, w := range []string{"alpha", "beta"} {
			got := query(t, x, index.Query{Text: w, Limit: 1000})
			n := 0
			for _, r := range got {
				if strings.HasPrefix(r.Path, w+"/") {
					n++
				}
			}
			if n != 600 {
				t.Errorf("query %q: %d of its 600 files", w, n)
			}
		}
		if s := x.Stats(); s.Records != 1200 || s.Vectors["hash-32"] != 1200 {
			t.Errorf("stats %+v", s)
		}
	}
	check(x)
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	x = openIndex(t, dir, index.Options{Embedder: emb})
	index.ForceKeywordPlan(x, "bleve")
	check(x)
}
