package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/semfs/semfs/client"
)

// grep's exit codes are GNU grep's: 0 a line matched, 1 none, 2 an error.
const (
	grepMatched = 0
	grepNone    = 1
	grepError   = 2
)

// runGrep is `semfs grep`: POST /v1/grep, printed as GNU grep -r prints its
// matches when run in the backing directory (paths relative to the export
// root, without "./").
func runGrep(ctx context.Context, env *cliEnv, args []string) int {
	var cf clientFlags
	var icase, fixed, list, count, number, all bool
	var ctxLines int
	fs := newFlagSet(env, "grep", "[-i] [-F] [-l] [-c] [-n] [-C N] [--all=false] [--json] PATTERN [PATH...]")
	cf.register(fs)
	fs.BoolVar(&icase, "i", false, "ignore case")
	fs.BoolVar(&fixed, "F", false, "PATTERN is a literal string, not a Go RE2 regular expression")
	fs.BoolVar(&list, "l", false, "print only the names of files with a match")
	fs.BoolVar(&count, "c", false, "print each file's count of matching lines, 0 too")
	fs.BoolVar(&number, "n", false, "print line numbers")
	fs.IntVar(&ctxLines, "C", 0, "print N lines of context around each match")
	// GNU grep -r reads every file; so does semfs grep, so that -l and -c
	// name the binary, non-UTF-8 and over-the-cap files GNU grep names.
	// --all is that default, kept for scripts that pass it.
	fs.BoolVar(&all, "all", true, "search files not content-indexed too (too big, binary, not UTF-8), as GNU grep does: the default")
	pos, err := parseInterleaved(fs, splitShortFlags(args))
	if err != nil || len(pos) == 0 || ctxLines < 0 {
		if err == nil {
			fs.Usage()
		}
		return grepError
	}
	// -c prints every file searched, "path:0" too, as GNU grep does: the
	// answer's counts (-l wins over -c, as in GNU grep).
	req := client.GrepRequest{Pattern: pos[0], Fixed: fixed, IgnoreCase: icase, Limit: 1_000_000, Context: ctxLines, All: all, Counts: count && !list}
	var operands []string
	for _, p := range pos[1:] {
		p = path.Clean(strings.TrimPrefix(p, "/"))
		if p == "." {
			p = ""
		}
		operands = append(operands, p)
		req.Paths = append(req.Paths, "/"+globQuote(p)) // anchored at the export's root, as GNU grep's operands are at its working directory
	}
	if list || count {
		req.Context = 0
	}
	ans, err := cf.client().Grep(ctx, req)
	if err != nil {
		exitFor(env, err)
		return grepError
	}
	if cf.json {
		printJSON(env.stdout, ans)
	} else {
		w := bufio.NewWriter(env.stdout)
		printGrep(w, env.stderr, ans, list, count, number, req.Context > 0, namesFiles(operands, ans))
		w.Flush()
	}
	if ans.Truncated && !req.Counts {
		fmt.Fprintf(env.stderr, "semfs grep: more than %d matching lines; the rest are not shown\n", len(ans.Matches))
	}
	if len(ans.Matches) == 0 {
		return grepNone
	}
	return grepMatched
}

// namesFiles says whether a line starts with its file's name: GNU grep -r
// leaves the name out when its one operand is a file (not a directory), and
// only then. One operand that every answered path equals is such a file; a
// directory's files have longer paths.
func namesFiles(operands []string, ans client.GrepResponse) bool {
	if len(operands) != 1 {
		return true
	}
	for _, m := range ans.Matches {
		if m.Path != operands[0] {
			return true
		}
	}
	for _, c := range ans.Counts {
		if c.Path != operands[0] {
			return true
		}
	}
	return false
}

