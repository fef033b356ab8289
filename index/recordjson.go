package index

import (
	"encoding/json"
	"strconv"
	"time"
	"unicode/utf8"
)

// appendStored appends s as json.Marshal encodes it, byte for byte
// (TestStoredEncodingMatchesJSON): every create, touch and tag writes a record,
// and encoding/json's reflection was 3 % of the daemon's CPU per NFS create.
// ok is false for what only encoding/json can say (a time outside years
// 0-9999, which it refuses); the caller then uses it.
func appendStored(b []byte, s *stored) (_ []byte, ok bool) {
	b = append(b, `{"createdBy":`...)
	b = appendJSONString(b, s.CreatedBy)
	b = append(b, `,"task":`...)
	b = appendJSONString(b, s.Task)
	b = append(b, `,"relatedApps":`...)
	if s.RelatedApps == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, a := range s.RelatedApps {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, a)
		}
		b = append(b, ']')
	}
	b = append(b, `,"createdAt":`...)
	if b, ok = appendJSONTime(b, s.CreatedAt); !ok {
		return b, false
	}
	b = append(b, `,"updatedAt":`...)
	if b, ok = appendJSONTime(b, s.UpdatedAt); !ok {
		return b, false
	}
	b = append(b, `,"ino":`...)
	b = strconv.AppendUint(b, s.Ino, 10)
	if s.Mode != 0 {
		b = append(b, `,"mode":`...)
		b = strconv.AppendUint(b, uint64(s.Mode), 10)
	}
	if s.Seen != nil {
		b = append(b, `,"seen":{"size":`...)
		b = strconv.AppendInt(b, s.Seen.Size, 10)
		b = append(b, `,"mtime":`...)
		if b, ok = appendJSONTime(b, s.Seen.ModTime); !ok {
			return b, false
		}
		b = append(b, '}')
	}
	return append(b, '}'), true
}

// appendJSONTime is time.Time's MarshalJSON (RFC 3339 with nanoseconds),
// which refuses years outside 0-9999 and offsets with seconds.
func appendJSONTime(b []byte, t time.Time) ([]byte, bool) {
	if y := t.Year(); y < 0 || y > 9999 {
		return b, false
	}
	if _, off := t.Zone(); off%60 != 0 {
		return b, false
	}
	b = append(b, '"')
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b, '"'), true
}

const jsonHex = "0123456789abcdef"

// appendJSONString is encoding/json's string encoding with its default HTML
// escaping: <, > and & as \u003c, \u003e, \u0026; the short escapes of
// quote, backslash, \b, \f, \n, \r, \t; other control bytes as \u00XX;
// invalid UTF-8 as \ufffd; U+2028 and U+2029 escaped.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', jsonHex[c>>4], jsonHex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', jsonHex[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// marshalStored is json.Marshal of s (the fallback of appendStored).
func marshalStored(s *stored) string {
	b, err := json.Marshal(s)
	if err != nil {
		// Only unsupported types fail to marshal; stored has none.
		panic("index: marshal record: " + err.Error())
	}
	return string(b)
}
