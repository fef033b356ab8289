package conformance

import (
	"fmt"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// The two lists docs/pjdfstest.md keeps, each under its own heading, one
// entry a line:
//
//   - `nfs chmod/12.t 3 4`: reason
//   - `9p mkfifo/00.t *`: reason (every assertion of the file)
//   - `nfs rename/09.t 100-140`: reason (a range)
//
// Accepted differences stay (the reason says why: by design, or what the
// protocol cannot carry). Known failures are not yet fixed while issue 29 is
// open; the gate lets them pass so CI stays green, and names those that
// have since been fixed.
const (
	AcceptedHeading = "## Accepted differences"
	KnownHeading    = "## Known failures, not yet fixed"
)

// Key names one assertion of one test file through one protocol.
type Key struct {
	Proto string // "nfs" or "9p"
	File  string // "chown/07.t"
	N     int    // assertion number; 0 = every assertion of the file
}

// Lists are the accepted differences and known failures, with their reasons.
type Lists struct {
	Accepted map[Key]string
	Known    map[Key]string
}

var listEntry = regexp.MustCompile("^- `(nfs|9p) ([a-z_0-9]+/[0-9]+\\.t) ([0-9*][0-9 ,*-]*)`:? *(.*)$")

// ReadLists reads both lists from the markdown file at path.
func ReadLists(path string) (Lists, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Lists{}, fmt.Errorf("conformance lists: %w", err)
	}
	return ParseLists(string(b))
}

// ParseLists reads both lists from markdown text. A line under either
// heading that starts with "- `" but is not a valid entry is an error, so a
// typo cannot silently drop an entry.
func ParseLists(text string) (Lists, error) {
	l := Lists{Accepted: map[Key]string{}, Known: map[Key]string{}}
	var cur map[Key]string
	for i, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "#") {
			switch strings.TrimSpace(line) {
			case AcceptedHeading:
				cur = l.Accepted
			case KnownHeading:
				cur = l.Known
			default:
				if strings.HasPrefix(line, "## ") || strings.HasPrefix(line, "# ") {
					cur = nil
				}
			}
			continue
		}
		if cur == nil || !strings.HasPrefix(line, "- `") {
			continue
		}
		m := listEntry.FindStringSubmatch(line)
		if m == nil {
			return l, fmt.Errorf("conformance lists, line %d: %q: want - `PROTO FILE NUMBERS`: REASON (PROTO nfs or 9p, NUMBERS like 3 5-7 or *)", i+1, line)
		}
		if strings.TrimSpace(m[4]) == "" {
			return l, fmt.Errorf("conformance lists, line %d: %q: no reason given", i+1, line)
		}
		ns, err := parseNumbers(m[3])
		if err != nil {
			return l, fmt.Errorf("conformance lists, line %d: %q: %v", i+1, line, err)
		}
		for _, n := range ns {
			cur[Key{m[1], m[2], n}] = strings.TrimSpace(m[4])
		}
	}
	return l, nil
}

// parseNumbers reads "3 5-7,9" or "*" (returned as 0: the whole file).
func parseNumbers(s string) ([]int, error) {
	var ns []int
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == ',' }) {
		if f == "*" {
			ns = append(ns, 0)
			continue
		}
		lo, hi, isRange := strings.Cut(f, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a <= 0 {
			return nil, fmt.Errorf("%q is not an assertion number", f)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return nil, fmt.Errorf("%q is not a range of assertion numbers", f)
			}
		}
		for n := a; n <= b; n++ {
			ns = append(ns, n)
		}
	}
	return ns, nil
}

// lookup finds an assertion's entry, or the file's "*" entry.
func lookup(m map[Key]string, k Key) (string, bool) {
	if r, ok := m[k]; ok {
		return r, true
	}
	r, ok := m[Key{k.Proto, k.File, 0}]
	return r, ok
}

// Failure is one assertion semfs fails.
type Failure struct {
	Key
	Line string // the "not ok" line, or why it did not run
}

