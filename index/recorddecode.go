package index

import (
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// parseStored reads a record in exactly the layout appendStored writes (its
// fields in order, strings without escapes, integers without leading zeros),
// without encoding/json's reflection: the start-up reconcile decodes every
// record, and json.Unmarshal was most of the tag index's part of a restart
// over a current index (0.34 of 0.56 s for 61,823 records). ok is false for
// anything else (an escape, another order, an unknown field, damage); the
// caller then decodes with encoding/json, which says what such a record is.
// Times go through time.Time's own UnmarshalJSON, as encoding/json's do.
func parseStored(v string) (s *stored, ok bool) {
	p := recParser{v: v, ok: true}
	s = new(stored)
	p.lit(`{"createdBy":`)
	s.CreatedBy = p.str()
	p.lit(`,"task":`)
	s.Task = p.str()
	p.lit(`,"relatedApps":`)
	switch {
	case p.has("null"):
		p.lit("null")
	case p.has("[]"):
		p.lit("[]")
		s.RelatedApps = []string{}
	default:
		p.lit("[")
		s.RelatedApps = []string{}
		for p.ok {
			s.RelatedApps = append(s.RelatedApps, p.str())
			if !p.has(",") {
				break
			}
			p.lit(",")
		}
		p.lit("]")
	}
	p.lit(`,"createdAt":`)
	s.CreatedAt = p.time()
	p.lit(`,"updatedAt":`)
	s.UpdatedAt = p.time()
	p.lit(`,"ino":`)
	s.Ino = p.uint(64)
	if p.has(`,"mode":`) {
		p.lit(`,"mode":`)
		s.Mode = uint32(p.uint(32))
	}
	if p.has(`,"seen":`) {
		p.lit(`,"seen":{"size":`)
		s.Seen = new(seen)
		s.Seen.Size = p.int()
		p.lit(`,"mtime":`)
		s.Seen.ModTime = p.time()
		p.lit("}")
	}
	p.lit("}")
	if !p.ok || p.i != len(v) {
		return nil, false
	}
	return s, true
}

// recParser is parseStored's cursor; ok turns false at the first byte that is
// not the layout's.
type recParser struct {
	v  string
	i  int
	ok bool
}

func (p *recParser) has(lit string) bool {
	return p.ok && strings.HasPrefix(p.v[p.i:], lit)
}

func (p *recParser) lit(lit string) {
	if !p.has(lit) {
		p.ok = false
		return
	}
	p.i += len(lit)
}

// str reads a string with no escape, no control byte and valid UTF-8: one that
// encoding/json reads as its bytes between the quotes.
func (p *recParser) str() string {
	if !p.has(`"`) {
		p.ok = false
		return ""
	}
	start := p.i + 1
	end := strings.IndexByte(p.v[start:], '"')
	if end < 0 {
		p.ok = false
		return ""
	}
	s := p.v[start : start+end]
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '\\' {
			p.ok = false
			return ""
		}
	}
	if !utf8.ValidString(s) {
		p.ok = false
		return ""
	}
	p.i = start + end + 1
	return s
}

// digits is the run of ASCII digits at the cursor: at least one, and no
// leading zero unless it is the only digit (JSON's rule).
func (p *recParser) digits() string {
	if !p.ok {
		return ""
	}
	j := p.i
	for j < len(p.v) && p.v[j] >= '0' && p.v[j] <= '9' {
		j++
	}
	d := p.v[p.i:j]
	if d == "" || len(d) > 1 && d[0] == '0' || j < len(p.v) && (p.v[j] == '.' || p.v[j] == 'e' || p.v[j] == 'E') {
		p.ok = false
		return ""
	}
	p.i = j
	return d
}

func (p *recParser) uint(bits int) uint64 {
	n, err := strconv.ParseUint(p.digits(), 10, bits)
	if err != nil {
		p.ok = false
	}
	return n
}

func (p *recParser) int() int64 {
	neg := p.has("-")
	if neg {
		p.i++
	}
	d := p.digits()
	if neg {
		d = "-" + d
	}
	n, err := strconv.ParseInt(d, 10, 64)
	if err != nil {
		p.ok = false
	}
	return n
}

func (p *recParser) time() time.Time {
	var t time.Time
	if !p.has(`"`) {
		p.ok = false
		return t
	}
	end := strings.IndexByte(p.v[p.i+1:], '"')
	if end < 0 {
		p.ok = false
		return t
	}
	q := p.v[p.i : p.i+1+end+1]
	if strings.IndexByte(q[1:len(q)-1], '\\') >= 0 || t.UnmarshalJSON([]byte(q)) != nil {
		p.ok = false
		return t
	}
	p.i += len(q)
	return t
}
