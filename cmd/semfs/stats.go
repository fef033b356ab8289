package main

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
)

// printStats prints the index's stats as "index.key: value" lines, whatever
// fields the index reports, so the CLI never lags behind the API.
func printStats(w io.Writer, stats any) {
	b, err := json.Marshal(stats)
	if err != nil {
		return
	}
	var m map[string]any
	if json.Unmarshal(b, &m) != nil {
		return
	}
	var lines []string
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch t := v.(type) {
		case map[string]any:
			for k, x := range t {
				walk(prefix+"."+k, x)
			}
		case nil:
		default:
			s := fmt.Sprint(t)
			if f, ok := t.(float64); ok && f == float64(int64(f)) {
				s = fmt.Sprint(int64(f))
			}
			if s != "" {
				lines = append(lines, fmt.Sprintf("%-11s %s", strings.TrimPrefix(prefix, ".")+":", s))
			}
		}
	}
	walk("index", m)
	sort.Strings(lines)
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
}
