package content

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"path"
	"regexp"
	"regexp/syntax"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Limits of a grep request.
const (
	DefaultLimit = 1000
	MaxLimit     = 1_000_000
	MaxContext   = 100
	MaxPattern   = 64 << 10
	MaxGlobs     = 256
)

// Request is one grep (POST /v1/grep).
type Request struct {
	Pattern    string   `json:"pattern"`
	Fixed      bool     `json:"fixed,omitempty"`      // Pattern is a literal string
	IgnoreCase bool     `json:"ignoreCase,omitempty"` // Go's simple case folding
	Paths      []string `json:"paths,omitempty"`      // globs (path.Match): with a "/" (a leading one anchors at the root), on the file's path or one of its directories; without, on any one name in it
	Limit      int      `json:"limit,omitempty"`      // matching lines; 0 = DefaultLimit
	Context    int      `json:"context,omitempty"`    // lines before and after each match
	All        bool     `json:"all,omitempty"`        // also files not content-indexed (too big, binary, not UTF-8)
	Counts     bool     `json:"counts,omitempty"`     // also Answer.Counts: every file searched, with its count (grep -c)
}

// Match is one matching line, or (Binary) one file of binary data that matches.
type Match struct {
	Path   string   `json:"path"`
	Line   int      `json:"line"`   // 1-based; 0 for a binary match
	Column int      `json:"column"` // 1-based byte offset of the first match in the line; 0 for a binary match
	Text   string   `json:"text"`
	Before []string `json:"before,omitempty"`
	After  []string `json:"after,omitempty"`
	Binary bool     `json:"binary,omitempty"` // the file holds binary data (a NUL, or bytes that are not UTF-8); GNU grep says "binary file matches"
	// Lines is, for a binary match, how many matching lines it stands for,
	// as GNU grep -c counts them (in a file with a NUL, a NUL ends a line
	// too); a binary match is one entry however many lines matched.
	Lines int `json:"lines,omitempty"`
}

// Stats says how an answer was found.
type Stats struct {
	Candidates int     `json:"candidates"` // files the trigram query (and the dirty set) selected
	Scanned    int     `json:"scanned"`    // files read and matched line by line
	Indexed    int     `json:"indexed"`    // files in the content index
	Ms         float64 `json:"ms"`
}

// Answer is a grep's answer, sorted by path then line.
type Answer struct {
	Matches   []Match `json:"matches"`
	Files     int     `json:"files"` // files with at least one match in Matches
	Truncated bool    `json:"truncated"`
	Stats     Stats   `json:"stats"`
	// Counts (asked for with Request.Counts) is every file searched that the
	// caller may read, by path, with its count of matching lines as GNU grep
	// -c gives it, files with none included; the limit does not cut it.
	Counts []Count `json:"counts,omitempty"`
}

// Count is one file's count of matching lines (a binary match counts the
// lines it stands for).
type Count struct {
	Path  string `json:"path"`
	Lines int    `json:"lines"`
}

// ErrInvalid is wrapped by every error about the request itself.
var ErrInvalid = errors.New("invalid grep request")

// Env is what a grep needs from the daemon for one caller.
type Env struct {
	// Unsettled lists paths written whose change has not reached the index's
	// change stream yet (the core's write-quiet debounce); they are read
	// directly. Called after Sync.
	Unsettled func() []string
	// Sync waits until every change the core has emitted reached Apply.
	Sync func(ctx context.Context) error
	// Open opens p for the caller and calls use with it (Files.Open): an
	// error when the caller may not read it or it is gone (those are
	// skipped).
	Open func(ctx context.Context, p string, use func(FileReader) error) error
}

// Compiled is a checked grep request.
type Compiled struct {
	req   Request
	re    *regexp.Regexp // one line at a time
	multi *regexp.Regexp // (?m) form, to find the next line worth matching; nil when unsafe
	query *Query
	globs []string
	limit int
}

