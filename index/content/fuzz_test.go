package content

import (
	"regexp"
	"testing"
	"unicode/utf8"
)

// FuzzGrep: any request either is refused by Compile or compiles; and every
// line its regexp matches satisfies its trigram query (a miss would drop a
// file from grep's answers). No input panics.
func FuzzGrep(f *testing.F) {
	for _, s := range []string{"timeout", "colou?r", "(?i)café|Ñandú", "a.*b", "^x[0-9]+$", `\Afoo\z`, "[^a-z]{2,3}", "a\nb"} {
		f.Add(s, "the colour of café timeout x42", false, false)
	}
	f.Fuzz(func(t *testing.T, pattern, line string, fixed, icase bool) {
		c, err := Compile(Request{Pattern: pattern, Fixed: fixed, IgnoreCase: icase})
		if err != nil {
			return
		}
		if len(line) > 4096 || !utf8.ValidString(line) {
			// Only valid UTF-8 is indexed; Go matches an encoding error as
			// U+FFFD, whose bytes such a line does not hold.
			return
		}
		ms := c.matchText("f", []byte(line))
		one := regexp.MustCompile(c.re.String())
		for _, m := range ms {
			if !one.MatchString(m.Text) {
				t.Fatalf("matchText answered a line the regexp does not match: %q", m.Text)
			}
		}
		ix := newIndexer(1 << 20)
		tris := map[uint32]bool{}
		for _, tr := range ix.trigrams([]byte(line)) {
			tris[tr] = true
		}
		if len(ms) > 0 {
			if !holds(c.query, tris) {
				t.Fatalf("pattern %q matches %q but its query %s does not hold", pattern, line, c.query)
			}
		}
	})
}
