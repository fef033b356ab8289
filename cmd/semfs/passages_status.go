package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/semfs/semfs/client"
)

// printPassages is `semfs status`'s passages line.
func printPassages(w io.Writer, p *client.PassageStats) {
	if p == nil {
		return
	}
	fmt.Fprintf(w, "passages:   %d files, %d bytes in %d passages, %d embedded; %d pending\n", p.Files, p.Bytes, p.Passages, p.Embedded, p.Pending)
}

// printResultPassages lists, below the results, each result's passages as
// path:line: and the passage's first line, as grep -n would show it.
func printResultPassages(w io.Writer, res []client.Result) {
	for _, r := range res {
		for _, p := range r.Passages {
			first, _, _ := strings.Cut(p.Text, "\n")
			fmt.Fprintf(w, "  %s:%d: %s\n", r.Path, p.Line, first)
		}
	}
}