// Compile checks req and compiles its pattern. Patterns are Go RE2 syntax
// (regexp/syntax); a newline separates alternatives, as in GNU grep.
func Compile(req Request) (*Compiled, error) {
	if len(req.Pattern) > MaxPattern {
		return nil, fmt.Errorf("%w: pattern is over %d bytes", ErrInvalid, MaxPattern)
	}
	if !utf8.ValidString(req.Pattern) {
		return nil, fmt.Errorf("%w: pattern is not valid UTF-8", ErrInvalid)
	}
	if req.Limit < 0 || req.Limit > MaxLimit {
		return nil, fmt.Errorf("%w: limit must be 0 (the default, %d) to %d", ErrInvalid, DefaultLimit, MaxLimit)
	}
	if req.Context < 0 || req.Context > MaxContext {
		return nil, fmt.Errorf("%w: context must be 0 to %d", ErrInvalid, MaxContext)
	}
	if len(req.Paths) > MaxGlobs {
		return nil, fmt.Errorf("%w: more than %d paths", ErrInvalid, MaxGlobs)
	}
	c := &Compiled{req: req, limit: req.Limit}
	if c.limit == 0 {
		c.limit = DefaultLimit
	}
	for _, g := range req.Paths {
		anchored := strings.HasPrefix(g, "/")
		g = strings.Trim(g, "/")
		if anchored && g != "" {
			g = "/" + g // kept: matched from the root (selected)
		}
		if _, err := path.Match(g, ""); err != nil {
			return nil, fmt.Errorf("%w: paths: %q: %v", ErrInvalid, g, err)
		}
		c.globs = append(c.globs, g)
	}
	alts := strings.Split(req.Pattern, "\n")
	for i, a := range alts {
		if req.Fixed {
			alts[i] = regexp.QuoteMeta(a)
		} else if len(alts) > 1 {
			alts[i] = "(?:" + a + ")"
		}
	}
	expr := strings.Join(alts, "|")
	flags := ""
	if req.IgnoreCase {
		flags = "(?i)"
	}
	re, err := regexp.Compile(flags + expr)
	if err != nil {
		return nil, fmt.Errorf("%w: pattern: %v", ErrInvalid, err)
	}
	c.re = re
	tree, err := syntax.Parse(flags+expr, syntax.Perl)
	if err != nil {
		return nil, fmt.Errorf("%w: pattern: %v", ErrInvalid, err)
	}
	c.query = Analyze(tree)
	if m, err := syntax.Parse("(?m)"+flags+expr, syntax.Perl); err == nil && !hasTextAnchor(m) {
		c.multi, _ = regexp.Compile("(?m)" + flags + expr)
	}
	return c, nil
}

// Query is the trigram query the pattern's candidates satisfy.
func (c *Compiled) Query() *Query { return c.query }

// hasTextAnchor: \A and \z mean the start and end of a line when one line is
// matched, but of the file in the (?m) form, which would then miss matches.
func hasTextAnchor(re *syntax.Regexp) bool {
	if re.Op == syntax.OpBeginText || re.Op == syntax.OpEndText {
		return true
	}
	return slices.ContainsFunc(re.Sub, hasTextAnchor)
}

// selected reports whether p is chosen by the request's globs.
func (c *Compiled) selected(p string) bool {
	if len(c.globs) == 0 {
		return true
	}
	for _, g := range c.globs {
		if g == "" {
			return true
		}
		g, anchored := strings.CutPrefix(g, "/")
		if !anchored && !strings.Contains(g, "/") {
			// A glob of one name matches any name in the path, as
			// .gitignore's do: "*.md" is every Markdown file.
			for name := range strings.SplitSeq(p, "/") {
				if ok, _ := path.Match(g, name); ok {
					return true
				}
			}
			continue
		}
		for q := p; ; {
			if ok, _ := path.Match(g, q); ok {
				return true
			}
			i := strings.LastIndexByte(q, '/')
			if i < 0 {
				break
			}
			q = q[:i]
		}
	}
	return false
}

// candidates is the sorted list of paths to read: the postings' candidates,
// every dirty path, and with all every skipped file.
func (x *Index) candidates(c *Compiled, unsettled []string) (paths []string, indexed int) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.drainLocked()
	bm := x.eval(c.query)
	set := make(map[string]struct{}, bm.GetCardinality())
	it := bm.Iterator()
	for it.HasNext() {
		if p := x.paths[it.Next()]; p != "" && c.selected(p) {
			set[p] = struct{}{}
		}
	}
	for p := range x.linked {
		if c.selected(p) {
			set[p] = struct{}{} // read directly: see entry.links
		}
	}
	if c.req.All {
		for p, e := range x.files.All() {
			if (e.state == TooBig || e.state == Binary || e.state == NotUTF8) && c.selected(p) {
				set[p] = struct{}{}
			}
		}
	}
	x.q.Dirty(func(p string) {
		if c.selected(p) {
			set[p] = struct{}{}
		}
	})
	for _, p := range unsettled {
		if c.selected(p) {
			set[p] = struct{}{}
		}
	}
	paths = make([]string, 0, len(set))
	for p := range set {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	return paths, int(x.live.GetCardinality())
}

