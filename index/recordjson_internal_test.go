package index

import (
	"encoding/json"
	"math/rand"
	"testing"
	"time"
)

// appendStored must write what json.Marshal writes, byte for byte: records.db
// holds both (records written before it existed), and decodeStored reads them.
func TestStoredEncodingMatchesJSON(t *testing.T) {
	strs := []string{"", "app", "a\"b\\c", "<script>&amp;</script>", "tab\there\nnl\rcr\bbs\fff",
		"\x00\x01\x1f\x7f", "é日本🙂", "\u2028\u2029", "bad \xff\xfe utf8 \xc3", "\xe2\x80", "d0/f1"}
	for c := 0; c < 128; c++ {
		strs = append(strs, string(rune(c))+"x")
	}
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 2000; i++ {
		b := make([]byte, rng.Intn(12))
		rng.Read(b)
		strs = append(strs, string(b))
	}
	base := time.Date(2026, 12, 1, 6, 30, 1, 123456789, time.UTC)
	times := []time.Time{{}, base, base.Round(time.Second), base.Add(500 * time.Millisecond).Round(time.Millisecond),
		base.In(time.FixedZone("x", 5*3600+30*60)), base.In(time.FixedZone("y", -7*3600)),
		base.In(time.FixedZone("secs", 3600+17)), time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC)}
	apps := [][]string{nil, {}, {"a"}, {"a", "<b>", "c\x00"}}
	n := 0
	for i, s := range strs {
		for j, tm := range times {
			st := stored{CreatedBy: s, Task: strs[(i+7)%len(strs)], RelatedApps: apps[(i+j)%len(apps)],
				CreatedAt: tm, UpdatedAt: times[(i+j)%len(times)], Ino: uint64(i * j * 7919), Mode: uint32(i*j) % 0o10000}
			if (i+j)%3 == 0 {
				st.Seen = &seen{Size: int64(i - j), ModTime: times[(i*3+j)%len(times)]}
			}
			want, err := json.Marshal(&st)
			got, ok := appendStored(nil, &st)
			if err != nil {
				if ok {
					t.Fatalf("%+v: json.Marshal refuses it (%v), appendStored wrote %s", st, err, got)
				}
				continue
			}
			if !ok {
				// Allowed (the caller falls back), but only for times JSON
				// also refuses or writes oddly; none of ours here but the
				// offset with seconds.
				if st.CreatedAt.Location().String() != "secs" && st.UpdatedAt.Location().String() != "secs" &&
					(st.Seen == nil || st.Seen.ModTime.Location().String() != "secs") {
					t.Fatalf("%+v: appendStored gave up on what json.Marshal writes as %s", st, want)
				}
				continue
			}
			if string(got) != string(want) {
				t.Fatalf("record %+v:\n got  %s\n want %s", st, got, want)
			}
			n++
		}
	}
	if n < len(strs)*len(times)/3 {
		t.Fatalf("only %d records compared", n)
	}
}

func BenchmarkStoredEncode(b *testing.B) {
	s := stored{CreatedBy: "bench", RelatedApps: []string{}, CreatedAt: time.Now().UTC(), UpdatedAt: time.Now().UTC(), Ino: 123456}
	b.Run("appendStored", func(b *testing.B) {
		for b.Loop() {
			_ = s.encode()
		}
	})
	b.Run("json.Marshal", func(b *testing.B) {
		for b.Loop() {
			_ = marshalStored(&s)
		}
	})
}

// keywordFields (the gjson read of Open's record table and of the start-up
// re-embed scan) must give the task and related apps decodeStored gives, for
// every string JSON can carry: the text hash they feed decides whether a
// vector is current.
func TestKeywordFieldsMatchDecodeStored(t *testing.T) {
	strs := []string{"", " ", "app", "a\"b\\c", "<script>&amp;</script>", "tab\there\nnl\rcr\bbs\fff",
		"\x00\x01\x1f\x7f", "é日本🙂", "\u2028\u2029", "bad \xff\xfe utf8 \xc3", "\xe2\x80", "d0/f1", "null", "[1,2]"}
	rng := rand.New(rand.NewSource(2))
	for i := 0; i < 500; i++ {
		b := make([]byte, rng.Intn(12))
		rng.Read(b)
		strs = append(strs, string(b))
	}
	apps := [][]string{nil, {}, {""}, {"a"}, {"a", "<b>", "c\x00"}}
	for i, s := range strs {
		st := stored{CreatedBy: "app", Task: s, RelatedApps: apps[i%len(apps)]}
		if i%len(apps) == 4 {
			st.RelatedApps = []string{s, strs[(i+3)%len(strs)]}
		}
		v := st.encode()
		want, err := decodeStored(v)
		if err != nil {
			t.Fatalf("%q: %v", v, err)
		}
		s, ok := keywordFields(v)
		if !ok {
			t.Fatalf("%q: keywordFields refused it", v)
		}
		task, got := s.Task, s.RelatedApps
		if task != want.Task || s.CreatedBy != want.CreatedBy || len(got) != len(want.RelatedApps) {
			t.Fatalf("%q: keywordFields = %q, %q, %q; decodeStored: %q, %q, %q", v, s.CreatedBy, task, got, want.CreatedBy, want.Task, want.RelatedApps)
		}
		for j := range got {
			if got[j] != want.RelatedApps[j] {
				t.Fatalf("%q: app %d is %q, decodeStored %q", v, j, got[j], want.RelatedApps[j])
			}
		}
	}
	if _, ok := keywordFields(`{"task": "cut`); ok {
		t.Fatal("keywordFields read a record that is not JSON")
	}
}
