package content

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"testing"
	"time"
)

// holds evaluates q against the trigram set of text.
func holds(q *Query, tris map[uint32]bool) bool {
	switch q.Op {
	case QAll:
		return true
	case QNone:
		return false
	case QAnd:
		for _, t := range q.Trigrams {
			if !tris[t] {
				return false
			}
		}
		for _, s := range q.Sub {
			if !holds(s, tris) {
				return false
			}
		}
		return true
	}
	for _, t := range q.Trigrams {
		if tris[t] {
			return true
		}
	}
	for _, s := range q.Sub {
		if holds(s, tris) {
			return true
		}
	}
	return false
}

var words = []string{"ДАННЫЕ", "данные", "abcdefgh", "timeout", "payment", "webhook", "Error", "ERROR", "café", "Ñandú", "日本語", "Δέλτα", "данные", "x", "ab", "abc", "42", "foo_bar", "a.b", "(", ")", "[x]", "\t"}

func genLine(r *rand.Rand) string {
	var sb strings.Builder
	for range r.IntN(8) {
		sb.WriteString(words[r.IntN(len(words))])
		sb.WriteString([]string{" ", "", "-", "  "}[r.IntN(4)])
	}
	return sb.String()
}

func genPattern(r *rand.Rand) string {
	piece := func() string {
		w := words[r.IntN(len(words))]
		switch r.IntN(8) {
		case 0:
			return regexp.QuoteMeta(w) + "?"
		case 1:
			return "[a-f]"
		case 2:
			return "(" + regexp.QuoteMeta(w) + "|" + regexp.QuoteMeta(words[r.IntN(len(words))]) + ")"
		case 3:
			return ".*"
		case 4:
			return "[^x ]+"
		case 5:
			return "(" + regexp.QuoteMeta(w) + ")" + []string{"+", "{2}", "{1,3}"}[r.IntN(3)]
		default:
			return regexp.QuoteMeta(w)
		}
	}
	var sb strings.Builder
	if r.IntN(4) == 0 {
		sb.WriteString("^")
	}
	for range 1 + r.IntN(3) {
		sb.WriteString(piece())
	}
	if r.IntN(4) == 0 {
		sb.WriteString("$")
	}
	if r.IntN(3) == 0 {
		return "(?i)" + sb.String()
	}
	return sb.String()
}

// TestAnalyzeNecessary: every line a generated pattern matches satisfies the
// pattern's trigram query (the index may over-match, never miss).
func TestAnalyzeNecessary(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	ix := newIndexer(1 << 20)
	for range 3000 {
		pat := genPattern(r)
		re := regexp.MustCompile(pat)
		tree, err := syntax.Parse(pat, syntax.Perl)
		if err != nil {
			t.Fatal(err)
		}
		q := Analyze(tree)
		for range 30 {
			line := genLine(r)
			if !re.MatchString(line) {
				continue
			}
			tris := map[uint32]bool{}
			for _, tr := range ix.trigrams([]byte(line)) {
				tris[tr] = true
			}
			if !holds(q, tris) {
				t.Fatalf("pattern %q matches %q but its query %s does not hold", pat, line, q)
			}
		}
	}
}

func TestAnalyzeSelective(t *testing.T) {
	for pat, want := range map[string]string{
		"timeout":        `"eou" "ime" "out" "tim" "meo"`,
		"colou?r":        `("col" "olo" "lou" "our")|("col" "olo" "lor")`,
		"a.*b":           "+",
		"(?i)abc":        "",
		"foo|bar":        `"foo"|"bar"`,
		"x[0-9]+payment": "",
	} {
		q := Analyze(mustParse(t, pat))
		if q.Op == QAll && want != "+" || q.Op != QAll && want == "+" {
			t.Errorf("%q: query %s, want %s", pat, q, want)
		}
	}
}

func mustParse(t *testing.T, p string) *syntax.Regexp {
	re, err := syntax.Parse(p, syntax.Perl)
	if err != nil {
		t.Fatal(err)
	}
	return re
}

func write(t *testing.T, dir, p, s string) {
	t.Helper()
	full := filepath.Join(dir, p)
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(full, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func walk(t *testing.T, dir string) []FileStat {
	var out []FileStat
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, FileStat{Path: rel, Size: fi.Size(), MTime: fi.ModTime()})
		}
		return nil
	})
	return out
}

