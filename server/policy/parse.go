package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// entry is one object of the file ("default" or an app's): a field left out
// is nil.
type entry struct {
	fields [nFields]*list
}

type list struct{ pats []string }

type file struct {
	def  entry
	apps map[string]entry
}

// parser walks the file token by token rather than unmarshalling it, so that
// every refusal (an unknown field, a bad glob, a repeated key) can name the
// line and column where it is; json.Unmarshal reports offsets only for
// syntax and type errors.
type parser struct {
	b   []byte
	dec *json.Decoder
}

// parseFile checks the whole file; the error is "LINE:COL: what".
func parseFile(b []byte) (file, error) {
	ps := &parser{b: b, dec: json.NewDecoder(bytes.NewReader(b))}
	f := file{apps: map[string]entry{}}
	err := ps.object("the file", func(key string, at int64) error {
		switch key {
		case "default":
			e, err := ps.entry("default")
			f.def = e
			return err
		case "apps":
			return ps.object("apps", func(app string, at int64) error {
				if msg := checkApp(app); msg != "" {
					return ps.errAt(at, "app %q: %s", app, msg)
				}
				e, err := ps.entry("apps." + quoteApp(app))
				f.apps[app] = e
				return err
			})
		}
		return ps.errAt(at, "unknown field %q (want \"default\" or \"apps\")", key)
	})
	if err != nil {
		return file{}, err
	}
	if at := ps.next(); at < int64(len(b)) {
		return file{}, ps.errAt(at, "data after the policy object")
	}
	return f, nil
}

// entry parses one app's (or default's) rules.
func (ps *parser) entry(where string) (entry, error) {
	var e entry
	err := ps.object(where, func(key string, at int64) error {
		for fl := Field(0); fl < nFields; fl++ {
			if key == fl.String() {
				l, err := ps.list(where+"."+key, fl)
				e.fields[fl] = l
				return err
			}
		}
		return ps.errAt(at, "%s: unknown field %q (want \"read\", \"write\", \"tag\" or \"hide\")", where, key)
	})
	return e, err
}

// list parses a field's array of patterns.
func (ps *parser) list(where string, fl Field) (*list, error) {
	at := ps.next()
	if err := ps.delim('[', where, "a list of patterns"); err != nil {
		return nil, err
	}
	l := &list{pats: []string{}}
	for {
		at = ps.next()
		tok, err := ps.token()
		if err != nil {
			return nil, err
		}
		if tok == json.Delim(']') {
			return l, nil
		}
		s, ok := tok.(string)
		if !ok {
			return nil, ps.errAt(at, "%s: want a pattern (a string), found %s", where, describe(tok))
		}
		if s == Own {
			if fl != Write && fl != Tag {
				return nil, ps.errAt(at, "%s: %q means the app's own files and is allowed in write and tag only", where, Own)
			}
		} else if msg := checkPattern(s); msg != "" {
			return nil, ps.errAt(at, "%s: pattern %q: %s", where, s, msg)
		}
		l.pats = append(l.pats, s)
	}
}

// object parses {"key": value, ...}, calling fn for each key with the
// decoder positioned at its value (which fn must consume); a key may appear
// once.
func (ps *parser) object(where string, fn func(key string, at int64) error) error {
	if err := ps.delim('{', where, "an object"); err != nil {
		return err
	}
	seen := map[string]bool{}
	for {
		at := ps.next()
		tok, err := ps.token()
		if err != nil {
			return err
		}
		if tok == json.Delim('}') {
			return nil
		}
		key, ok := tok.(string)
		if !ok {
			return ps.errAt(at, "%s: want a key, found %s", where, describe(tok))
		}
		if seen[key] {
			return ps.errAt(at, "%s: %q is given twice", where, key)
		}
		seen[key] = true
		if err := fn(key, at); err != nil {
			return err
		}
	}
}

// delim reads the next token and wants d.
func (ps *parser) delim(d json.Delim, where, want string) error {
	at := ps.next()
	tok, err := ps.token()
	if err != nil {
		return err
	}
	if tok != d {
		return ps.errAt(at, "%s: want %s, found %s", where, want, describe(tok))
	}
	return nil
}

// token is Token with its errors placed: a syntax error at its offset, the
// end of the input where it ends too soon.
func (ps *parser) token() (json.Token, error) {
	tok, err := ps.dec.Token()
	if err == nil {
		return tok, nil
	}
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		// A Decoder's offsets are sometimes relative to the value it was
		// reading; Unmarshal of the whole file finds the same first error
		// with an absolute offset (the bytes read, the wrong one included).
		var v any
		if err := json.Unmarshal(ps.b, &v); errors.As(err, &se) && se.Offset > 0 {
			return nil, ps.errAt(se.Offset-1, "%s", se.Error())
		}
		return nil, ps.errAt(ps.next(), "%s", err.Error())
	case err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF):
		return nil, ps.errAt(int64(len(ps.b)), "the file ends too soon (an unclosed '{' or '[')")
	}
	return nil, ps.errAt(ps.next(), "%s", err.Error())
}

// next is the offset where the next token starts.
func (ps *parser) next() int64 {
	off := ps.dec.InputOffset()
	for off < int64(len(ps.b)) {
		switch ps.b[off] {
		case ' ', '\t', '\r', '\n', ',', ':':
			off++
			continue
		}
		break
	}
	return off
}

// errAt is an error at byte offset off, as "LINE:COL: msg" (both from 1;
// columns count bytes).
func (ps *parser) errAt(off int64, format string, args ...any) error {
	line, col := LineCol(ps.b, off)
	return fmt.Errorf("%d:%d: %s", line, col, fmt.Sprintf(format, args...))
}

// LineCol turns a byte offset of b into a line and column, both from 1.
func LineCol(b []byte, off int64) (line, col int) {
	if off > int64(len(b)) {
		off = int64(len(b))
	}
	line, col = 1, 1
	for _, c := range b[:off] {
		if c == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return line, col
}

func describe(tok json.Token) string {
	switch v := tok.(type) {
	case json.Delim:
		return fmt.Sprintf("'%s'", v)
	case string:
		return fmt.Sprintf("the string %q", v)
	case nil:
		return "null"
	case bool:
		return fmt.Sprintf("%v", v)
	case float64:
		return "a number"
	}
	return fmt.Sprintf("%v", tok)
}

// checkApp is server.CheckApp's rule (1 to 64 characters from [A-Za-z0-9._-],
// not starting with '.', '_' or '-'), here because server imports this
// package; "" is the unattributed caller and is allowed.
func checkApp(app string) string {
	if app == "" {
		return ""
	}
	if len(app) > 64 {
		return "longer than 64 characters"
	}
	for i, c := range app {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			i > 0 && (c == '.' || c == '_' || c == '-')
		if !ok {
			return "only letters, digits, '.', '_' and '-' (not first) are allowed"
		}
	}
	return ""
}
