package conformance

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseTAP(t *testing.T) {
	out := `1..6
ok 1
not ok 2 - tried 'chown pjdfstest_x 65534 65534', expected EPERM, got 0
ok 3
not ok 4 # TODO not on this OS
garbage line
not ok 5 - tried 'unlink x', expected EACCES, got 0
`
	r := ParseTAP("chown/07.t", out)
	if r.Ran != 5 || !reflect.DeepEqual(r.Failed, []int{2, 5}) {
		t.Fatalf("ParseTAP: ran %d failed %v, want ran 5 failed [2 5]", r.Ran, r.Failed)
	}
	if !strings.Contains(r.Lines[2], "expected EPERM, got 0") {
		t.Errorf("line of assertion 2: %q", r.Lines[2])
	}
}

func TestResultsRoundTrip(t *testing.T) {
	rs := Results{
		"chown/07.t":  {File: "chown/07.t", Ran: 20, Failed: []int{5, 8}},
		"rename/09.t": {File: "rename/09.t", Ran: 100, Note: "timeout"},
		"open/00.t":   {File: "open/00.t", Ran: 47},
	}
	text := rs.Format("header line")
	got, err := ParseResults(text)
	if err != nil {
		t.Fatal(err)
	}
	for f, want := range rs {
		g := got[f]
		if g.Ran != want.Ran || !reflect.DeepEqual(g.Failed, want.Failed) || g.Note != want.Note {
			t.Errorf("%s: round trip gave %+v, want %+v\n%s", f, g, want, text)
		}
	}
	for _, bad := range []string{"x.t failed=1", "x.t ran=3 failed=2,1", "x.t ran=3 color=red", "x.t ran=-1"} {
		if _, err := ParseResults(bad); err == nil {
			t.Errorf("ParseResults(%q): no error", bad)
		}
	}
}

func TestPatchTypeLoops(t *testing.T) {
	in := "for type in regular dir fifo block char socket symlink; do\n" +
		"\tfor type3 in none regular fifo block char socket symlink; do\n" +
		"expect char stat ${n0} type\n"
	out, n := PatchTypeLoops(in)
	want := "for type in regular dir fifo socket symlink; do\n" +
		"\tfor type3 in none regular fifo socket symlink; do\n" +
		"expect char stat ${n0} type\n"
	if out != want || n != 2 {
		t.Fatalf("PatchTypeLoops: %d loops\n%s\nwant 2\n%s", n, out, want)
	}
}

func TestParseLists(t *testing.T) {
	md := "# t\n" + AcceptedHeading + "\n\n" +
		"- `nfs mkfifo/00.t *`: device nodes\n" +
		"- `9p chown/05.t 3 5-7`: no groups on the wire\n" +
		"## Other\n- `nfs open/00.t 1`: not a list entry: other section\n" +
		KnownHeading + "\n- `nfs rename/00.t 9,10`: issue 29\n"
	l, err := ParseLists(md)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []Key{{"nfs", "mkfifo/00.t", 0}, {"9p", "chown/05.t", 3}, {"9p", "chown/05.t", 6}} {
		if _, ok := l.Accepted[k]; !ok {
			t.Errorf("accepted: %v missing from %v", k, l.Accepted)
		}
	}
	if len(l.Accepted) != 5 || len(l.Known) != 2 {
		t.Errorf("accepted %d known %d, want 5 and 2: %v %v", len(l.Accepted), len(l.Known), l.Accepted, l.Known)
	}
	for _, bad := range []string{
		AcceptedHeading + "\n- `nfs chmod/00.t 3`\n",        // no reason
		AcceptedHeading + "\n- `smb chmod/00.t 3`: x\n",     // unknown protocol
		KnownHeading + "\n- `nfs chmod/00.t 5-3`: x\n",      // backwards range
		KnownHeading + "\n- `nfs chmod/00.t three`: x\n",    // not a number
		KnownHeading + "\n- `nfs chmod/00.t 0`: x\n",        // numbers start at 1
		AcceptedHeading + "\n- `nfs chmod 3`: missing .t\n", // not a test file
	} {
		if _, err := ParseLists(bad); err == nil {
			t.Errorf("ParseLists(%q): no error", bad)
		}
	}
}

