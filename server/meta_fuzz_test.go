package server

import (
	"reflect"
	"testing"
	"time"
)

// FuzzDecodeMeta: a durable record is read from a file any host process may
// have written; decoding must never panic, and whatever decodes re-encodes to
// the same record.
func FuzzDecodeMeta(f *testing.F) {
	f.Add(Meta{CreatedBy: "notes", CreatedAt: time.Unix(1, 2), Task: "t", RelatedApps: []string{"a"},
		Vector: &MetaVector{Model: "m", Values: []float32{1, 2}}}.encode())
	f.Add([]byte(`{"v":1}`))
	f.Add([]byte(`{"v":2,"by":"x"}`))
	f.Add([]byte(`{"v":1,"vm":"m","vv":"AAA"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := decodeMeta(b)
		if err != nil {
			return
		}
		again, err := decodeMeta(m.encode())
		if err != nil {
			t.Fatalf("re-decoding %+v: %v", m, err)
		}
		if !reflect.DeepEqual(normal(again), normal(m)) {
			t.Fatalf("round trip changed the record:\n%+v\n%+v", m, again)
		}
	})
}

// normal drops what encoding does not distinguish (nil and empty lists).
func normal(m Meta) Meta {
	if len(m.RelatedApps) == 0 {
		m.RelatedApps = nil
	}
	if m.Vector != nil && len(m.Vector.Values) == 0 {
		m.Vector.Values = nil
	}
	return m
}
