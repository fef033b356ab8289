package index

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/tidwall/buntdb"

	"github.com/semfs/semfs/embed"
)

// TestOpenDropsOrphanVectors: a vector whose record is gone (cut from records.db
// behind the index's back) is dropped at Open, and every other vector still
// answers for its own file. A guard for faster loading schemes (reading records
// and vectors at once, placing vectors afterwards: tried, see BENCHMARKS.md).
func TestOpenDropsOrphanVectors(t *testing.T) {
	dir := t.TempDir()
	m := embed.Model{Name: "test-4d", Dims: 4, Threshold: 0.5}
	opts := Options{Models: []embed.Model{m}}
	x, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	vecs := map[string][]float32{
		"a": {1, 0, 0, 0}, "b": {0, 1, 0, 0}, "c": {0, 0, 1, 0}, "d": {0, 0, 0, 1},
	}
	for i, p := range []string{"a", "b", "c", "d"} {
		if err := x.Create(p, "app", uint64(i+1), at); err != nil {
			t.Fatal(err)
		}
		if _, err := x.Tag(context.Background(), p, "task "+p, nil, &Vector{Model: m.Name, Values: vecs[p]}); err != nil {
			t.Fatal(err)
		}
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := buntdb.Open(filepath.Join(dir, recordsFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *buntdb.Tx) error { _, err := tx.Delete(recPrefix + "a"); return err }); err != nil {
		t.Fatal(err)
	}
	db.Close()

	x, err = Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	if n := len(x.vecs[m.Name].paths); n != 3 {
		t.Fatalf("%d vectors loaded, want 3 (the orphan of a dropped)", n)
	}
	for _, p := range []string{"b", "c", "d"} {
		// The seed rank scores a vector-only query by the cosine itself (best
		// rescales it), so "score 1" names the file's own vector.
		res, err := x.Query(context.Background(), Query{Rank: RankSeed, Vector: &Vector{Model: m.Name, Values: vecs[p]}})
		if err != nil {
			t.Fatal(err)
		}
		if len(res) != 1 || res[0].Path != p || res[0].Score != 1 {
			t.Fatalf("query by %s's vector = %+v, want %s alone with score 1", p, res, p)
		}
	}
}
