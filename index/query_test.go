package index_test

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/semfs/semfs/index"
)

// corpus for the keyword rules: no vectors, no embedder.
func keywordCorpus(t *testing.T) *index.Index {
	x := openIndex(t, t.TempDir(), index.Options{})
	mustCreate(t, x, "notes/auth/login-failure.md", "code-editor", 1)
	mustTag(t, x, "notes/auth/login-failure.md", "Fix auth bug", []string{"terminal", "Browser"}, nil)
	mustCreate(t, x, "reports/Q3-Sales.xlsx", "spreadsheet", 2) // untagged
	mustCreate(t, x, "docs/readme.md", "", 3)
	mustCreate(t, x, "Straße/Ǆ-file.txt", "ſcanner", 4) // ſ folds to s, Ǆ/ǅ/ǆ are one letter
	return x
}

func TestQueryKeywordRules(t *testing.T) {
	x := keywordCorpus(t)
	const login = "notes/auth/login-failure.md"
	tests := []struct {
		name  string
		q     string
		limit int
		want  []scored
	}{
		{"substring of path", "ogin", 0, []scored{{login, 1}}},
		{"case-insensitive query", "AUTH", 0, []scored{{login, 1}}},
		{"case-insensitive field", "q3-sales", 0, []scored{{"reports/Q3-Sales.xlsx", 1}}},
		{"untagged file found by creator", "spreadsheet", 0, []scored{{"reports/Q3-Sales.xlsx", 1}}},
		{"creator substring", "editor", 0, []scored{{login, 1}}},
		{"task substring", "bug", 0, []scored{{login, 1}}},
		{"related app, case", "browser", 0, []scored{{login, 1}}},
		{"one point per word", "auth terminal fix", 0, []scored{{login, 3}}},
		{"word hitting two fields counts once", "auth", 0, []scored{{login, 1}}},
		{"repeated word counts twice", "auth auth", 0, []scored{{login, 2}}},
		{"punctuation trimmed", "(auth), \"bug\".", 0, []scored{{login, 2}}},
		{"inner punctuation kept", "auth/login", 0, []scored{{login, 1}}},
		{"no match across fields", "failure.mdcode", 0, nil},
		{"no match", "zebra", 0, nil},
		{"ties by path", "md", 0, []scored{{"docs/readme.md", 1}, {login, 1}}},
		{"more points first", "md fix", 0, []scored{{login, 2}, {"docs/readme.md", 1}}},
		{"limit", "md", 1, []scored{{"docs/readme.md", 1}}},
		{"limit above matches", "md", 10, []scored{{"docs/readme.md", 1}, {login, 1}}},
		{"unicode folding: long s", "SCANNER", 0, []scored{{"Straße/Ǆ-file.txt", 1}}},
		{"unicode folding: titlecase digraph", "ǅ-FILE", 0, []scored{{"Straße/Ǆ-file.txt", 1}}},
		{"short word", "ß", 0, []scored{{"Straße/Ǆ-file.txt", 1}}},
		{"punctuation-only word kept", "/", 0, []scored{{"Straße/Ǆ-file.txt", 1}, {"docs/readme.md", 1}, {login, 1}, {"reports/Q3-Sales.xlsx", 1}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := scores(query(t, x, index.Query{Text: tc.q, Limit: tc.limit}))
			if len(got) == 0 && len(tc.want) == 0 {
				return
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("query %q = %v, want %v", tc.q, got, tc.want)
			}
		})
	}
}

func TestQueryResultCarriesRecord(t *testing.T) {
	x := keywordCorpus(t)
	res := query(t, x, index.Query{Text: "spreadsheet"})
	if len(res) != 1 {
		t.Fatalf("got %d results", len(res))
	}
	r := res[0]
	if r.CreatedBy != "spreadsheet" || r.Task != "" || r.RelatedApps == nil || len(r.RelatedApps) != 0 || !r.CreatedAt.Equal(t0) {
		t.Errorf("record = %+v", r.Record)
	}
}

