package policy

import (
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// pattern is one compiled glob. The shapes that policies are made of are
// answered without the matcher: "**" (everything), "dir/**" (a directory and
// everything below it: a prefix test) and a literal path.
type pattern struct {
	src    string // as written in the file
	kind   patKind
	prefix string // patAll: unused; patUnder: "dir"; patLiteral: the path
	glob   string // patGlob: what doublestar matches
}

type patKind uint8

const (
	patAll     patKind = iota // "**"
	patUnder                  // "dir/**" or "dir/": dir and everything below
	patLiteral                // no meta characters
	patGlob                   // anything else
)

// compilePattern compiles a pattern the parser has validated.
func compilePattern(src string) pattern {
	g := src
	if strings.HasSuffix(g, "/") {
		g += "**" // "dir/" is the directory and all below it
	}
	p := pattern{src: src, kind: patGlob, glob: g}
	switch {
	case g == "**":
		p.kind = patAll
	case strings.HasSuffix(g, "/**") && !hasMeta(g[:len(g)-3]):
		p.kind, p.prefix = patUnder, g[:len(g)-3]
	case !hasMeta(g):
		p.kind, p.prefix = patLiteral, g
	}
	return p
}

func hasMeta(s string) bool { return strings.ContainsAny(s, `*?[]{}\`) }

// match says whether path (clean, relative, no trailing slash) matches.
func (p *pattern) match(path string) bool {
	switch p.kind {
	case patAll:
		return true
	case patUnder:
		return path == p.prefix || len(path) > len(p.prefix) && path[len(p.prefix)] == '/' && strings.HasPrefix(path, p.prefix)
	case patLiteral:
		return path == p.prefix
	}
	ok, _ := doublestar.Match(p.glob, path) // validated at parse: no error
	return ok
}

// checkPattern says what is wrong with a pattern ("" = nothing).
func checkPattern(s string) string {
	switch {
	case s == "":
		return "an empty pattern matches nothing; leave it out"
	case strings.HasPrefix(s, "/"):
		return "patterns are relative to the backing directory: drop the leading '/'"
	case strings.ContainsRune(s, 0):
		return "a pattern may not hold NUL"
	}
	for _, seg := range strings.Split(strings.TrimSuffix(s, "/"), "/") {
		switch seg {
		case "":
			return "a pattern may not hold an empty segment ('//')"
		case ".", "..":
			return "a pattern may not hold '.' or '..' segments: paths are matched after resolution"
		}
	}
	g := s
	if strings.HasSuffix(g, "/") {
		g += "**"
	}
	if !doublestar.ValidatePattern(g) {
		return "not a valid glob (an unclosed '[' or '{', or a trailing '\\')"
	}
	return ""
}
