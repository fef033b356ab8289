package feed

import (
	"encoding/json"
	"strconv"
	"time"
)

// appendJSON appends e as one line of JSON, byte for byte what
// encoding/json's Encoder writes for it (the log's format, which load reads
// back with encoding/json): written by hand because reflection and
// time.Time's MarshalJSON (which re-validates its own output) were a third
// of the log's CPU on a create burst (BenchmarkRecordCreates). A string
// that is not plain printable ASCII, and a time encoding/json would refuse,
// go through encoding/json itself.
func appendJSON(b []byte, e *Event) []byte {
	if y := e.At.Year(); y < 0 || y > 9999 {
		j, _ := json.Marshal(e)
		return append(append(b, j...), '\n')
	}
	b = append(b, `{"rev":`...)
	b = strconv.AppendUint(b, e.Rev, 10)
	b = append(b, `,"op":`...)
	b = appendString(b, e.Op)
	b = append(b, `,"path":`...)
	b = appendString(b, e.Path)
	if e.From != "" {
		b = append(b, `,"from":`...)
		b = appendString(b, e.From)
	}
	b = append(b, `,"type":`...)
	b = appendString(b, e.Type)
	b = append(b, `,"app":`...)
	b = appendString(b, e.App)
	b = append(b, `,"size":`...)
	b = strconv.AppendInt(b, e.Size, 10)
	b = append(b, `,"at":"`...)
	b = e.At.AppendFormat(b, time.RFC3339Nano)
	return append(b, "\"}\n"...)
}

// appendString appends s as encoding/json quotes it (HTML-safe escaping
// included): the common case, printable ASCII with nothing to escape, by
// copy; anything else by encoding/json.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			j, _ := json.Marshal(s)
			return append(b, j...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
