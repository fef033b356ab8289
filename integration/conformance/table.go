package conformance

import (
	"fmt"
	"sort"
	"strings"
)

// Column is one mount's results in a table.
type Column struct {
	Name    string
	Results Results
}

// Table renders a markdown table of failed assertions per test file, one
// column per mount: the count, and the numbers when there are few. Files
// that pass everywhere are left out and counted below the table; the last
// rows give the totals per area (the test file's directory) and overall.
func Table(cols ...Column) string {
	files := map[string]bool{}
	for _, c := range cols {
		for f := range c.Results {
			files[f] = true
		}
	}
	var all []string
	for f := range files {
		all = append(all, f)
	}
	sort.Strings(all)
	var b strings.Builder
	b.WriteString("| test file |")
	for _, c := range cols {
		fmt.Fprintf(&b, " %s |", c.Name)
	}
	b.WriteString("\n|---|")
	for range cols {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	clean := 0
	for _, f := range all {
		any := false
		for _, c := range cols {
			if r := c.Results[f]; len(r.Failed) > 0 || r.Note != "" {
				any = true
			}
		}
		if !any {
			clean++
			continue
		}
		fmt.Fprintf(&b, "| %s |", f)
		for _, c := range cols {
			r, ok := c.Results[f]
			switch {
			case !ok:
				b.WriteString(" (not run) |")
			case len(r.Failed) == 0 && r.Note == "":
				b.WriteString(" 0 |")
			default:
				cell := fmt.Sprint(len(r.Failed))
				if len(r.Failed) <= 6 {
					cell += " (" + joinInts(r.Failed, " ") + ")"
				}
				if r.Note != "" {
					cell += fmt.Sprintf(" [%s after %d]", r.Note, r.Ran)
				}
				fmt.Fprintf(&b, " %s |", cell)
			}
		}
		b.WriteString("\n")
	}
	// Per area, then the total.
	areas := map[string]bool{}
	for _, f := range all {
		areas[strings.SplitN(f, "/", 2)[0]] = true
	}
	var as []string
	for a := range areas {
		as = append(as, a)
	}
	sort.Strings(as)
	for _, a := range as {
		fmt.Fprintf(&b, "| **%s/** |", a)
		for _, c := range cols {
			n := 0
			for f, r := range c.Results {
				if strings.HasPrefix(f, a+"/") {
					n += len(r.Failed)
				}
			}
			fmt.Fprintf(&b, " %d |", n)
		}
		b.WriteString("\n")
	}
	b.WriteString("| **total failed / ran** |")
	for _, c := range cols {
		failed, ran := c.Results.Total()
		fmt.Fprintf(&b, " **%d** / %d |", failed, ran)
	}
	fmt.Fprintf(&b, "\n\n%d other test files pass on every mount.\n", clean)
	return b.String()
}