// TestQueryHybrid: semantic matches with client vectors of a 4-d model whose cosines
// are exact in floating point, so the threshold edge and the 1.0 tie are real.
func TestQueryHybrid(t *testing.T) {
	x := openIndex(t, t.TempDir(), index.Options{})
	q := vec4(1, 0, 0, 0)
	files := []struct {
		path string
		v    *index.Vector
	}{
		{"a/identical", vec4(2, 0, 0, 0)},          // cos 1.0 exactly
		{"b/half", vec4(1, 1, 1, 1)},               // cos 0.5 exactly: threshold edge
		{"c/below", vec4(1, 1, 1, 1.001)},          // just below 0.5
		{"d/orthogonal", vec4(0, 1, 0, 0)},         // 0
		{"e/opposite", vec4(-1, 0, 0, 0)},          // -1, clamped to 0
		{"z/keyword-hit", nil},                     // no vector, one keyword point
		{"y/keyword-and-vector", vec4(1, 1, 1, 1)}, // one point + 0.5
	}
	for i, f := range files {
		mustCreate(t, x, f.path, "", uint64(i+1))
		if f.v != nil {
			mustTag(t, x, f.path, "", nil, f.v)
		}
	}
	tests := []struct {
		name string
		q    index.Query
		want []scored
	}{
		{"pure semantic, threshold inclusive", index.Query{Vector: q}, []scored{{"a/identical", 1}, {"b/half", 0.5}, {"y/keyword-and-vector", 0.5}}},
		{"keyword hit outranks a 1.0 semantic match (tie by points)", index.Query{Text: "keyword", Vector: q},
			[]scored{{"y/keyword-and-vector", 1.5}, {"z/keyword-hit", 1}, {"a/identical", 1}, {"b/half", 0.5}}},
		{"keyword candidate below threshold keeps its similarity", index.Query{Text: "below", Vector: q},
			[]scored{{"c/below", 1 + index.Similarity(q.Values, []float32{1, 1, 1, 1.001})}, {"a/identical", 1}, {"b/half", 0.5}, {"y/keyword-and-vector", 0.5}}},
		{"negative cosine clamps to 0", index.Query{Text: "opposite", Vector: q}, []scored{{"e/opposite", 1}, {"a/identical", 1}, {"b/half", 0.5}, {"y/keyword-and-vector", 0.5}}},
		{"limit keeps the best", index.Query{Text: "keyword", Vector: q, Limit: 2}, []scored{{"y/keyword-and-vector", 1.5}, {"z/keyword-hit", 1}}},
		{"keyword-only without vector or embedder", index.Query{Text: "keyword"}, []scored{{"y/keyword-and-vector", 1}, {"z/keyword-hit", 1}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := scores(query(t, x, tc.q))
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %v\nwant %v", got, tc.want)
			}
		})
	}
	if s := x.Stats(); s.KeywordOnly == "" || s.Vectors[testModel.Name] != 6 {
		t.Errorf("stats = %+v", s)
	}
}

func TestQueryInvalid(t *testing.T) {
	x := keywordCorpus(t)
	nan := float32(0)
	nan = nan / nan
	tests := []struct {
		name string
		q    index.Query
		is   error
	}{
		{"empty", index.Query{Text: "  \t"}, index.ErrInvalidQuery},
		{"unknown model", index.Query{Text: "a", Vector: &index.Vector{Model: "nope", Values: []float32{1}}}, index.ErrUnknownModel},
		{"wrong dims", index.Query{Vector: &index.Vector{Model: testModel.Name, Values: []float32{1, 0}}}, index.ErrInvalidVector},
		{"NaN", index.Query{Vector: vec4(1, nan, 0, 0)}, index.ErrInvalidVector},
		{"zero", index.Query{Vector: vec4(0, 0, 0, 0)}, index.ErrInvalidVector},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := x.Query(context.Background(), tc.q)
			if !errors.Is(err, tc.is) || index.KindOf(err) != index.KindInvalid {
				t.Errorf("err = %v, want %v with KindInvalid", err, tc.is)
			}
		})
	}
}
