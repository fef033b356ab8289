package index

import (
	"encoding/json"
	"math/rand"
	"reflect"
	"strings"
	"testing"
	"time"
)

// parseStored must read every record exactly as encoding/json does, or give
// up (the caller then uses encoding/json): on generated records as
// appendStored writes them, on their mutations (cut, a byte changed, bytes
// inserted, fields reordered), and on records with escapes. And it must not
// give up on appendStored's escape-free output, or it would save nothing.
func TestParseStoredEqualsJSON(t *testing.T) {
	rng := rand.New(rand.NewSource(25))
	strs := []string{"", "app", "a\"b\\c", "<x>&", "tab\tnl\n", "é日本🙂", "\u2028", "bad \xff utf8", "d0/f1", "claude-code", "0", "null"}
	for i := 0; i < 300; i++ {
		b := make([]byte, rng.Intn(10))
		for j := range b {
			// Mostly bytes that need no escape; now and then one that does
			// (a quote, a backslash, a control byte, half of a UTF-8 é).
			const clean, escaped = "az09 -_/.{}[]:,", "\"\\\x01\xc3"
			if rng.Intn(20) == 0 {
				b[j] = escaped[rng.Intn(len(escaped))]
			} else {
				b[j] = clean[rng.Intn(len(clean))]
			}
		}
		strs = append(strs, string(b))
	}
	base := time.Date(2026, 12, 1, 6, 30, 1, 123456789, time.UTC)
	times := []time.Time{{}, base, base.Round(time.Second), base.In(time.FixedZone("x", 5*3600+30*60)),
		base.In(time.FixedZone("y", -7*3600)), time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC)}
	apps := [][]string{nil, {}, {"a"}, {"a", "b c", ""}}
	var fast, compared int
	check := func(v string) {
		t.Helper()
		got, ok := parseStored(v)
		var want stored
		err := json.Unmarshal([]byte(v), &want)
		if !ok {
			return
		}
		fast++
		if err != nil {
			t.Fatalf("parseStored read %q, which encoding/json refuses (%v)", v, err)
		}
		if !reflect.DeepEqual(*got, want) {
			t.Fatalf("%q:\n parseStored %+v\n json        %+v", v, *got, want)
		}
		compared++
	}
	for i := 0; i < 3000; i++ {
		st := stored{CreatedBy: strs[rng.Intn(len(strs))], Task: strs[rng.Intn(len(strs))], RelatedApps: apps[rng.Intn(len(apps))],
			CreatedAt: times[rng.Intn(len(times))], UpdatedAt: times[rng.Intn(len(times))], Ino: rng.Uint64() >> uint(rng.Intn(64))}
		if rng.Intn(2) == 0 {
			st.Mode = uint32(rng.Intn(0o10000))
		}
		if rng.Intn(2) == 0 {
			st.Seen = &seen{Size: rng.Int63() >> uint(rng.Intn(63)) * int64(1-2*rng.Intn(2)), ModTime: times[rng.Intn(len(times))]}
		}
		b, ok := appendStored(nil, &st)
		if !ok {
			continue
		}
		v := string(b)
		before := fast
		check(v)
		if fast == before && !strings.Contains(v, `\`) {
			t.Fatalf("parseStored gave up on appendStored's escape-free %q", v)
		}
		// Mutations: each either read as encoding/json reads it, or left to it.
		for k := 0; k < 8; k++ {
			m := []byte(v)
			switch pos := rng.Intn(len(m)); rng.Intn(5) {
			case 0:
				m = m[:pos]
			case 1:
				const bytes = "0123456789\"\\,:{}[]- nuletrfa"
				m[pos] = bytes[rng.Intn(len(bytes))]
			case 2:
				m = append(m[:pos], append([]byte(" "), m[pos:]...)...)
			case 3:
				m = append(m[:pos], append([]byte("0"), m[pos:]...)...)
			case 4:
				m = []byte(strings.Replace(v, `"task":`, `"Task":`, 1))
			}
			check(string(m))
		}
	}
	// Records in another field order, or with escapes, go to encoding/json.
	for _, v := range []string{
		`{"task":"t","createdBy":"c","relatedApps":null,"createdAt":"2026-12-01T06:30:01Z","updatedAt":"2026-12-01T06:30:01Z","ino":1}`,
		`{"createdBy":"a\u0041","task":"","relatedApps":[],"createdAt":"2026-12-01T06:30:01Z","updatedAt":"2026-12-01T06:30:01Z","ino":1}`,
		`{"createdBy":"","task":"","relatedApps":[],"createdAt":"2026-12-01T06:30:01Z","updatedAt":"2026-12-01T06:30:01Z","ino":01}`,
		`{"createdBy":"","task":"","relatedApps":[],"createdAt":"2026-12-01T06:30:01Z","updatedAt":"2026-12-01T06:30:01Z","ino":1e3}`,
	} {
		if _, ok := parseStored(v); ok {
			t.Fatalf("parseStored read %q", v)
		}
		check(v)
	}
	if compared < 2000 {
		t.Fatalf("only %d records read by parseStored", compared)
	}
}

// go test -run '^$' -bench DecodeStored ./index/
func BenchmarkDecodeStored(b *testing.B) {
	t0 := time.Date(2026, 12, 1, 6, 30, 1, 123456789, time.UTC)
	s := stored{RelatedApps: []string{}, CreatedAt: t0, UpdatedAt: t0, Ino: 123456789, Mode: 0o644, Seen: &seen{Size: 12345, ModTime: t0}}
	v := s.encode()
	b.Run("parseStored", func(b *testing.B) {
		for b.Loop() {
			if _, ok := parseStored(v); !ok {
				b.Fatal("not read")
			}
		}
	})
	b.Run("json.Unmarshal", func(b *testing.B) {
		for b.Loop() {
			var s stored
			if err := json.Unmarshal([]byte(v), &s); err != nil {
				b.Fatal(err)
			}
		}
	})
}
