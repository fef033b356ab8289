package docs_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// pending are pages a branch may link before they exist (none now): once a
// page exists its links and headings are checked like any other.
var pending = map[string]bool{}

// link matches an inline Markdown link or image: [text](target) or
// [text](target "title").
var link = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)

// TestRelativeLinksResolve checks README.md, BENCHMARKS.md and docs/*.md.
func TestRelativeLinksResolve(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	pages := []string{"README.md", "BENCHMARKS.md"}
	more, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range more {
		rel, _ := filepath.Rel(root, m)
		pages = append(pages, filepath.ToSlash(rel))
	}
	checked := 0
	for _, page := range pages {
		text, err := os.ReadFile(filepath.Join(root, page))
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range prose(string(text)) {
			for _, m := range link.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				checked++
				if msg := check(root, page, target); msg != "" {
					t.Errorf("%s:%d: link %q: %s", page, i+1, target, msg)
				}
			}
		}
	}
	if checked < 50 {
		t.Errorf("only %d relative links found: is the link pattern still right?", checked)
	}
}

// check returns why target, linked from page, does not resolve, or "".
func check(root, page, target string) string {
	file, frag, _ := strings.Cut(target, "#")
	dest := page
	if file != "" {
		dest = filepath.ToSlash(filepath.Clean(filepath.Join(filepath.Dir(page), file)))
		if strings.HasPrefix(dest, "../") {
			return "points outside the repository"
		}
		if _, err := os.Stat(filepath.Join(root, dest)); err != nil {
			if pending[dest] {
				return ""
			}
			return "no such file: " + dest
		}
	}
	if frag == "" || !strings.HasSuffix(dest, ".md") {
		return ""
	}
	text, err := os.ReadFile(filepath.Join(root, dest))
	if err != nil {
		return err.Error()
	}
	if !anchors(string(text))[frag] {
		return "no heading with anchor #" + frag + " in " + dest
	}
	return ""
}

// prose returns the lines of a Markdown text with those inside fenced or
// indented code blocks blanked, keeping line numbers.
func prose(text string) []string {
	lines := strings.Split(text, "\n")
	fenced := false
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fenced = !fenced
			lines[i] = ""
			continue
		}
		if fenced || strings.HasPrefix(l, "    ") || strings.HasPrefix(l, "\t") {
			lines[i] = ""
		}
	}
	return lines
}

// anchors returns the anchors GitHub gives a page's headings: lower case,
// punctuation other than '-' and '_' dropped, spaces made '-', and "-N" added
// to the Nth repeat of an anchor.
func anchors(text string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	for _, l := range prose(text) {
		if !strings.HasPrefix(l, "#") {
			continue
		}
		h := strings.TrimSpace(strings.TrimLeft(l, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(h) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			out[a+"-"+strconv.Itoa(n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}
