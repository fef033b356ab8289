package feed

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"
	"time"
)

// appendJSON writes what encoding/json's Encoder writes (the oracle), on
// generated events: strings of plain ASCII, of bytes that need escaping
// (quotes, backslashes, control characters, <>&, U+2028, invalid UTF-8),
// times of every precision and zone, sizes of every sign.
func TestAppendJSONIsEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(28, 1))
	alphabet := []string{"a", "Z", "0", "/", ".", " ", "-", "\"", "\\", "\n", "\t", "\x00", "\x1f", "\x7f", "<", ">", "&", "é", "\u2028", "\u2029", "\xff", "\xc3", "😀", "\ufffd"}
	str := func() string {
		var s string
		for n := r.IntN(12); n > 0; n-- {
			if r.IntN(4) == 0 {
				s += alphabet[r.IntN(len(alphabet))]
			} else {
				s += alphabet[r.IntN(7)]
			}
		}
		return s
	}
	zones := []*time.Location{time.UTC, time.FixedZone("x", 5*3600+1800), time.FixedZone("y", -7*3600), time.Local}
	for i := 0; i < 20000; i++ {
		e := Event{Rev: r.Uint64() >> r.IntN(64), Op: str(), Path: str(), Type: str(), App: str(), Size: r.Int64() - r.Int64()}
		if r.IntN(2) == 0 {
			e.From = str()
		}
		switch r.IntN(4) {
		case 0:
		case 1:
			e.At = time.Unix(r.Int64N(1<<34), 0).In(zones[r.IntN(len(zones))])
		default:
			e.At = time.Unix(r.Int64N(1<<34), r.Int64N(1e9)).In(zones[r.IntN(len(zones))])
		}
		if i%1000 == 0 {
			e.At = time.Date(10000+r.IntN(5), 1, 1, 0, 0, 0, 0, time.UTC) // refused by encoding/json
		}
		var want bytes.Buffer
		json.NewEncoder(&want).Encode(&e)
		if got := appendJSON(nil, &e); !bytes.Equal(got, want.Bytes()) && want.Len() > 0 {
			t.Fatalf("%#v:\n got %s\nwant %s", e, got, want.Bytes())
		}
	}
}
