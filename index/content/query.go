package content

import (
	"regexp/syntax"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// QueryOp is the kind of a Query node.
type QueryOp uint8

const (
	QAll  QueryOp = iota // every file may match: no trigram is required
	QNone                // no file can match
	QAnd                 // every trigram and every Sub
	QOr                  // some trigram or some Sub
)

// Query is a boolean query over trigrams that every file holding a match of a
// regular expression satisfies (a necessary condition, never a sufficient one).
type Query struct {
	Op       QueryOp
	Trigrams []uint32 // sorted, distinct
	Sub      []*Query
}

var (
	allQuery  = &Query{Op: QAll}
	noneQuery = &Query{Op: QNone}
)

// maxExact bounds the set of exact strings a node is tracked as; above it the
// set becomes a trigram query. maxRunes bounds the runes a class is expanded
// to; a bigger class (a-z with others, ".") is "any string" for the analysis.
const (
	maxExact = 64
	maxRunes = 24
)

// String is the query in a readable form, for tests and debugging.
func (q *Query) String() string {
	switch q.Op {
	case QAll:
		return "+"
	case QNone:
		return "-"
	}
	var parts []string
	for _, t := range q.Trigrams {
		parts = append(parts, quoteASCII([]byte{byte(t >> 16), byte(t >> 8), byte(t)}))
	}
	for _, s := range q.Sub {
		parts = append(parts, "("+s.String()+")")
	}
	sep := " "
	if q.Op == QOr {
		sep = "|"
	}
	return strings.Join(parts, sep)
}

func quoteASCII(b []byte) string {
	var sb strings.Builder
	sb.WriteByte('"')
	for _, c := range b {
		if c >= 0x20 && c < 0x7f && c != '"' && c != '\\' {
			sb.WriteByte(c)
		} else {
			sb.WriteString(`\x`)
			sb.WriteByte("0123456789abcdef"[c>>4])
			sb.WriteByte("0123456789abcdef"[c&15])
		}
	}
	sb.WriteByte('"')
	return sb.String()
}

func and(a, b *Query) *Query {
	switch {
	case a.Op == QNone || b.Op == QNone:
		return noneQuery
	case a.Op == QAll:
		return b
	case b.Op == QAll:
		return a
	}
	q := &Query{Op: QAnd}
	for _, x := range []*Query{a, b} {
		if x.Op == QAnd {
			q.Trigrams = append(q.Trigrams, x.Trigrams...)
			q.Sub = append(q.Sub, x.Sub...)
		} else {
			q.Sub = append(q.Sub, x)
		}
	}
	slices.Sort(q.Trigrams)
	q.Trigrams = slices.Compact(q.Trigrams)
	return q
}

func or(a, b *Query) *Query {
	switch {
	case a.Op == QAll || b.Op == QAll:
		return allQuery
	case a.Op == QNone:
		return b
	case b.Op == QNone:
		return a
	}
	q := &Query{Op: QOr}
	for _, x := range []*Query{a, b} {
		if x.Op == QOr {
			q.Trigrams = append(q.Trigrams, x.Trigrams...)
			q.Sub = append(q.Sub, x.Sub...)
		} else if x.Op == QAnd && len(x.Sub) == 0 && len(x.Trigrams) == 1 {
			q.Trigrams = append(q.Trigrams, x.Trigrams...)
		} else {
			q.Sub = append(q.Sub, x)
		}
	}
	slices.Sort(q.Trigrams)
	q.Trigrams = slices.Compact(q.Trigrams)
	return q
}

// stringQuery is the query "the text holds every trigram of s"; All for a
// string shorter than three bytes.
func stringQuery(s string) *Query {
	if len(s) < 3 {
		return allQuery
	}
	q := &Query{Op: QAnd}
	for i := 0; i+3 <= len(s); i++ {
		q.Trigrams = append(q.Trigrams, uint32(s[i])<<16|uint32(s[i+1])<<8|uint32(s[i+2]))
	}
	slices.Sort(q.Trigrams)
	q.Trigrams = slices.Compact(q.Trigrams)
	return q
}

// setQuery is "the text holds one of the strings of set" (an empty set: no
// string at all can match).
func setQuery(set []string) *Query {
	q := noneQuery
	for _, s := range set {
		q = or(q, stringQuery(s))
		if q.Op == QAll {
			return q
		}
	}
	return q
}

// info is what the analysis knows of one regexp node: every match of it is one
// of exact (when exact is not nil), and every text holding a match satisfies
// match.
type info struct {
	exact []string // nil: unknown (too many, or unbounded)
	match *Query
}

func anyInfo() info { return info{match: allQuery} }

func exactInfo(set ...string) info { return info{exact: set, match: allQuery} }

// Analyze returns the trigram query every text holding a match of re
// satisfies. re must be parsed with syntax.Perl (as regexp.Compile does);
// matching runs line by line, so the text is a line.
func Analyze(re *syntax.Regexp) *Query {
	in := analyze(re.Simplify())
	return in.query()
}

// query is in's necessary condition as one query.
func (in info) query() *Query {
	if in.exact == nil {
		return in.match
	}
	return and(in.match, setQuery(in.exact))
}

func analyze(re *syntax.Regexp) info {
	switch re.Op {
	case syntax.OpNoMatch:
		return info{exact: []string{}, match: noneQuery}
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText,
		syntax.OpEndText, syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return exactInfo("")
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase != 0 {
			set := []string{""}
			for _, r := range re.Rune {
				set = cross(set, foldRunes(r))
				if set == nil {
					return literalByRunes(re)
				}
			}
			return exactInfo(set...)
		}
		return exactInfo(string(re.Rune))
	case syntax.OpCharClass:
		runes := classRunes(re.Rune)
		if runes == nil {
			return anyInfo()
		}
		set := make([]string, len(runes))
		for i, r := range runes {
			set[i] = string(r)
		}
		return exactInfo(set...)
	case syntax.OpAnyCharNotNL, syntax.OpAnyChar:
		return anyInfo()
	case syntax.OpCapture:
		return analyze(re.Sub[0])
	case syntax.OpStar:
		return anyInfo()
	case syntax.OpQuest:
		in := analyze(re.Sub[0])
		if in.exact != nil && len(in.exact)+1 <= maxExact {
			return info{exact: append(slices.Clone(in.exact), ""), match: allQuery}
		}
		return anyInfo()
	case syntax.OpPlus:
		in := analyze(re.Sub[0])
		return info{match: in.query()}
	case syntax.OpRepeat:
		if re.Min == 0 {
			return anyInfo()
		}
		in := analyze(re.Sub[0])
		return info{match: in.query()}
	case syntax.OpConcat:
		return concat(re.Sub)
	case syntax.OpAlternate:
		var set []string
		exact := true
		q := noneQuery
		subs := make([]info, len(re.Sub))
		for i, s := range re.Sub {
			subs[i] = analyze(s)
			if subs[i].exact == nil || len(set)+len(subs[i].exact) > maxExact || subs[i].match.Op != QAll {
				exact = false
			} else {
				set = append(set, subs[i].exact...)
			}
		}
		if exact {
			slices.Sort(set)
			return exactInfo(slices.Compact(set)...)
		}
		for _, s := range subs {
			q = or(q, s.query())
		}
		return info{match: q}
	}
	return anyInfo()
}

// concat analyses a sequence: exact strings are crossed while the set stays
// small; when it would not, what is known so far becomes part of the match
// query and the analysis starts afresh (losing only the trigrams that span the
// cut, which keeps the query necessary). The sequence is exact only when no
// cut was made and every element was exact: after a cut, the strings known
// are the tail's only, never the whole match's.
func concat(subs []*syntax.Regexp) info {
	match := allQuery
	cur := []string{""}
	whole := true
	for _, s := range subs {
		in := analyze(s)
		match = and(match, in.match)
		if in.exact == nil {
			if cur != nil {
				match = and(match, setQuery(cur))
			}
			cur, whole = nil, false
			continue
		}
		if cur == nil {
			cur = slices.Clone(in.exact)
			continue
		}
		next := cross(cur, in.exact)
		if next == nil {
			match = and(match, setQuery(cur))
			cur, whole = slices.Clone(in.exact), false
			continue
		}
		cur = next
	}
	if !whole {
		if cur != nil {
			match = and(match, setQuery(cur))
		}
		return info{match: match}
	}
	return info{exact: cur, match: match}
}

// cross is every a+b, or nil when that is more than maxExact strings.
func cross(as, bs []string) []string {
	if len(as)*len(bs) > maxExact {
		return nil
	}
	out := make([]string, 0, len(as)*len(bs))
	for _, a := range as {
		for _, b := range bs {
			out = append(out, a+b)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// literalByRunes is a case-folded literal too long to expand whole: each rune
// is a small class of its own.
func literalByRunes(re *syntax.Regexp) info {
	subs := make([]*syntax.Regexp, len(re.Rune))
	for i, r := range re.Rune {
		subs[i] = &syntax.Regexp{Op: syntax.OpLiteral, Rune: []rune{r}, Flags: re.Flags}
	}
	return concat(subs)
}

// foldRunes is r and every rune Go's case folding equates with it, as strings.
func foldRunes(r rune) []string {
	out := []string{string(r)}
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		out = append(out, string(f))
	}
	return out
}

// classRunes lists the runes of a class given as ranges, or nil when there are
// more than maxRunes (or an invalid rune, which regexp matches as U+FFFD).
func classRunes(ranges []rune) []rune {
	var out []rune
	for i := 0; i+1 < len(ranges); i += 2 {
		lo, hi := ranges[i], ranges[i+1]
		if hi-lo+1 > maxRunes || len(out)+int(hi-lo+1) > maxRunes {
			return nil
		}
		for r := lo; r <= hi; r++ {
			if !utf8.ValidRune(r) {
				return nil
			}
			out = append(out, r)
		}
	}
	return out
}