// Grep answers c over the export: candidates from the postings and the dirty
// set, then Go's regexp over each candidate's lines, as the caller (env.Open).
func (x *Index) Grep(ctx context.Context, c *Compiled, env Env) (Answer, error) {
	t0 := time.Now()
	if env.Sync != nil {
		if err := env.Sync(ctx); err != nil {
			return Answer{}, err
		}
	}
	var unsettled []string
	if env.Unsettled != nil {
		unsettled = env.Unsettled()
	}
	paths, indexed := x.candidates(c, unsettled)
	ans := Answer{Matches: []Match{}, Stats: Stats{Candidates: len(paths), Indexed: indexed}}
	// Files are read a chunk at a time by a few goroutines and their matches
	// kept in path order, so that the limit cuts the sorted answer exactly.
	workers := max(1, min(runtime.GOMAXPROCS(0), 4))
	chunk := 8 * workers
	results := make([][]Match, chunk)
	scanned := make([]bool, chunk)
	counted := map[string]int{} // with Counts: each file read, its count
	full := false               // the limit is reached (with Counts, files are still read and counted)
	var bufs sync.Pool
	for start := 0; start < len(paths); start += chunk {
		if err := ctx.Err(); err != nil {
			return Answer{}, err
		}
		part := paths[start:min(len(paths), start+chunk)]
		var wg sync.WaitGroup
		next := make(chan int, len(part))
		for i := range part {
			next <- i
		}
		close(next)
		for range min(workers, len(part)) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				b, _ := bufs.Get().(*[]byte)
				if b == nil {
					b = new([]byte)
				}
				for i := range next {
					results[i], scanned[i] = x.scanFile(ctx, c, env, part[i], b)
				}
				bufs.Put(b)
			}()
		}
		wg.Wait()
		for i := range part {
			if scanned[i] {
				ans.Stats.Scanned++
				if c.req.Counts {
					counted[part[i]] = x.count(ctx, c, env, part[i], results[i])
				}
			}
			ms := results[i]
			results[i] = nil
			if len(ms) == 0 || full {
				if len(ms) > 0 {
					ans.Truncated = true
				}
				continue
			}
			ans.Files++
			if room := c.limit - len(ans.Matches); len(ms) >= room {
				ans.Matches = append(ans.Matches, ms[:room]...)
				ans.Truncated = len(ms) > room
				if c.req.Counts {
					full = true // counting goes on; a later match truncates
					continue
				}
				if !ans.Truncated && start+i+1 < len(paths) {
					ans.Truncated = x.moreMatches(ctx, c, env, paths[start+i+1:])
				}
				ans.Stats.Ms = msSince(t0)
				return ans, nil
			}
			ans.Matches = append(ans.Matches, ms...)
		}
	}
	if c.req.Counts {
		ans.Counts = x.counts(ctx, c, env, paths, counted)
	}
	ans.Stats.Ms = msSince(t0)
	return ans, nil
}

// LineCount is how many matching lines m stands for, as grep -c counts
// them: one, or a binary match's Lines.
func (m Match) LineCount() int {
	if m.Binary {
		return max(1, m.Lines)
	}
	return 1
}

// lineCount is how many matching lines ms stands for.
func lineCount(ms []Match) int {
	n := 0
	for _, m := range ms {
		n += m.LineCount()
	}
	return n
}

// count is p's count of matching lines given ms, its matches as scanFile
// answered them: they stop one past the limit, and then p is read again
// without one.
func (x *Index) count(ctx context.Context, c *Compiled, env Env, p string, ms []Match) int {
	if len(ms) <= c.limit {
		return lineCount(ms)
	}
	all := *c
	all.limit, all.req.Context = math.MaxInt, 0
	var buf []byte
	ms, _ = x.scanFile(ctx, &all, env, p, &buf)
	return lineCount(ms)
}