func open(t *testing.T, data, idx string) *Index {
	t.Helper()
	x, err := Open(Options{Dir: idx, Max: 1 << 10, Files: Dir(data)})
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// reconciled opens the index of data in idx, takes in every file of data,
// and waits for it (within the 10 s of the context it returns).
func reconciled(t *testing.T, data, idx string) (*Index, context.Context) {
	t.Helper()
	x := open(t, data, idx)
	x.Reconcile(x.Begin(), nil, walk(t, data))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	if err := x.Settle(ctx); err != nil {
		t.Fatal(err)
	}
	return x, ctx
}

func grepPaths(t *testing.T, x *Index, data string, req Request) []string {
	t.Helper()
	c, err := Compile(req)
	if err != nil {
		t.Fatal(err)
	}
	ans, err := x.Grep(context.Background(), c, Env{Open: Dir(data).Open})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range ans.Matches {
		out = append(out, fmt.Sprintf("%s:%d", m.Path, m.Line))
	}
	return out
}

// TestIndexLifecycle: reconcile, changes, the dirty set, save, reload, and a
// damaged file rebuilt from the files.
func TestIndexLifecycle(t *testing.T) {
	data, idx := t.TempDir(), t.TempDir()
	write(t, data, "a.txt", "hello world\nthe payment webhook timed out\n")
	write(t, data, "d/b.txt", "nothing here\npayment ok")
	write(t, data, "big.txt", strings.Repeat("payment big\n", 200))
	write(t, data, "bin", "payment\x00binary")
	write(t, data, "latin1", "payment caf\xe9\n")
	x, ctx := reconciled(t, data, idx)
	st := x.Stats()
	if st.Files != 2 || st.Skipped["too big"] != 1 || st.Skipped["binary"] != 1 || st.Skipped["not UTF-8"] != 1 || st.Pending != 0 {
		t.Fatalf("stats %+v", st)
	}
	if got, want := grepPaths(t, x, data, Request{Pattern: "payment"}), []string{"a.txt:2", "d/b.txt:2"}; !slices.Equal(got, want) {
		t.Fatalf("got %v want %v", got, want)
	}
	all := grepPaths(t, x, data, Request{Pattern: "payment", All: true})
	if len(all) != 204 || all[201] != "bin:0" || all[203] != "latin1:0" {
		t.Fatalf("all: %d %v", len(all), all[200:])
	}
	// A write not yet announced: dirty through Apply, found at once.
	write(t, data, "d/b.txt", "now a timeout\n")
	x.Apply([]Change{{Op: Written, Path: "d/b.txt"}})
	if got := grepPaths(t, x, data, Request{Pattern: "timeout"}); !slices.Equal(got, []string{"d/b.txt:1"}) {
		t.Fatalf("after write: %v", got)
	}
	os.Rename(filepath.Join(data, "d"), filepath.Join(data, "e"))
	x.Apply([]Change{{Op: Renamed, Path: "d", NewPath: "e"}})
	os.Remove(filepath.Join(data, "a.txt"))
	x.Apply([]Change{{Op: Removed, Path: "a.txt"}})
	x.Settle(ctx)
	if got := grepPaths(t, x, data, Request{Pattern: "time"}); !slices.Equal(got, []string{"e/b.txt:1"}) {
		t.Fatalf("after rename: %v", got)
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	y := open(t, data, idx)
	if y.Damaged() != "" || y.Stats().Files != 1 {
		t.Fatalf("reloaded: %q %+v", y.Damaged(), y.Stats())
	}
	if got := grepPaths(t, y, data, Request{Pattern: "timeout"}); !slices.Equal(got, []string{"e/b.txt:1"}) {
		t.Fatalf("reloaded: %v", got)
	}
	y.Close()
	raw, _ := os.ReadFile(filepath.Join(idx, File))
	raw[len(raw)/2] ^= 0xff
	os.WriteFile(filepath.Join(idx, File), raw, 0o600)
	z := open(t, data, idx)
	defer z.Close()
	if z.Damaged() == "" || z.Stats().Files != 0 {
		t.Fatalf("damaged file taken: %+v", z.Stats())
	}
	z.Reconcile(z.Begin(), nil, walk(t, data))
	z.Settle(ctx)
	if got := grepPaths(t, z, data, Request{Pattern: "timeout"}); !slices.Equal(got, []string{"e/b.txt:1"}) || z.Stats().Files != 1 {
		t.Fatalf("rebuilt: %v", got)
	}
}

func TestPathsGlobs(t *testing.T) {
	for _, tc := range []struct {
		globs []string
		path  string
		want  bool
	}{
		{nil, "a/b.md", true},
		{[]string{"*.md"}, "a/b.md", true},
		{[]string{"*.md"}, "a/b.txt", false},
		{[]string{"a"}, "a/b.txt", true},
		{[]string{"b"}, "a/b/c.txt", true},
		{[]string{"/b"}, "a/b/c.txt", false},
		{[]string{"/b"}, "b/c.txt", true},
		{[]string{"/"}, "b/c.txt", true},
		{[]string{"a/b"}, "a/b/c.txt", true},
		{[]string{"a/b"}, "x/a/b/c.txt", false},
		{[]string{"a/*.txt"}, "a/c.txt", true},
		{[]string{"a/*.txt"}, "a/b/c.txt", false},
		{[]string{`a\*`}, "a*/c.txt", true},
		{[]string{`a\*`}, "ab/c.txt", false},
	} {
		c, err := Compile(Request{Pattern: "x", Paths: tc.globs})
		if err != nil {
			t.Fatal(err)
		}
		if got := c.selected(tc.path); got != tc.want {
			t.Errorf("globs %q on %q: %v, want %v", tc.globs, tc.path, got, tc.want)
		}
	}
	if _, err := Compile(Request{Pattern: "x", Paths: []string{"[a"}}); err == nil {
		t.Error("a malformed glob was taken")
	}
}

// matchStream (files over the cap, with all) answers as matchText does.
func TestMatchStreamEqualsMatchText(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	for range 400 {
		var sb strings.Builder
		for range r.IntN(40) {
			sb.WriteString(genLine(r))
			sb.WriteByte('\n')
		}
		if r.IntN(2) == 0 {
			sb.WriteString(genLine(r))
		}
		if r.IntN(100) == 0 { // a line over matchStream's 1 MiB buffer
			sb.WriteString(strings.Repeat("long payment line ", 70000) + "\n")
		}
		data := []byte(sb.String())
		c, err := Compile(Request{Pattern: genPattern(r), Context: r.IntN(3)})
		if err != nil {
			t.Fatal(err)
		}
		want := c.matchText("f", data)
		got := c.matchStream("f", bytes.NewReader(data))
		if len(want) != len(got) {
			t.Fatalf("pattern %q: stream %d matches, text %d", c.req.Pattern, len(got), len(want))
		}
		for i := range want {
			if fmt.Sprint(want[i]) != fmt.Sprint(got[i]) {
				t.Fatalf("pattern %q match %d:\nstream %v\ntext   %v", c.req.Pattern, i, got[i], want[i])
			}
		}
	}
}

// A write through one name of a hard-linked file changes every name's bytes:
// grep reads linked files directly, and re-reads the other names.
func TestHardLinksAreNeverStale(t *testing.T) {
	data, idx := t.TempDir(), t.TempDir()
	write(t, data, "a.txt", "old words\n")
	x := open(t, data, idx)
	defer x.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	x.Reconcile(x.Begin(), nil, walk(t, data))
	x.Settle(ctx)
	if err := os.Link(filepath.Join(data, "a.txt"), filepath.Join(data, "b.txt")); err != nil {
		t.Fatal(err)
	}
	x.Apply([]Change{{Op: Written, Path: "b.txt"}})
	x.Settle(ctx)
	write(t, data, "a.txt", "new needle\n") // same inode: os.WriteFile truncates
	x.Apply([]Change{{Op: Written, Path: "a.txt"}})
	if got := grepPaths(t, x, data, Request{Pattern: "needle"}); !slices.Equal(got, []string{"a.txt:1", "b.txt:1"}) {
		t.Fatalf("at once: %v", got)
	}
	x.Settle(ctx)
	if got := grepPaths(t, x, data, Request{Pattern: "needle"}); !slices.Equal(got, []string{"a.txt:1", "b.txt:1"}) {
		t.Fatalf("settled: %v", got)
	}
	if got := grepPaths(t, x, data, Request{Pattern: "old"}); len(got) != 0 {
		t.Fatalf("old bytes: %v", got)
	}
}

// Writes, renames, removals, greps, saves and the indexer at once (run with
// -race); after the writers stop, grep answers what the files hold.
func TestConcurrentChangesAndGreps(t *testing.T) {
	data, idx := t.TempDir(), t.TempDir()
	x := open(t, data, idx)
	defer x.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 300 {
			p := fmt.Sprintf("d%d/f%d.txt", i%3, i%17)
			write(t, data, p, fmt.Sprintf("round %d token%d\n", i, i%17))
			x.Apply([]Change{{Op: Written, Path: p}})
			if i%50 == 49 {
				os.Rename(filepath.Join(data, "d0"), filepath.Join(data, "e0"))
				x.Apply([]Change{{Op: Renamed, Path: "d0", NewPath: "e0", IsDir: true}})
				os.RemoveAll(filepath.Join(data, "e0"))
				x.Apply([]Change{{Op: Removed, Path: "e0"}})
			}
		}
	}()
	for range 50 {
		grepPaths(t, x, data, Request{Pattern: "token1[0-9]"})
		x.Save()
	}
	<-done
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	x.Settle(ctx)
	var want []string
	filepath.Walk(data, func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			b, _ := os.ReadFile(p)
			if regexp.MustCompile("token1[0-9]").Match(b) {
				rel, _ := filepath.Rel(data, p)
				want = append(want, rel+":1")
			}
		}
		return nil
	})
	slices.Sort(want)
	if got := grepPaths(t, x, data, Request{Pattern: "token1[0-9]"}); !slices.Equal(got, want) {
		t.Fatalf("got %v want %v", got, want)
	}
	if st := x.Stats(); st.Pending != 0 {
		t.Fatalf("pending %d after settling", st.Pending)
	}
}

