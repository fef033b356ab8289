package index_test

import (
	"bytes"
	"context"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/semfs/semfs/embed"
	"github.com/semfs/semfs/index"
)

func TestDumpLoadRoundTrip(t *testing.T) {
	x := openIndex(t, t.TempDir(), index.Options{})
	r := rand.New(rand.NewSource(7))
	for i := range 200 {
		p := randPath(r) + "/f"
		if i%10 == 0 {
			p = "bin\xff\xfe/" + p // not UTF-8: survives the dump byte for byte
		}
		mustCreate(t, x, p, []string{"", "editor", "Browser"}[i%3], uint64(i))
		if i%2 == 0 {
			var v *index.Vector
			if i%4 == 0 {
				v = &index.Vector{Model: testModel.Name, Values: randVec(r)}
			}
			mustTag(t, x, p, randString(r, 1, 10), []string{randString(r, 1, 4)}, v)
		}
	}
	mini := make([]float32, embed.MiniLM.Dims)
	for i := range mini {
		mini[i] = float32(r.NormFloat64())
	}
	mustTag(t, x, "mini/lm", "minilm vector", nil, &index.Vector{Model: embed.MiniLM.Name, Values: mini})

	var buf bytes.Buffer
	if err := x.Dump(&buf); err != nil {
		t.Fatal(err)
	}
	dump := buf.Bytes()
	dir := filepath.Join(t.TempDir(), "restored")
	y, err := index.Load(dir, bytes.NewReader(dump), index.Options{Models: []embed.Model{embed.MiniLM, testModel}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = y.Close() })

	queries := []index.Query{
		{Text: "/"}, {Text: "a"}, {Text: "EDITOR browser"}, {Text: "ſ K", Limit: 7},
		{Vector: vec4(1, 0, 0, 0)}, {Text: "b", Vector: vec4(0, 1, 1, 0)},
		{Vector: &index.Vector{Model: embed.MiniLM.Name, Values: mini}},
	}
	for i := range 20 {
		queries = append(queries, index.Query{Text: randString(r, 1, 3), Vector: &index.Vector{Model: testModel.Name, Values: randVec(r)}, Limit: i % 4})
	}
	for _, q := range queries {
		a, b := query(t, x, q), query(t, y, q)
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("query %+v differs after load:\n%v\n%v", q, resultsString(a), resultsString(b))
		}
	}
	if a, b := x.Stats(), y.Stats(); a.Records != b.Records || a.Tagged != b.Tagged || !reflect.DeepEqual(a.Vectors, b.Vectors) {
		t.Errorf("stats differ: %+v vs %+v", a, b)
	}

	// Load refuses a non-empty directory and a truncated or foreign dump, and
	// leaves the target empty.
	if _, err := index.Load(dir, bytes.NewReader(dump), index.Options{}); index.KindOf(err) != index.KindInvalid {
		t.Errorf("load into non-empty dir: %v", err)
	}
	for name, bad := range map[string][]byte{
		"truncated": dump[:len(dump)/2],
		"foreign":   []byte("not a dump at all"),
		"empty":     nil,
	} {
		d := filepath.Join(t.TempDir(), name)
		_, err := index.Load(d, bytes.NewReader(bad), index.Options{})
		if index.KindOf(err) != index.KindInvalid {
			t.Errorf("%s dump: %v", name, err)
		}
		if ents, _ := os.ReadDir(d); len(ents) != 0 {
			t.Errorf("%s dump left %v behind", name, ents)
		}
	}
}

// TestDumpIsConsistentUnderWrites: every dump taken while writers run loads into
// an index whose record count matches one of the states the writer went through
// (all or nothing of each write).
func TestDumpIsConsistentUnderWrites(t *testing.T) {
	x := openIndex(t, t.TempDir(), index.Options{})
	done := make(chan error)
	go func() {
		for i := range 100 {
			p := "w/" + string(rune('a'+i%26)) + string(rune('a'+i/26))
			if err := x.Create(p, "", uint64(i), t0); err != nil {
				done <- err
				return
			}
			if _, err := x.Tag(context.Background(), p, "t", nil, vec4(1, 0, 0, 0)); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	for range 5 {
		var buf bytes.Buffer
		if err := x.Dump(&buf); err != nil {
			t.Fatal(err)
		}
		y, err := index.Load(filepath.Join(t.TempDir(), "r"), &buf, index.Options{Models: []embed.Model{testModel}})
		if err != nil {
			t.Fatal(err)
		}
		s := y.Stats()
		// Each Tag writes the record's tags and vector in one transaction.
		if s.Tagged != s.Vectors[testModel.Name] {
			t.Errorf("dump holds %d tagged records but %d vectors", s.Tagged, s.Vectors[testModel.Name])
		}
		_ = y.Close()
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