// counts is Answer.Counts: the candidates read (counted; those not read
// the caller may not), and every other file c searches, with 0, if the
// caller can open it.
func (x *Index) counts(ctx context.Context, c *Compiled, env Env, candidates []string, counted map[string]int) []Count {
	x.mu.Lock()
	var others []string
	for p, e := range x.files.All() {
		if _, cand := slices.BinarySearch(candidates, p); cand || !c.selected(p) || e.state == NotRegular || e.state != Indexed && !c.req.All {
			continue
		}
		others = append(others, p)
	}
	x.mu.Unlock()
	out := make([]Count, 0, len(counted)+len(others))
	for p, n := range counted {
		out = append(out, Count{Path: p, Lines: n})
	}
	for _, p := range others {
		if ctx.Err() != nil {
			break
		}
		if env.Open(ctx, p, func(FileReader) error { return nil }) == nil {
			out = append(out, Count{Path: p})
		}
	}
	slices.SortFunc(out, func(a, b Count) int { return strings.Compare(a.Path, b.Path) })
	return out
}

// moreMatches reports whether any of paths matches (the answer is full: is it
// truncated?).
func (x *Index) moreMatches(ctx context.Context, c *Compiled, env Env, paths []string) bool {
	var b []byte
	for _, p := range paths {
		if ms, _ := x.scanFile(ctx, c, env, p, &b); len(ms) > 0 {
			return true
		}
	}
	return false
}

func msSince(t time.Time) float64 {
	return float64(time.Since(t).Microseconds()) / 1000
}

// scanFile matches p's lines; scanned is false when it was not read (gone,
// not the caller's to read, not a regular file, or skipped without all).
func (x *Index) scanFile(ctx context.Context, c *Compiled, env Env, p string, buf *[]byte) (ms []Match, scanned bool) {
	env.Open(ctx, p, func(f FileReader) error {
		ms, scanned = x.scanOpen(c, p, f, buf)
		return nil
	})
	return ms, scanned
}

// scanOpen is scanFile of p, open as f.
func (x *Index) scanOpen(c *Compiled, p string, f FileReader, buf *[]byte) (ms []Match, scanned bool) {
	fi, err := f.Stat()
	if err != nil || !fi.Regular {
		return nil, false
	}
	if fi.Size > x.opt.Max && !c.req.All {
		return nil, false
	}
	if fi.Size > x.opt.Max {
		// With all: read a line at a time, never the whole file at once.
		return c.matchStream(p, f), true
	}
	data, err := readAll(f, *buf, -1, x.opt.Max) // to EOF, as grep reads
	*buf = data
	if err != nil || int64(len(data)) > x.opt.Max && !c.req.All {
		return nil, err == nil
	}
	st := classify(data)
	if st != Indexed && !c.req.All {
		return nil, true
	}
	if bytes.IndexByte(data, 0) >= 0 {
		// Binary data, as GNU grep sees it: a NUL ends a line too, and a
		// match is told as one "binary file matches".
		if n := matchBinary(c, data); n > 0 {
			return []Match{{Path: p, Binary: true, Lines: n}}, true
		}
		return nil, true
	}
	if st != Indexed {
		// Not UTF-8: GNU grep prints the matching lines until one that is
		// not valid UTF-8, then says "binary file matches" (matchStream).
		return c.matchStream(p, bytes.NewReader(data)), true
	}
	return c.matchText(p, data), true
}

// matchBinary counts the lines of data that match, a NUL ending a line as a
// newline does.
func matchBinary(c *Compiled, data []byte) (n int) {
	for len(data) > 0 {
		i := bytes.IndexAny(data, "\n\x00")
		line := data
		if i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		if c.re.Match(line) {
			n++
		}
	}
	return n
}

