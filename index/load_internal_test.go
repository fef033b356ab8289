package index

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/buntdb"

	"github.com/semfs/semfs/embed"
)

// TestOpenDropsOrphanVectors: a vector whose record is gone (cut from records.db
// behind the index's back) is dropped at Open, and every other vector still
// answers for its own file. A guard for loading records and vectors at once
// and placing vectors afterwards (placeVectors).
func TestOpenDropsOrphanVectors(t *testing.T) {
	dir := t.TempDir()
	m := embed.Model{Name: "test-4d", Dims: 4, Threshold: 0.5}
	opts := Options{Models: []embed.Model{m}}
	vecs := tagFour(t, dir, m)
	db, err := buntdb.Open(filepath.Join(dir, recordsFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *buntdb.Tx) error { _, err := tx.Delete(recPrefix + "a"); return err }); err != nil {
		t.Fatal(err)
	}
	db.Close()

	x, err := Open(dir, opts)
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
	// The orphan is deleted from vectors.db, not only left out of memory:
	// kept, it would stop the re-embedder (its hash still matches) from
	// making a's vector again once reconcile brings a's record back.
	var keys []string
	if err := x.vdb.View(func(tx *buntdb.Tx) error {
		return tx.Ascend("", func(k, _ string) bool { keys = append(keys, k); return true })
	}); err != nil {
		t.Fatal(err)
	}
	if len(keys) != 3 || slices.Contains(keys, vecKey("a", m.Name)) {
		t.Fatalf("vectors.db holds %q after Open, want b, c and d's only", keys)
	}
}

// tagFour makes an index in dir with four tagged files, each with its own
// 4-d client vector, and closes it.
func tagFour(t *testing.T, dir string, m embed.Model) map[string][]float32 {
	t.Helper()
	x, err := Open(dir, Options{Models: []embed.Model{m}})
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
	return vecs
}

// keysOf lists every key of the buntdb file at p.
func keysOf(t *testing.T, p string) map[string]string {
	t.Helper()
	db, err := buntdb.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	out := map[string]string{}
	if err := db.View(func(tx *buntdb.Tx) error {
		return tx.Ascend("", func(k, v string) bool { out[k] = v; return true })
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestOpenMovesVectorsOutOfRecords: an index of layout 1 (vectors in
// records.db, as every index was before vectors.db) opens with its vectors
// moved to vectors.db, once, and answers vector queries as before.
func TestOpenMovesVectorsOutOfRecords(t *testing.T) {
	dir := t.TempDir()
	m := embed.Model{Name: "test-4d", Dims: 4, Threshold: 0.5}
	vecs := tagFour(t, dir, m)
	// Layout 1, as an older build left it: the vectors in records.db.
	rdb, err := buntdb.Open(filepath.Join(dir, recordsFile))
	if err != nil {
		t.Fatal(err)
	}
	moved := keysOf(t, filepath.Join(dir, vectorsFile))
	if err := rdb.Update(func(tx *buntdb.Tx) error {
		for k, v := range moved {
			if _, _, err := tx.Set(k, v, nil); err != nil {
				return err
			}
		}
		_, _, err := tx.Set(schemaKey, schemaWithVectors, nil)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	rdb.Close()
	if err := os.Remove(filepath.Join(dir, vectorsFile)); err != nil {
		t.Fatal(err)
	}
	if len(moved) != 4 {
		t.Fatalf("set-up: %d vectors, want 4", len(moved))
	}

	x, err := Open(dir, Options{Models: []embed.Model{m}})
	if err != nil {
		t.Fatal(err)
	}
	if d := x.Damage(); d.Records != "" || d.Bleve != "" {
		t.Fatalf("Damage() = %+v after moving the vectors", d)
	}
	for _, p := range []string{"a", "b", "c", "d"} {
		res, err := x.Query(context.Background(), Query{Rank: RankSeed, Vector: &Vector{Model: m.Name, Values: vecs[p]}})
		if err != nil {
			t.Fatal(err)
		}
		if len(res) != 1 || res[0].Path != p || res[0].Score != 1 {
			t.Fatalf("query by %s's vector = %+v, want %s alone with score 1", p, res, p)
		}
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	recs, vs := keysOf(t, filepath.Join(dir, recordsFile)), keysOf(t, filepath.Join(dir, vectorsFile))
	for k := range recs {
		if strings.HasPrefix(k, vecPrefix) {
			t.Errorf("records.db still holds vector %q", k)
		}
	}
	if recs[schemaKey] != schemaVers {
		t.Errorf("records.db layout %q, want %q", recs[schemaKey], schemaVers)
	}
	if !maps.Equal(vs, moved) {
		t.Errorf("vectors.db holds %d keys, want the 4 moved, byte for byte", len(vs))
	}
	// Compacted: the next Open parses no vector in records.db's log either.
	raw, err := os.ReadFile(filepath.Join(dir, recordsFile))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), vecPrefix+"a\x00") {
		t.Error("records.db's log still carries the moved vectors")
	}
}

// TestOpenSetsAsideUnreadableVectors: a vectors.db buntdb cannot parse is
// moved aside and the index opens with every record; the vectors are gone
// (the re-embedder and the start-up reconcile make them again), and a new
// vector is kept across the next Open.
func TestOpenSetsAsideUnreadableVectors(t *testing.T) {
	dir := t.TempDir()
	m := embed.Model{Name: "test-4d", Dims: 4, Threshold: 0.5}
	tagFour(t, dir, m)
	if err := os.WriteFile(filepath.Join(dir, vectorsFile), []byte("not a buntdb log\r\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	x, err := Open(dir, Options{Models: []embed.Model{m}})
	if err != nil {
		t.Fatal(err)
	}
	if d := x.Damage(); d.Records != "" {
		t.Fatalf("Damage() = %+v: records.db is sound", d)
	}
	if aside, _ := filepath.Glob(filepath.Join(dir, vectorsFile+".damaged-*")); len(aside) != 1 {
		t.Fatalf("moved aside: %v, want one vectors.db.damaged-*", aside)
	}
	for _, p := range []string{"a", "b", "c", "d"} {
		if r, err := x.Get(p); err != nil || r.Task != "task "+p {
			t.Fatalf("Get(%s) = %+v, %v", p, r, err)
		}
	}
	if s := x.vecs[m.Name]; s != nil && len(s.paths) != 0 {
		t.Fatalf("%d vectors in memory, want none", len(s.paths))
	}
	if _, err := x.Tag(context.Background(), "a", "task a again", nil, &Vector{Model: m.Name, Values: []float32{1, 0, 0, 0}}); err != nil {
		t.Fatal(err)
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	x, err = Open(dir, Options{Models: []embed.Model{m}})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	if got := x.vecs[m.Name].paths; !slices.Equal(got, []string{"a"}) {
		t.Fatalf("vectors after reopening: %q, want a's", got)
	}
}
