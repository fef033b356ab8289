package main

import (
	"fmt"
	"io"

	"github.com/semfs/semfs/client"
)

// printPassages is `semfs status`'s passages line.
func printPassages(w io.Writer, p *client.PassageStats) {
	if p == nil {
		return
	}
	fmt.Fprintf(w, "passages:   %d files, %d bytes in %d passages, %d embedded; %d pending\n", p.Files, p.Bytes, p.Passages, p.Embedded, p.Pending)
}
