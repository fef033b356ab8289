package passage

import (
	"bytes"
	"unicode"
	"unicode/utf8"
)

// Passage sizes, in words (runs of letters or digits): a passage is closed at
// the first boundary after passageWords, and cut at a line when it would go
// past maxWords without one.
const (
	passageWords = 120
	maxWords     = 250
)

// span is one passage of a file: lines [line, line+lines), bytes [start, end).
type span struct {
	line, lines int32
	start, end  int32
}

// split cuts text into passages along its boundaries (doc.go).
func split(text []byte) []span {
	var out []span
	cur := span{line: 1}
	words := 0
	line := int32(1)
	flush := func(end int32) {
		if cur.lines > 0 && end > cur.start {
			if !blank(text[cur.start:end]) {
				cur.end = end
				out = append(out, cur)
			}
		}
		cur = span{line: line, start: end}
		words = 0
	}
	for off := 0; off < len(text); {
		nl := bytes.IndexByte(text[off:], '\n')
		end := len(text)
		if nl >= 0 {
			end = off + nl + 1
		}
		l := text[off:end]
		switch {
		case blank(l):
			if words >= passageWords {
				flush(int32(off))
			}
		case boundary(l):
			if words >= passageWords/4 {
				flush(int32(off))
			}
		}
		if cur.lines == 0 && blank(l) {
			line++ // a passage starts at its first line with text
			off = end
			continue
		}
		n := countWords(l)
		if words+n > maxWords && words > 0 {
			flush(int32(off))
		}
		if cur.lines == 0 {
			cur.line, cur.start = line, int32(off)
		}
		cur.lines++
		words += n
		line++
		off = end
	}
	flush(int32(len(text)))
	return out
}

func blank(l []byte) bool { return len(bytes.TrimSpace(l)) == 0 }

// boundary reports whether line l starts a section: a Markdown heading, or a
// declaration at column 0 in the common languages' spellings.
func boundary(l []byte) bool {
	if len(l) == 0 {
		return false
	}
	if l[0] == '#' && (len(l) > 1 && (l[1] == '#' || l[1] == ' ')) {
		return true
	}
	for _, p := range declarations {
		if bytes.HasPrefix(l, p) {
			return true
		}
	}
	return false
}

var declarations = [][]byte{
	[]byte("func "), []byte("type "), []byte("def "), []byte("class "), []byte("fn "), []byte("pub fn "),
	[]byte("function "), []byte("export "), []byte("impl "), []byte("struct "), []byte("static "), []byte(".SH "),
}

// countWords counts l's runs of letters or digits.
func countWords(l []byte) int {
	n := 0
	in := false
	for i := 0; i < len(l); {
		var w bool
		if c := l[i]; c < utf8.RuneSelf {
			// ASCII without decoding or the Unicode tables: most text is.
			i++
			w = asciiKind(c) != 0
			for w && i < len(l) && asciiKind(l[i]) != 0 {
				i++ // the rest of the run at once: a file's bytes pass here
			}
		} else {
			r, size := utf8.DecodeRune(l[i:])
			i += size
			w = unicode.IsLetter(r) || unicode.IsDigit(r)
		}
		if w && !in {
			n++
		}
		in = w
	}
	return n
}