// Found by the GNU grep oracle: a case-folded literal too long to expand
// whole (Д folds with д and U+1C81), repeated. A sequence cut while analysed
// must not claim its tail as the whole match's strings.
func TestAnalyzeLongFoldedLiteralRepeated(t *testing.T) {
	ix := newIndexer(1 << 20)
	for _, tc := range []struct{ pat, line string }{
		{"(?i)(ДАННЫЕ){2}", "данныеДАННЫЕ"},
		{"(?i)(ДАННЫЕ)+x", "ДАННЫЕданныеx"},
		{"(?i)ДАННЫЕ ДАННЫЕ", "данные ДАННЫЕ"},
		{"(?i)(abcdefgh){2}", "ABCDEFGHabcdefgh"},
	} {
		re := regexp.MustCompile(tc.pat)
		if !re.MatchString(tc.line) {
			t.Fatalf("%q does not match %q", tc.pat, tc.line)
		}
		q := Analyze(mustParse(t, tc.pat))
		tris := map[uint32]bool{}
		for _, tr := range ix.trigrams([]byte(tc.line)) {
			tris[tr] = true
		}
		if !holds(q, tris) {
			t.Errorf("%q matches %q but its query %s does not hold", tc.pat, tc.line, q)
		}
	}
}

// With Counts, every file searched gets its count of matching lines, as GNU
// grep -c prints them (0 included; a binary file's lines, a NUL ending a line
// too), whatever the limit cuts from the matches.
func TestGrepCountsPastTheLimit(t *testing.T) {
	data, idx := t.TempDir(), t.TempDir()
	write(t, data, "a.txt", strings.Repeat("payment\n", 5))
	write(t, data, "b.txt", "nothing here\n")
	write(t, data, "d/c.txt", "payment once\n")
	write(t, data, "empty", "")
	write(t, data, "bin", "payment\x00payment\nno\npayment")
	write(t, data, "latin1", "payment caf\xe9\npayment\n")
	x, ctx := reconciled(t, data, idx)
	env := Env{Open: Dir(data).Open}
	for _, tc := range []struct {
		req  Request
		want string
	}{
		{Request{Pattern: "payment", Limit: 3, Counts: true}, "[{a.txt 5} {b.txt 0} {d/c.txt 1} {empty 0}]"},
		{Request{Pattern: "payment", Limit: 3, Counts: true, All: true}, "[{a.txt 5} {b.txt 0} {bin 3} {d/c.txt 1} {empty 0} {latin1 2}]"},
		{Request{Pattern: "payment", Counts: true, Paths: []string{"d"}}, "[{d/c.txt 1}]"},
		{Request{Pattern: "absent", Counts: true}, "[{a.txt 0} {b.txt 0} {d/c.txt 0} {empty 0}]"},
	} {
		c, err := Compile(tc.req)
		if err != nil {
			t.Fatal(err)
		}
		ans, err := x.Grep(ctx, c, env)
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(ans.Counts); got != tc.want {
			t.Errorf("%+v: counts %s, want %s", tc.req, got, tc.want)
		}
		if tc.req.Limit == 3 && (len(ans.Matches) != 3 || !ans.Truncated || ans.Files != 1) {
			t.Errorf("%+v: %d matches in %d files, truncated %v; want the limit's 3 in 1, truncated", tc.req, len(ans.Matches), ans.Files, ans.Truncated)
		}
	}
}
