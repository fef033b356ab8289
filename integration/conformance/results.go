package conformance

import (
	"bufio"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// FileResult is what one pjdfstest test file (e.g. "chown/07.t") gave
// through one mount.
type FileResult struct {
	File   string // relative to pjdfstest's tests/, e.g. "chown/07.t"
	Ran    int    // assertions reported (ok or not ok); the file's plan is not trusted: the type loops are patched
	Failed []int  // assertion numbers reported "not ok" (without a TODO directive), ascending
	Note   string // "" when the file ran to its end; "timeout" when the guest killed it, "exit N" otherwise
	// Lines holds, per failed assertion, its "not ok" line (what was tried,
	// expected and got). Result files do not keep it; reports show it.
	Lines map[int]string
}

// Results are one mount's results, by test file.
type Results map[string]FileResult

var tapLine = regexp.MustCompile(`^(not ok|ok) ([0-9]+)\b(.*)$`)

// ParseTAP reads the TAP output of one test file. pjdfstest numbers its
// assertions itself (1, 2, ...); a "not ok" carrying a "# TODO" directive is
// not a failure (TAP's rule, which prove applies). pjdfstest marks TODOs only
// for FreeBSD and Darwin, so under Linux none appear.
func ParseTAP(file, out string) FileResult {
	r := FileResult{File: file, Lines: map[int]string{}}
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		m := tapLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		n, err := strconv.Atoi(m[2])
		if err != nil {
			continue
		}
		r.Ran++
		if m[1] == "not ok" && !strings.Contains(m[3], "# TODO") {
			if _, dup := r.Lines[n]; !dup {
				r.Failed = append(r.Failed, n)
			}
			r.Lines[n] = sc.Text()
		}
	}
	sort.Ints(r.Failed)
	return r
}

// Total is the number of failed assertions of every file.
func (rs Results) Total() (failed, ran int) {
	for _, r := range rs {
		failed += len(r.Failed)
		ran += r.Ran
	}
	return
}

// Files returns the test files in order.
func (rs Results) Files() []string {
	fs := make([]string, 0, len(rs))
	for f := range rs {
		fs = append(fs, f)
	}
	sort.Strings(fs)
	return fs
}

// Format writes the results in the line format ParseResults reads:
//
//	# comment lines (what ran, where, when)
//	chown/07.t ran=20 failed=5,8
//	rename/09.t ran=2353 failed=- note=timeout
func (rs Results) Format(header ...string) string {
	var b strings.Builder
	for _, h := range header {
		fmt.Fprintf(&b, "# %s\n", h)
	}
	for _, f := range rs.Files() {
		r := rs[f]
		fmt.Fprintf(&b, "%s ran=%d failed=%s", f, r.Ran, joinInts(r.Failed, ","))
		if r.Note != "" {
			fmt.Fprintf(&b, " note=%s", strings.ReplaceAll(r.Note, " ", "_"))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// ParseResults reads what Format wrote.
func ParseResults(text string) (Results, error) {
	rs := Results{}
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		fields := strings.Fields(line)
		r := FileResult{File: fields[0], Ran: -1}
		for _, f := range fields[1:] {
			k, v, ok := strings.Cut(f, "=")
			if !ok {
				return nil, fmt.Errorf("results line %d: %q: field %q is not key=value", i+1, line, f)
			}
			switch k {
			case "ran":
				n, err := strconv.Atoi(v)
				if err != nil || n < 0 {
					return nil, fmt.Errorf("results line %d: %q: ran=%q is not a count", i+1, line, v)
				}
				r.Ran = n
			case "failed":
				ns, err := parseInts(v, ",")
				if err != nil {
					return nil, fmt.Errorf("results line %d: %q: %v", i+1, line, err)
				}
				r.Failed = ns
			case "note":
				r.Note = strings.ReplaceAll(v, "_", " ")
			default:
				return nil, fmt.Errorf("results line %d: %q: unknown field %q", i+1, line, k)
			}
		}
		if r.Ran < 0 {
			return nil, fmt.Errorf("results line %d: %q: no ran=", i+1, line)
		}
		if _, dup := rs[r.File]; dup {
			return nil, fmt.Errorf("results line %d: %s listed twice", i+1, r.File)
		}
		rs[r.File] = r
	}
	return rs, nil
}

func joinInts(ns []int, sep string) string {
	if len(ns) == 0 {
		return "-"
	}
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, sep)
}

// parseInts reads "-" (none) or numbers separated by sep, ascending and unique.
func parseInts(v, sep string) ([]int, error) {
	if v == "-" || v == "" {
		return nil, nil
	}
	var ns []int
	for _, p := range strings.Split(v, sep) {
		n, err := strconv.Atoi(p)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("%q is not an assertion number", p)
		}
		if len(ns) > 0 && n <= ns[len(ns)-1] {
			return nil, fmt.Errorf("assertion numbers must ascend: %d after %d", n, ns[len(ns)-1])
		}
		ns = append(ns, n)
	}
	return ns, nil
}
