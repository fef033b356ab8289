package index

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestMonthForms: monthForms is keyed by what the query analysis makes of
// each month's name (the Snowball stem), so every month but "may" (a modal
// verb more often than a month: its number only where mayIsMonth says so,
// TestMayIsMonth) gets its dated forms.
func TestMonthForms(t *testing.T) {
	x, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	a := x.bl.Mapping().AnalyzerNamed(queryAnalyzer)
	for i, m := range []string{"January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"} {
		toks := a.Analyze([]byte(m))
		if len(toks) != 1 {
			if m == "May" && len(toks) == 0 {
				continue // a stop word
			}
			t.Fatalf("%s analyses to %d terms", m, len(toks))
		}
		forms := monthForms(string(toks[0].Term))
		if m == "May" {
			if forms != nil {
				t.Errorf("may: %v", forms)
			}
			continue
		}
		if len(forms) < 2 || forms[len(forms)-1] != string(rune('0'+(i+1)/10))+string(rune('0'+(i+1)%10)) {
			t.Errorf("%s (%q): forms %v", m, toks[0].Term, forms)
		}
	}
}

// TestFusionLambda: the weight of meaning is a hinge in the best coverage:
// Tie from Weak up, Tie + Rescue at nothing covered, linear between, and Tie
// alone when Weak is 0 (no gate).
func TestFusionLambda(t *testing.T) {
	fu := Fusion{Tie: 0.1, Rescue: 1, Weak: 0.4}
	for _, tc := range []struct{ kwTop, want float64 }{
		{0, 1.1}, {0.2, 0.6}, {0.4, 0.1}, {0.9, 0.1}, {1, 0.1},
	} {
		if got := fu.lambda(tc.kwTop); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("lambda(%v) = %v, want %v", tc.kwTop, got, tc.want)
		}
	}
	if got := (Fusion{Tie: 0.1, Rescue: 1}).lambda(0); got != 0.1 {
		t.Errorf("no gate: lambda(0) = %v, want 0.1", got)
	}
}

// TestRelativeSeasonsWinter: a winter is named by its December's year, so
// "this winter" in January is the one that began the December before; a
// year of four digits beside a season names its year; "last month" in
// January is the December before.
func TestRelativeSeasonsWinter(t *testing.T) {
	for _, tc := range []struct {
		now        time.Time
		text, want string
	}{
		{time.Date(2026, 1, 15, 0, 0, 0, 0, time.UTC), "this winter", "2025 12|2026 01|2026 02"},
		{time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC), "this winter", "2026 12|2027 01|2027 02"},
		{time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC), "last winter", "2025 12|2026 01|2026 02"},
		{time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC), "next spring", "2027 03|2027 04|2027 05"},
		// A year written beside the season names it, whatever now is.
		{time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC), "roofer quote autumn 2024", "2024 09|2024 10|2024 11"},
		{time.Date(2026, 1, 15, 0, 0, 0, 0, time.UTC), "2024 winter", "2024 12|2025 01|2025 02"},
		{time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC), "photos from the summer of 2025.", "2025 06|2025 07|2025 08"},
		{time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC), "spring 99 and autumn 1492", ""},
		// A month relative to now is that one month.
		{time.Date(2026, 9, 15, 0, 0, 0, 0, time.UTC), "oullins game this month", "2026 09"},
		{time.Date(2026, 1, 15, 0, 0, 0, 0, time.UTC), "invoices from last month", "2025 12"},
		{time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC), "next month's rota", "2027 01"},
		{time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC), "month 2025 report", ""},
	} {
		rs := relativePeriods(withoutClitics(tc.text), tc.now) // as analyseQuery passes it
		var got []string
		for _, r := range rs {
			for _, f := range r.forms {
				if f[0] >= '0' && f[0] <= '9' {
					got = append(got, f)
				}
			}
		}
		if strings.Join(got, "|") != tc.want {
			t.Errorf("%q as of %s: %v, want %s", tc.text, tc.now.Format("2006-01"), got, tc.want)
		}
	}
	if rs := relativePeriods("spring cleaning notes", time.Now()); rs != nil {
		t.Errorf("a season without this, last or next: %v", rs)
	}
}

// TestWordsFoldToASCII: both analyses give one term for a word written with
// or without its accents, composed or decomposed (macOS names), in any case;
// letters without a Latin base stay as they are.
func TestWordsFoldToASCII(t *testing.T) {
	x, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	for _, name := range []string{wordsAnalyzer, splitAnalyzer, queryAnalyzer} {
		a := x.bl.Mapping().AnalyzerNamed(name)
		for _, c := range []struct {
			want  string
			forms []string
		}{
			{"bjork", []string{"bjork", "björk", "bjo\u0308rk", "BJÖRK", "BJO\u0308RK"}},
			{"cafe", []string{"cafe", "café", "cafe\u0301", "CAFÉ"}},
			{"strass", []string{"strasse", "straße"}},   // ß is ss (then the stem)
			{"αθήνα", []string{"αθήνα", "αθη\u0301να"}}, // Greek: NFKC composes, nothing folds
		} {
			for _, f := range c.forms {
				if got := analysed(a, f); got != c.want {
					t.Errorf("%s: %q analyses to %q, want %q", name, f, got, c.want)
				}
			}
		}
	}
}