func TestCompare(t *testing.T) {
	semfs := Results{
		"a/00.t": {File: "a/00.t", Ran: 10, Failed: []int{1, 2, 3, 4, 5}, Lines: map[int]string{2: "not ok 2 - tried 'x', expected 0, got EPERM"}},
		"b/00.t": {File: "b/00.t", Ran: 3, Note: "timeout"}, // stopped early: 4..6 not run
		"c/00.t": {File: "c/00.t", Ran: 4},                  // a known failure fixed
	}
	peer := Results{
		"a/00.t": {File: "a/00.t", Ran: 10, Failed: []int{1}},
		"b/00.t": {File: "b/00.t", Ran: 6, Failed: []int{5}},
		"c/00.t": {File: "c/00.t", Ran: 4},
	}
	l := Lists{
		Accepted: map[Key]string{{"nfs", "a/00.t", 3}: "by design"},
		Known:    map[Key]string{{"nfs", "a/00.t", 4}: "issue 29", {"nfs", "c/00.t", 2}: "issue 29"},
	}
	g := Compare("nfs", semfs, peer, l)
	var got []string
	for _, f := range g.New {
		got = append(got, f.File+" "+strings.Fields(f.Line)[0]+" "+itoa(f.N))
	}
	want := []string{"a/00.t not 2", "a/00.t not 5", "b/00.t not 4", "b/00.t not 6"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("new failures %v, want %v", got, want)
	}
	if len(g.Accepted) != 1 || g.Accepted[0].N != 3 || len(g.Known) != 1 || g.Known[0].N != 4 {
		t.Errorf("accepted %v known %v", g.Accepted, g.Known)
	}
	if !reflect.DeepEqual(g.Fixed, []string{"nfs c/00.t 2"}) {
		t.Errorf("fixed %v", g.Fixed)
	}
	rep := g.NewReport()
	for _, s := range []string{"`nfs a/00.t 2 5`", "`nfs b/00.t 4 6`", "expected 0, got EPERM", "`nfs b/00.t 4 6`", "stopped after 3 assertions (timeout)"} {
		if !strings.Contains(rep, s) {
			t.Errorf("report lacks %q:\n%s", s, rep)
		}
	}
}

func itoa(n int) string { return joinInts([]int{n}, "") }

func TestRanges(t *testing.T) {
	for _, c := range []struct {
		in   []int
		want string
	}{{nil, ""}, {[]int{3}, "3"}, {[]int{1, 2, 3, 5, 7, 8}, "1-3 5 7-8"}} {
		if got := Ranges(c.in); got != c.want {
			t.Errorf("Ranges(%v) = %q, want %q", c.in, got, c.want)
		}
		if c.want != "" {
			back, err := parseNumbers(c.want)
			if err != nil || !reflect.DeepEqual(back, c.in) {
				t.Errorf("parseNumbers(%q) = %v, %v; want %v", c.want, back, err, c.in)
			}
		}
	}
}

func TestTable(t *testing.T) {
	a := Results{
		"chown/07.t":  {File: "chown/07.t", Ran: 20, Failed: []int{5, 8}},
		"open/00.t":   {File: "open/00.t", Ran: 47},
		"rename/09.t": {File: "rename/09.t", Ran: 9, Failed: []int{1, 2, 3, 4, 5, 6, 7}, Note: "timeout"},
	}
	b := Results{
		"chown/07.t":  {File: "chown/07.t", Ran: 20},
		"open/00.t":   {File: "open/00.t", Ran: 47},
		"rename/09.t": {File: "rename/09.t", Ran: 400},
	}
	got := Table(Column{"semfs", a}, Column{"peer", b})
	for _, want := range []string{
		"| test file | semfs | peer |",
		"| chown/07.t | 2 (5 8) | 0 |",
		"| rename/09.t | 7 [timeout after 9] | 0 |",
		"| **chown/** | 2 | 0 |",
		"| **total failed / ran** | **9** / 76 | **0** / 467 |",
		"1 other test files pass on every mount.",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("table lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "| open/00.t |") {
		t.Errorf("a file that passes everywhere has a row:\n%s", got)
	}
}