// matchText returns the matching lines of a UTF-8 text. The (?m) form finds
// the next place a match may start; the line holding it is then matched alone
// (the (?m) form may match across a newline, through a negated class).
func (c *Compiled) matchText(p string, data []byte) []Match {
	var ms []Match
	lineNo, pos := 1, 0 // the line starting at pos
	for pos < len(data) {
		if c.multi != nil {
			loc := c.multi.FindIndex(data[pos:])
			if loc == nil {
				break
			}
			if ls := bytes.LastIndexByte(data[pos:pos+loc[0]], '\n'); ls >= 0 {
				lineNo += bytes.Count(data[pos:pos+ls+1], newline)
				pos += ls + 1
			}
			if pos >= len(data) {
				break // an empty match after the last line's newline: no line there
			}
		}
		end, next := len(data), len(data)
		if e := bytes.IndexByte(data[pos:], '\n'); e >= 0 {
			end, next = pos+e, pos+e+1
		}
		line := data[pos:end]
		if loc := c.re.FindIndex(line); loc != nil {
			m := Match{Path: p, Line: lineNo, Column: loc[0] + 1, Text: string(line)}
			if c.req.Context > 0 {
				m.Before = linesBefore(data, pos, c.req.Context)
				m.After = linesAfter(data, next, c.req.Context)
			}
			ms = append(ms, m)
			if len(ms) > c.limit {
				break // one more than the answer can hold: enough to say it is truncated
			}
		}
		pos = next
		lineNo++
	}
	return ms
}

var newline = []byte{'\n'}

// linesBefore is up to n lines ending just before the line at start.
func linesBefore(data []byte, start, n int) []string {
	var out []string
	end := start - 1 // the newline ending the previous line
	for len(out) < n && end >= 0 {
		s := bytes.LastIndexByte(data[:end], '\n') + 1
		out = append(out, string(data[s:end]))
		end = s - 1
	}
	slices.Reverse(out)
	return out
}

// linesAfter is up to n lines from next on.
func linesAfter(data []byte, next, n int) []string {
	var out []string
	for len(out) < n && next < len(data) {
		e := bytes.IndexByte(data[next:], '\n')
		if e < 0 {
			out = append(out, string(data[next:]))
			break
		}
		out = append(out, string(data[next:next+e]))
		next += e + 1
	}
	return out
}

// matchStream is matchText and matchBinary for a file read a line at a time
// (over the size cap, searched with all): memory stays bounded by the longest
// line and the context kept, whatever the file's size.
func (c *Compiled) matchStream(p string, f io.Reader) []Match {
	r := bufio.NewReaderSize(f, 1<<20)
	var ms []Match
	var before []string // the last Context lines
	var waiting []int   // indexes in ms of matches still taking after-context
	binary := false
	left := 0 // matching lines not answered as lines: not valid text, or binary data
	var long []byte
	for lineNo := 1; ; lineNo++ {
		chunk, err := r.ReadSlice('\n')
		line := chunk
		if err == bufio.ErrBufferFull {
			long = append(long[:0], chunk...)
			for err == bufio.ErrBufferFull {
				chunk, err = r.ReadSlice('\n')
				long = append(long, chunk...)
			}
			line = long
		}
		if len(line) == 0 && err != nil {
			break
		}
		line = bytes.TrimSuffix(line, newline)
		if !binary && bytes.IndexByte(line, 0) >= 0 {
			binary = true // a NUL: the rest is binary data
		}
		switch {
		case !binary && !utf8.Valid(line):
			// GNU grep leaves out a matching line that is not valid text
			// and says "binary file matches" for it; the others print.
			if c.re.Match(line) {
				left++
			}
		case binary:
			for part := range bytes.SplitSeq(line, []byte{0}) {
				if c.re.Match(part) {
					left++
				}
			}
		case len(ms) <= c.limit:
			for len(waiting) > 0 && len(ms[waiting[0]].After) >= c.req.Context {
				waiting = waiting[1:]
			}
			for _, i := range waiting {
				ms[i].After = append(ms[i].After, string(line))
			}
			if loc := c.re.FindIndex(line); loc != nil {
				m := Match{Path: p, Line: lineNo, Column: loc[0] + 1, Text: string(line)}
				if c.req.Context > 0 {
					m.Before = slices.Clone(before)
					waiting = append(waiting, len(ms))
				}
				ms = append(ms, m)
			}
			if c.req.Context > 0 {
				if len(before) == c.req.Context {
					before = before[1:]
				}
				before = append(before, string(line))
			}
		}
		if err != nil {
			break
		}
	}
	switch {
	case binary && left+len(ms) > 0:
		// A NUL: one binary match, for the text lines before it too.
		return []Match{{Path: p, Binary: true, Lines: left + len(ms)}}
	case left > 0:
		// The lines GNU grep prints, after the file's one binary match
		// (line 0: an answer is sorted by path then line).
		return append([]Match{{Path: p, Binary: true, Lines: left}}, ms...)
	}
	return ms
}