// printGrep prints ans as GNU grep -r does with the same flags. Context lines
// are told by "-" after the path (and line number), groups apart by "--";
// without names (namesFiles), a line starts at its number or text.
func printGrep(w io.Writer, stderr io.Writer, ans client.GrepResponse, list, count, number, contextual, names bool) {
	if count && !list {
		for _, c := range ans.Counts {
			if names {
				fmt.Fprintf(w, "%s:%d\n", c.Path, c.Lines)
			} else {
				fmt.Fprintf(w, "%d\n", c.Lines)
			}
		}
		return
	}
	byFile := [][]client.GrepMatch{}
	for i, m := range ans.Matches {
		if i == 0 || ans.Matches[i-1].Path != m.Path {
			byFile = append(byFile, nil)
		}
		byFile[len(byFile)-1] = append(byFile[len(byFile)-1], m)
	}
	lastPrinted := -1 // line number of the last line printed, in the current file; -1: none yet at all
	for _, ms := range byFile {
		p := ms[0].Path
		binaryAfter := false
		switch {
		case list:
			fmt.Fprintln(w, p)
			continue
		case ms[0].Binary && len(ms) == 1:
			fmt.Fprintf(stderr, "grep: %s: binary file matches\n", p)
			continue
		case ms[0].Binary:
			// The lines GNU grep printed before the binary data, then its
			// message.
			binaryAfter = true
			ms = ms[1:]
		}
		// The lines to print: every match and its context, merged.
		type line struct {
			text  string
			match bool
		}
		lines := map[int]line{}
		for _, m := range ms {
			for i, t := range m.Before {
				if n := m.Line - len(m.Before) + i; !lines[n].match {
					lines[n] = line{text: t}
				}
			}
			lines[m.Line] = line{text: m.Text, match: true}
			for i, t := range m.After {
				if n := m.Line + 1 + i; !lines[n].match {
					lines[n] = line{text: t}
				}
			}
		}
		nums := make([]int, 0, len(lines))
		for n := range lines {
			nums = append(nums, n)
		}
		slices.Sort(nums)
		for i, n := range nums {
			if contextual && lastPrinted >= 0 && (i == 0 || n != nums[i-1]+1) {
				fmt.Fprintln(w, "--")
			}
			sep := "-"
			if lines[n].match {
				sep = ":"
			}
			prefix := ""
			if names {
				prefix = p + sep
			}
			if number {
				prefix += strconv.Itoa(n) + sep
			}
			fmt.Fprintf(w, "%s%s\n", prefix, lines[n].text)
			lastPrinted = n
		}
		if binaryAfter {
			fmt.Fprintf(stderr, "grep: %s: binary file matches\n", p)
		}
	}
}

// splitShortFlags spells GNU grep's bundled short options one by one for the
// flag package: -in as -i -n, -C3 as -C 3.
func splitShortFlags(args []string) []string {
	out := make([]string, 0, len(args))
	for i, a := range args {
		if a == "--" {
			return append(out, args[i:]...)
		}
		if len(a) > 2 && a[0] == '-' && a[1] != '-' && strings.Trim(a[1:], "iFlcnC0123456789") == "" {
			for j := 1; j < len(a); j++ {
				if a[j] == 'C' {
					out = append(out, "-C")
					if j+1 < len(a) {
						if _, err := strconv.Atoi(a[j+1:]); err == nil {
							out = append(out, a[j+1:])
						}
					}
					break
				}
				out = append(out, "-"+string(a[j]))
			}
			continue
		}
		out = append(out, a)
	}
	return out
}

// globQuote escapes path.Match's special characters, so that a PATH argument
// names exactly that file or directory.
func globQuote(p string) string {
	var sb strings.Builder
	for _, c := range p {
		if strings.ContainsRune(`*?[\`, c) {
			sb.WriteByte('\\')
		}
		sb.WriteRune(c)
	}
	return sb.String()
}

// printContent is `semfs status`'s content-index line.
func printContent(w io.Writer, c *client.ContentStats) {
	if c == nil {
		return
	}
	fmt.Fprintf(w, "contents:   %d files, %d bytes indexed; %d pending; not indexed: %d too big, %d binary, %d not UTF-8\n",
		c.Files, c.Bytes, c.Pending, c.Skipped["too big"], c.Skipped["binary"], c.Skipped["not UTF-8"])
}