// TestMayIsMonth: "may" is the month where a modal verb cannot stand (last,
// beside a number, after a word that places a time), and then its term
// takes the month's dated number, 05; elsewhere it is a word like any other.
func TestMayIsMonth(t *testing.T) {
	x, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	im := x.bl.Mapping()
	for _, tc := range []struct {
		text  string
		month bool
	}{
		{"committee chat may", true},
		{"pixel beach may 2025 original", true},
		{"contact sheet week of 11 may", true},
		{"scan 3 may morning", true},
		{"latest thesis draft end of May", true},
		{"whiteboard photo late may", true},
		{"files I may need for the trip", false},
		{"what may break the build", false},
		{"may", false}, // alone: nothing says which
		{"mayday checklist", false},
	} {
		if got := mayIsMonth(strings.Fields(tc.text)); got != tc.month {
			t.Errorf("%q: month %v, want %v", tc.text, got, tc.month)
		}
		qt := analyseQuery(im.AnalyzerNamed(wordsAnalyzer), im.AnalyzerNamed(queryAnalyzer), tc.text, time.Now())
		if got := qt.monthNumber["may"] == "05" && slices.Contains(qt.forms["may"], "05"); got != tc.month {
			t.Errorf("%q: may's forms %v, number %q; want the month: %v", tc.text, qt.forms["may"], qt.monthNumber["may"], tc.month)
		}
	}
}

// TestCompactDated: a month counts inside a date written without
// separators, 8 or 14 digits with a plausible year and day or 6 with a year
// 20xx (YYYYMM, MMYYYY) that is not a time after a date, and nowhere else.
func TestCompactDated(t *testing.T) {
	for _, tc := range []struct {
		j, mm string
		want  bool
	}{
		{"chat/whatsapp/media/doc-20260520-wa0011.pdf", "05", true},
		{"photos/img_20250614_123456.jpg", "06", true},
		{"photos/pxl_20250614123456.jpg", "06", true},
		{"photos/img_20250614_123456.jpg", "12", false}, // the time's digits are no month
		{"scans/20260532.pdf", "05", false},             // no day 32
		{"scans/20260500.pdf", "05", false},
		{"data/1202605201.csv", "05", false}, // nine digits: not a date
		{"invoices/inv-33330520.pdf", "05", false},
		{"notes/2026-05-20.md", "05", false}, // separated: datedMonth's, not this
		// A month of six digits, as statements and tax returns name periods.
		{"gst/gstr1_27aakcj4821m1zq_042025.pdf", "04", true}, // MMYYYY
		{"bank/statement_202503.pdf", "03", true},            // YYYYMM
		{"gst/gstr1_27aakcj4821m1zq_042025.pdf", "02", false},
		{"bank/statement_202503.pdf", "02", false},
		{"photos/img_20250418_102030.jpg", "10", false}, // a time after a date
		{"photos/img_20250418_102030.jpg", "04", true},
		{"orders/po_123456.pdf", "12", false}, // no year 20xx in it
	} {
		if got := compactDated(tc.j, tc.mm); got != tc.want {
			t.Errorf("compactDated(%q, %q) = %v, want %v", tc.j, tc.mm, got, tc.want)
		}
	}
}

// TestCompactDay: only a whole day, year first, with one separator between
// its parts, is written again as eight digits.
func TestCompactDay(t *testing.T) {
	for w, want := range map[string]string{
		"2026-11-18":  "20261118",
		"2026.1.8":    "20260108",
		"2026_11_18":  "20261118",
		"2026/11/18":  "20261118",
		"2026-13-01":  "", // no month 13
		"2026-11-32":  "",
		"26-11-18":    "", // the year first, in full
		"18-11-2026":  "",
		"2026-11":     "",
		"2026--11-18": "",
		"2026-+1-18":  "",
		"2026-11-18x": "",
		"v2.1.1":      "",
	} {
		if got := compactDay(w); got != want {
			t.Errorf("compactDay(%q) = %q, want %q", w, got, want)
		}
	}
}

// TestPaddedForms: a number is padded to six digits, a digit to two only,
// anything else not at all.
func TestPaddedForms(t *testing.T) {
	for w, want := range map[string][]string{
		"3":      {"03"},
		"34":     {"034", "0034", "00034", "000034"},
		"187":    {"0187", "00187", "000187"},
		"20261":  {"020261"},
		"202611": nil, // six digits already
		"03":     nil, // padded already
		"3a":     nil,
		"":       nil,
	} {
		if got := paddedForms(w); !slices.Equal(got, want) {
			t.Errorf("paddedForms(%q) = %q, want %q", w, got, want)
		}
	}
}