// Gate is the comparison of semfs's results with its peer's for one protocol.
type Gate struct {
	New      []Failure // semfs fails, the peer passes, on no list: the gate fails
	Accepted []Failure // on the accepted list
	Known    []Failure // on the known-failures list
	Fixed    []string  // known failures semfs now passes ("9p chown/05.t 3")
}

// Compare finds the assertions semfs fails that the peer passes. An
// assertion semfs did not reach (its file stopped early: timeout, crash)
// counts as failed when the peer passed it.
func Compare(proto string, semfs, peer Results, l Lists) Gate {
	var g Gate
	files := map[string]bool{}
	for f := range semfs {
		files[f] = true
	}
	for f := range peer {
		files[f] = true
	}
	for f := range files {
		s, p := semfs[f], peer[f]
		sFailed, pFailed := set(s.Failed), set(p.Failed)
		max := s.Ran
		if p.Ran > max {
			max = p.Ran
		}
		for n := 1; n <= max; n++ {
			k := Key{proto, f, n}
			sFails := sFailed[n] || n > s.Ran
			if !sFails {
				if _, ok := l.Known[k]; ok {
					g.Fixed = append(g.Fixed, fmt.Sprintf("%s %s %d", proto, f, n))
				}
				continue
			}
			// The peer passed n when it ran n and did not fail it; a file the
			// peer has no result for counts as passed (nothing excuses semfs).
			if _, has := peer[f]; has && (pFailed[n] || n > p.Ran) {
				continue
			}
			line := s.Lines[n]
			if line == "" {
				if n > s.Ran {
					line = fmt.Sprintf("not run: the file stopped after %d assertions", s.Ran)
					if s.Note != "" {
						line += " (" + s.Note + ")"
					}
				} else {
					line = fmt.Sprintf("not ok %d", n)
				}
			}
			fl := Failure{k, line}
			switch {
			case has(l.Accepted, k):
				g.Accepted = append(g.Accepted, fl)
			case has(l.Known, k):
				g.Known = append(g.Known, fl)
			default:
				g.New = append(g.New, fl)
			}
		}
	}
	for _, fs := range [][]Failure{g.New, g.Accepted, g.Known} {
		sortFailures(fs)
	}
	sort.Strings(g.Fixed)
	return g
}

func has(m map[Key]string, k Key) bool {
	_, ok := lookup(m, k)
	return ok
}

func set(ns []int) map[int]bool {
	m := make(map[int]bool, len(ns))
	for _, n := range ns {
		m[n] = true
	}
	return m
}

func sortFailures(fs []Failure) {
	sort.Slice(fs, func(i, j int) bool {
		if fs[i].File != fs[j].File {
			return fs[i].File < fs[j].File
		}
		return fs[i].N < fs[j].N
	})
}

// NewReport lists the new failures, one test file a line with its numbers
// in the lists' entry format (ready to paste), then each failure's line.
func (g Gate) NewReport() string {
	var b strings.Builder
	byFile := map[string][]Failure{}
	var files []string
	for _, f := range g.New {
		if _, ok := byFile[f.File]; !ok {
			files = append(files, f.File)
		}
		byFile[f.File] = append(byFile[f.File], f)
	}
	sort.Strings(files)
	for _, file := range files {
		fs := byFile[file]
		ns := make([]int, len(fs))
		for i, f := range fs {
			ns[i] = f.N
		}
		fmt.Fprintf(&b, "  - `%s %s %s`\n", fs[0].Proto, file, Ranges(ns))
		for _, f := range fs {
			fmt.Fprintf(&b, "      %s\n", Elide(f.Line))
		}
	}
	return b.String()
}

// Ranges writes ascending assertion numbers as the lists write them:
// "3 5-7 9".
func Ranges(ns []int) string {
	var parts []string
	for i := 0; i < len(ns); {
		j := i
		for j+1 < len(ns) && ns[j+1] == ns[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, fmt.Sprintf("%d-%d", ns[i], ns[j]))
		} else {
			parts = append(parts, strconv.Itoa(ns[i]))
		}
		i = j + 1
	}
	return strings.Join(parts, " ")
}
