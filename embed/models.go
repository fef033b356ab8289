package embed

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// KnownModels lists the models whose vectors the daemon accepts: MiniLM
// (vectors computed by clients) and USE-lite (computed in-process). The slice
// is new on every call; callers may change it.
func KnownModels() []Model {
	return []Model{MiniLM, UseLite}
}

// ParseThresholds parses a per-model threshold override such as
// "all-MiniLM-L6-v2=0.25,use-lite=0.5" (the daemon's -thresholds flag).
// Every name must be a known model and every value a cosine in [-1, 1]; an
// empty spec gives an empty map.
func ParseThresholds(spec string) (map[string]float64, error) {
	out := make(map[string]float64)
	if strings.TrimSpace(spec) == "" {
		return out, nil
	}
	known := KnownModels()
	for _, part := range strings.Split(spec, ",") {
		name, val, ok := strings.Cut(strings.TrimSpace(part), "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			return nil, errorf("parse thresholds", KindInput, "", "%q is not name=value", part)
		}
		if !slices.ContainsFunc(known, func(m Model) bool { return m.Name == name }) {
			return nil, errorf("parse thresholds", KindInput, "", "unknown model %q (known: %s)", name, modelNames(known))
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
		if err != nil || math.IsNaN(f) || f < -1 || f > 1 {
			return nil, errorf("parse thresholds", KindInput, "", "threshold %q for %s is not a number in [-1, 1]", val, name)
		}
		if _, dup := out[name]; dup {
			return nil, errorf("parse thresholds", KindInput, "", "model %s given twice", name)
		}
		out[name] = f
	}
	return out, nil
}

func modelNames(ms []Model) string {
	names := make([]string, len(ms))
	for i, m := range ms {
		names[i] = m.Name
	}
	return strings.Join(names, ", ")
}

// ApplyThresholds returns a copy of models with the thresholds of the named
// models replaced by the overrides (as parsed by ParseThresholds).
func ApplyThresholds(models []Model, overrides map[string]float64) []Model {
	out := slices.Clone(models)
	for i := range out {
		if t, ok := overrides[out[i].Name]; ok {
			out[i].Threshold = t
		}
	}
	return out
}

// WithThreshold returns e with its Threshold replaced by t (used when the
// daemon's flag overrides the in-process model's threshold). The result is
// as safe for concurrent use as e.
func WithThreshold(e Embedder, t float64) Embedder {
	if w, ok := e.(thresholded); ok {
		e = w.Embedder
	}
	return thresholded{Embedder: e, t: t}
}

type thresholded struct {
	Embedder
	t float64
}

func (w thresholded) Threshold() float64 { return w.t }

func (m Model) String() string {
	return fmt.Sprintf("%s (%d d, threshold %g)", m.Name, m.Dims, m.Threshold)
}
