package embed_test

import (
	"context"
	"testing"

	"github.com/semfs/semfs/embed"
	"github.com/semfs/semfs/embed/embedtest"
)

func TestKnownModels(t *testing.T) {
	ms := embed.KnownModels()
	want := map[string]int{"all-MiniLM-L6-v2": 384, "use-lite": 512}
	if len(ms) != len(want) {
		t.Fatalf("KnownModels() = %v", ms)
	}
	for _, m := range ms {
		if want[m.Name] != m.Dims || m.Threshold <= 0 || m.Threshold >= 1 {
			t.Errorf("unexpected model %v", m)
		}
	}
	if embed.MiniLM.Threshold != 0.2 {
		t.Errorf("MiniLM threshold %v, the reference's is 0.2", embed.MiniLM.Threshold)
	}
	ms[0].Threshold = 0.9 // callers own the slice
	if embed.KnownModels()[0].Threshold == 0.9 {
		t.Error("KnownModels shares its slice")
	}
}

func TestParseThresholds(t *testing.T) {
	for _, tc := range []struct {
		spec string
		want map[string]float64
		bad  bool
	}{
		{spec: "", want: map[string]float64{}},
		{spec: "all-MiniLM-L6-v2=0.25", want: map[string]float64{"all-MiniLM-L6-v2": 0.25}},
		{spec: " all-MiniLM-L6-v2 = 0.25 , use-lite=0.4", want: map[string]float64{"all-MiniLM-L6-v2": 0.25, "use-lite": 0.4}},
		{spec: "use-lite=-0.1", want: map[string]float64{"use-lite": -0.1}},
		{spec: "unknown=0.3", bad: true},
		{spec: "use-lite", bad: true},
		{spec: "=0.3", bad: true},
		{spec: "use-lite=abc", bad: true},
		{spec: "use-lite=NaN", bad: true},
		{spec: "use-lite=1.5", bad: true},
		{spec: "use-lite=0.3,use-lite=0.4", bad: true},
		{spec: "use-lite=0.3,", bad: true},
	} {
		got, err := embed.ParseThresholds(tc.spec)
		if tc.bad {
			if err == nil || embed.KindOf(err) != embed.KindInput {
				t.Errorf("ParseThresholds(%q) = %v, %v; want a KindInput error", tc.spec, got, err)
			}
			continue
		}
		if err != nil || len(got) != len(tc.want) {
			t.Errorf("ParseThresholds(%q) = %v, %v; want %v", tc.spec, got, err, tc.want)
			continue
		}
		for k, v := range tc.want {
			if got[k] != v {
				t.Errorf("ParseThresholds(%q)[%s] = %v, want %v", tc.spec, k, got[k], v)
			}
		}
	}
}

func TestApplyThresholds(t *testing.T) {
	base := embed.KnownModels()
	got := embed.ApplyThresholds(base, map[string]float64{"all-MiniLM-L6-v2": 0.25})
	for i, m := range got {
		want := base[i].Threshold
		if m.Name == "all-MiniLM-L6-v2" {
			want = 0.25
		}
		if m.Threshold != want {
			t.Errorf("%s: threshold %v, want %v", m.Name, m.Threshold, want)
		}
	}
	if base[0].Threshold != embed.MiniLM.Threshold {
		t.Error("ApplyThresholds changed its input")
	}
}

func TestWithThreshold(t *testing.T) {
	m := embedtest.USELite(t)
	w := embed.WithThreshold(embed.WithThreshold(m, 0.9), 0.5)
	if w.Threshold() != 0.5 || w.Name() != m.Name() || w.Dims() != m.Dims() {
		t.Fatalf("WithThreshold: %s %d %v", w.Name(), w.Dims(), w.Threshold())
	}
	if _, err := w.Embed(context.Background(), []string{"x"}); err != nil {
		t.Fatal(err)
	}
}
