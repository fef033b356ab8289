package index_test

import (
	"fmt"
	"math"
	"math/rand"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/semfs/semfs/embed"
	"github.com/semfs/semfs/embed/embedtest"
	"github.com/semfs/semfs/index"
)

func best(t testing.TB, x *index.Index, q index.Query) []index.Result {
	t.Helper()
	q.Rank = index.RankBest
	return query(t, x, q)
}

func paths(res []index.Result) []string {
	out := make([]string, len(res))
	for i, r := range res {
		out[i] = r.Path
	}
	return out
}

// scoresOf is each result's path and score, for failure messages.
func scoresOf(res []index.Result) []string {
	out := make([]string, len(res))
	for i, r := range res {
		out[i] = fmt.Sprintf("%s %.3f", r.Path, r.Score)
	}
	return out
}

func rankOf(res []index.Result, p string) int {
	for i, r := range res {
		if r.Path == p {
			return i
		}
	}
	return -1
}

// TestBestWords: how query words meet field words: analysed (case, NFKC,
// stems), tokenised fields (path segments, camelCase, digits), token prefixes,
// infixes of four runes or more (TestBestWordsInsideWords), short words whole
// only, stop words no evidence unless alone.
func TestBestWords(t *testing.T) {
	x := openIndex(t, t.TempDir(), index.Options{})
	files := []struct{ path, by, task string }{
		{"docs/deployment-guide.md", "code-editor", "how we ship"},
		{"src/ui/DatePicker.tsx", "code-editor", "calendar widget"},
		{"tickets/boarding-TP1350.pdf", "browser", "flight home"},
		{"src/feature-flags.go", "code-editor", "toggle rollouts"},
		{"notes/lisbon.md", "notes", "trip ideas"},
		{"notes/go-tips.md", "notes", "language tricks"},
		{"notes/the-end.md", "notes", "last chapter"},
		{"notes/ﬁle-cabinet.md", "notes", "paper storage"}, // "ﬁ" ligature: NFKC gives "fi"
		{"journal/2026-02-11.md", "notes", "diary"},
		{"journal/2025-12-03.md", "notes", "diary"},
		{"journal/2024-06-12.md", "notes", "diary"},
		{"scans/receipt_12.pdf", "notes", "paper"},
		{"recipes/grandma_card.md", "notes", "lasagna"},
		{"infra/k8s_notes.md", "notes", "cluster"},
		{"mail/Re_ mulch delivery.eml", "mail", ""},
		{"audio/voice.m4a", "notes", ""},
		{"home/Insurance/policy.pdf", "notes", ""},
		{"clients/ostra/banner.png", "design", ""},
		{"design/Björk_moodboard.pdf", "design", ""},
		{"notes/cafe\u0301_list.md", "notes", "Straße"}, // decomposed é (macOS names)
		{"notes/αθήνα.md", "notes", ""},
	}
	for i, f := range files {
		mustCreate(t, x, f.path, f.by, uint64(i+1))
		mustTag(t, x, f.path, f.task, nil, nil)
	}
	for _, tc := range []struct {
		q          string
		want, deny []string
	}{
		{"deploy", []string{"docs/deployment-guide.md"}, nil},                                                      // stem + prefix
		{"DEPLOYING", []string{"docs/deployment-guide.md"}, nil},                                                   // case + stem
		{"picker", []string{"src/ui/DatePicker.tsx"}, nil},                                                         // camelCase split
		{"tp1350", []string{"tickets/boarding-TP1350.pdf"}, nil},                                                   // letters and digits
		{"1350", []string{"tickets/boarding-TP1350.pdf"}, nil},                                                     // digits alone
		{"lisb", []string{"notes/lisbon.md"}, nil},                                                                 // token prefix
		{"eat", nil, []string{"src/feature-flags.go"}},                                                             // short: never an infix
		{"isbon", []string{"notes/lisbon.md"}, nil},                                                                // an infix, found as no word
		{"go", []string{"notes/go-tips.md", "src/feature-flags.go"}, nil},                                          // short: whole tokens
		{"g", nil, []string{"notes/go-tips.md", "src/feature-flags.go"}},                                           // short: no prefix
		{"the lisbon", []string{"notes/lisbon.md"}, []string{"notes/the-end.md"}},                                  // stop word: no evidence
		{"the", []string{"notes/the-end.md"}, nil},                                                                 // ...unless alone
		{"FILE cabinet", []string{"notes/ﬁle-cabinet.md"}, nil},                                                    // NFKC
		{"February", []string{"journal/2026-02-11.md"}, nil},                                                       // a month's number
		{"december", []string{"journal/2025-12-03.md"}, []string{"journal/2024-06-12.md", "scans/receipt_12.pdf"}}, // ...where a date puts a month, not a day's or another number
		{"grandma's card", []string{"recipes/grandma_card.md"}, []string{"infra/k8s_notes.md"}},                    // a possessive's s is no word
		{"proof we're insured", []string{"home/Insurance/policy.pdf"}, []string{"mail/Re_ mulch delivery.eml"}},    // nor a contraction's clitic
		{"what i'm saying", nil, []string{"audio/voice.m4a"}},                                                      // ...
		{"calendar widgets", []string{"src/ui/DatePicker.tsx"}, []string{"notes/lisbon.md"}},
		{"Östra", []string{"clients/ostra/banner.png"}, nil},         // letters folded to ASCII, both ways
		{"bjork", []string{"design/Björk_moodboard.pdf"}, nil},       // ...
		{"bjo\u0308rk", []string{"design/Björk_moodboard.pdf"}, nil}, // ...decomposed too
		{"café", []string{"notes/cafe\u0301_list.md"}, nil},          // ...
		{"cafe", []string{"notes/cafe\u0301_list.md"}, nil},          // ...
		{"strasse", []string{"notes/cafe\u0301_list.md"}, nil},       // ß is ss
		{"αθηνα", nil, []string{"notes/αθήνα.md"}},                   // Greek has no Latin base: kept as written
		{"αθήνα", []string{"notes/αθήνα.md"}, nil},                   // ...
	} {
		got := paths(best(t, x, index.Query{Text: tc.q}))
		for _, w := range tc.want {
			if rankOf(best(t, x, index.Query{Text: tc.q}), w) < 0 {
				t.Errorf("%q: %s missing from %v", tc.q, w, got)
			}
		}
		for _, d := range tc.deny {
			for _, g := range got {
				if g == d {
					t.Errorf("%q: %s matched: %v", tc.q, d, got)
				}
			}
		}
	}
}

// TestBestRelativeYears: "this year", "last year", "next year" and "two
// years ago" pick, of
// files the other words found alike, the one dated that year as of
// Query.Now; a file dated that year which no other word finds stays out, and
// a query without a relative year keeps its order.
func TestBestRelativeYears(t *testing.T) {
	x := openIndex(t, t.TempDir(), index.Options{})
	files := []string{
		"budget/2024_household_budget.xlsx",
		"budget/2025_household_budget.xlsx",
		"budget/2026_household_budget.xlsx",
		"budget/2027_household_budget.xlsx",
		"photos/2025/beach.jpg",
		"photos/2026/beach.jpg",
	}
	for i, f := range files {
		mustCreate(t, x, f, "finance", uint64(i+1))
	}
	in2026 := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	in2028 := time.Date(2028, 6, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		q    string
		now  time.Time
		want string
	}{
		{"household budget this year", in2026, "budget/2026_household_budget.xlsx"},
		{"household budget for the current year", in2026, "budget/2026_household_budget.xlsx"},
		{"household budget last year", in2026, "budget/2025_household_budget.xlsx"},
		{"last year's household budget", in2026, "budget/2025_household_budget.xlsx"},
		{"household budget next year", in2026, "budget/2027_household_budget.xlsx"},
		{"household budget two years ago", in2028, "budget/2026_household_budget.xlsx"},
		{"household budget 3 years ago", in2028, "budget/2025_household_budget.xlsx"},
		{"household budget a year ago", in2026, "budget/2025_household_budget.xlsx"},
		{"household budget this year", time.Date(2025, 1, 2, 0, 0, 0, 0, time.UTC), "budget/2025_household_budget.xlsx"},
		{"beach this year", in2026, "photos/2026/beach.jpg"},
	} {
		res := best(t, x, index.Query{Text: tc.q, Now: tc.now})
		if len(res) == 0 || res[0].Path != tc.want {
			t.Errorf("%q as of %s: %v, want %s first", tc.q, tc.now.Format("2006"), paths(res), tc.want)
		}
		for _, r := range res {
			if strings.HasPrefix(tc.q, "household") && strings.HasPrefix(r.Path, "photos/") {
				t.Errorf("%q: %s found for its year alone: %v", tc.q, r.Path, paths(res))
			}
		}
	}
	// Without a relative year the year is no evidence: the four budgets tie
	// on words and keep their order whatever the clock says.
	a := paths(best(t, x, index.Query{Text: "household budget year", Now: in2026}))
	b := paths(best(t, x, index.Query{Text: "household budget year", Now: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)}))
	if strings.Join(a, " ") != strings.Join(b, " ") {
		t.Errorf("a query without a relative year moved with the clock: %v, then %v", a, b)
	}
}

// TestBestRelativeSeasons: "last fall", "this spring"… pick, of files the
// other words found alike, the one dated in that season's months of that
// year, however the date is written (2026-04, oct25); a file dated then that
// no other word finds stays out.
func TestBestRelativeSeasons(t *testing.T) {
	x := indexOfPaths(t,
		"itineraries/paris_2024-10.md",
		"itineraries/lisbon_oct25.md",
		"itineraries/rome_2025-06-12.md",
		"itineraries/tokyo_2026-04.md",
		"photos/2026-04/beach.jpg",
	)
	in2026 := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	for _, res := range wantFirstAt(t, x, in2026, [][2]string{
		{"itinerary last fall", "itineraries/lisbon_oct25.md"},
		{"itinerary last autumn", "itineraries/lisbon_oct25.md"},
		{"itinerary this spring", "itineraries/tokyo_2026-04.md"},
		{"itinerary last summer", "itineraries/rome_2025-06-12.md"},
	}) {
		if rankOf(res, "photos/2026-04/beach.jpg") >= 0 {
			t.Errorf("photos/2026-04/beach.jpg found for its date alone: %v", paths(res))
		}
	}
}

// indexOfPaths opens an index holding files, untagged, all created by the
// app "notes".
func indexOfPaths(t *testing.T, files ...string) *index.Index {
	t.Helper()
	x := openIndex(t, t.TempDir(), index.Options{})
	for i, f := range files {
		mustCreate(t, x, f, "notes", uint64(i+1))
	}
	return x
}

// wantFirst asks the best rank each query of cases ({query, path}) and
// fails unless path comes first; it returns the answers, in cases' order.
func wantFirst(t *testing.T, x *index.Index, cases [][2]string) [][]index.Result {
	t.Helper()
	return wantFirstAt(t, x, time.Time{}, cases)
}

// wantFirstAt is wantFirst with the queries asked as of now (Query.Now).
func wantFirstAt(t *testing.T, x *index.Index, now time.Time, cases [][2]string) [][]index.Result {
	t.Helper()
	var out [][]index.Result
	for _, c := range cases {
		res := best(t, x, index.Query{Text: c[0], Now: now})
		if len(res) == 0 || res[0].Path != c[1] {
			t.Errorf("%q: %v, want %s first", c[0], paths(res), c[1])
		}
		out = append(out, res)
	}
	return out
}

// TestBestOrdinals: "first", "second"… pick, of files the other words found
// alike, the one marked v1, v2…; a file marked so that no other word finds
// stays out.
func TestBestOrdinals(t *testing.T) {
	x := indexOfPaths(t,
		"reports/q3_revenue_v3.pdf",
		"reports/q3_revenue_v2.pdf",
		"reports/q3_revenue_v1.pdf",
		"slides/talk_v1.key",
	)
	for _, res := range wantFirst(t, x, [][2]string{
		{"first q3 revenue report", "reports/q3_revenue_v1.pdf"},
		{"the second revenue draft", "reports/q3_revenue_v2.pdf"},
		{"third version of the revenue report", "reports/q3_revenue_v3.pdf"},
	}) {
		if rankOf(res, "slides/talk_v1.key") >= 0 {
			t.Errorf("slides/talk_v1.key found for its v1 alone: %v", paths(res))
		}
	}
}

// TestBestNumberWords: a number a query writes in words ("rough cut two",
// "all three") finds the file whose name writes it in digits, as a word the
// file covers.
func TestBestNumberWords(t *testing.T) {
	x := indexOfPaths(t,
		"film/rough_cut_1_notes.docx",
		"film/rough_cut_2_notes.docx",
		"film/rough_cut_notes_old.docx",
		"trip/passports_all3.pdf",
		"trip/passport_renewal.pdf",
		"trip/passport_photo.jpg",
	)
	wantFirst(t, x, [][2]string{
		{"rough cut two notes", "film/rough_cut_2_notes.docx"},
		{"passports all three", "trip/passports_all3.pdf"},
	})
	// "two years ago" is a year, not a 2 (TestBestRelativeYears).
	y := indexOfPaths(t, "mocks/2024/y11_mock_marks.xlsx", "mocks/2026/y11_mock_p2_marks.xlsx")
	res := best(t, y, index.Query{Text: "y11 mock marks two years ago", Now: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)})
	if len(res) == 0 || res[0].Path != "mocks/2024/y11_mock_marks.xlsx" {
		t.Errorf("\"y11 mock marks two years ago\" in 2026: %v, want mocks/2024/y11_mock_marks.xlsx first", paths(res))
	}
}

// TestBestShortForms: a word's usual abbreviation in names matches it, both
// ways ("production": prod, db: "database"), and so does a word names use for
// it ("retreat": offsite), as a word the file covers.
func TestBestShortForms(t *testing.T) {
	x := indexOfPaths(t,
		"config/config.dev.yaml",
		"config/config.prod.yaml",
		"infra/ingress.yaml",
		"infra/k8s/ingress.yaml",
		"notes/appointments.md",
		"notes/database_upgrade.md",
		"notes/upgrade.md",
		"notes/dentist_appt.ics",
		"budget/costs.csv",
		"budget/offsite_costs.csv",
		"course/chapter_notes.md",
		"course/ch03_notes.md",
		"finance/q3_budget.xlsx",
		"finance/budget.xlsx",
	)
	wantFirst(t, x, [][2]string{
		{"chapter 3 notes", "course/ch03_notes.md"},
		{"third quarter budget", "finance/q3_budget.xlsx"},
		{"production config", "config/config.prod.yaml"},
		{"kubernetes ingress", "infra/k8s/ingress.yaml"},
		{"db upgrade", "notes/database_upgrade.md"},
		{"dentist appointment", "notes/dentist_appt.ics"},
		{"retreat costs", "budget/offsite_costs.csv"}, // a word names use for it
	})
}

// TestBestPaddedNumbers: a number a query writes plainly ("invoice 187",
// "roll 34", "interview 2") finds the file whose name pads it with zeros
// (invoice-000187, roll_034, int02), as a word the file covers; a longer
// number that merely holds its digits (001870) is not it, nor is a digit's
// padding where a date or a time puts it ("ep 9": 2025-09-15, 14.09.12).
func TestBestPaddedNumbers(t *testing.T) {
	x := indexOfPaths(t,
		"billing/invoice-000187.pdf",
		"billing/invoice-001870.pdf",
		"billing/invoice-000188.pdf",
		"billing/invoice_notes.md",
		"scans/roll_034_hp5/contact.tif",
		"scans/roll_035_hp5/contact.tif",
		"scans/contact_sheet_template.tif",
		"transcripts/dai_int02.srt",
		"transcripts/dai_int03.srt",
		"transcripts/interview_guide.srt",
		"Vault/Daily/2025-09-15 ep notes.md",
		"Zoom/2026-06-16 14.09.12 ep notes/audio.m4a",
		"Slack/LL_ep09_feedback_notes.docx",
		"sensors/SITE03_2025-04-20.csv",
		"sensors/SITE04_2025-03-03.csv",
		"Audio/Alt_ep41/Alt_ep_final_master.mp3",
		"Audio/LL_ep07/LL07_final_master.mp3",
		"recipes/meal_plan_w02.md",
		"taxes/W2_2025.pdf",
	)
	res := wantFirst(t, x, [][2]string{
		{"ep 9 notes", "Slack/LL_ep09_feedback_notes.docx"},
		{"ep7 final master", "Audio/LL_ep07/LL07_final_master.mp3"}, // a digit inside a word too
		{"W2", "taxes/W2_2025.pdf"},                                 // ...after two letters: W2 is no w02
		{"site 4", "sensors/SITE04_2025-03-03.csv"},                 // glued to a word, whatever follows
		{"invoice 187", "billing/invoice-000187.pdf"},
		{"roll 34 contact sheet", "scans/roll_034_hp5/contact.tif"},
		{"dai interview 2 srt", "transcripts/dai_int02.srt"},
	})
	// The dated notes hold ep and notes, not 9: below the episode's file
	// by a whole word.
	if len(res[0]) < 3 || res[0][0].Score-res[0][1].Score < 0.2 {
		t.Errorf("ep 9 notes: %v: the dated files are credited with 9", scoresOf(res[0]))
	}
}

// TestBestCompactDay: a day a query writes with separators (2026-11-18)
// finds the file that writes it as one number (backup_20261118.log), above a
// file holding only the query's other words and the same day apart.
func TestBestCompactDay(t *testing.T) {
	x := indexOfPaths(t,
		"backups/logs/backup_20261118.log",
		"backups/logs/backup_20261117.log",
		"backups/zotero/zotero_2026-11-18.tar.gz",
		"backups/notes/backup_plan.md",
	)
	wantFirst(t, x, [][2]string{
		{"backup log 2026-11-18", "backups/logs/backup_20261118.log"},
		{"backup log 2026.11.18", "backups/logs/backup_20261118.log"},
	})
}

// TestBestRespelledLiteral: a word of several tokens the query writes with
// one separator ("gstr-3b", "e-ticket") is held as written by a name that
// writes it with another or none (GSTR3B, EK_eticket), above files holding
// its tokens apart.
func TestBestRespelledLiteral(t *testing.T) {
	x := indexOfPaths(t,
		"tax/gst/GSTR3B_JalSetu_042025.pdf",
		"tax/gst/GSTR-1 3B reconciliation 042025.xlsx",
		"tax/gst/gstr 9 annual 042025 3b notes.pdf",
		"travel/kochi/EK_eticket_MEHTA.pdf",
		"travel/kochi/e ticket booking mail.txt",
		"releases/app_v2_2_1.zip",
		"releases/app_v221.zip",
	)
	wantFirst(t, x, [][2]string{
		{"gstr-3b 042025", "tax/gst/GSTR3B_JalSetu_042025.pdf"},
		{"kochi e-ticket", "travel/kochi/EK_eticket_MEHTA.pdf"},
		{"app v2.2.1", "releases/app_v2_2_1.zip"}, // v221 is another number
	})
}

// TestBestJoinedWords: two query words written apart match a token that
// writes them as one ("time zone" and timezone, "on-call" and oncall), and
// such a file covers both words: it ranks above files holding one of them.
// A join that analyses to one of the query's own words is not such a token.
func TestBestJoinedWords(t *testing.T) {
	x := indexOfPaths(t,
		"pages/timezone_bug.html",
		"notes/time_sheet.md",
		"maps/zone_a.pdf",
		"infra/oncall_rotation.ics",
		"infra/call_log.txt",
		"scripts/backup.sh",
		"notes/back_pain.md",
		"family/mom_schedule.xlsx",
		"family/pharmacy/2026/mom_meds_schedule_for_the_august_visits_list.xlsx",
	)
	wantFirst(t, x, [][2]string{
		// A join that stems back to one of its words (mommeds: mom) is
		// no joined token: the file holding mom does not hold meds.
		{"mom meds schedule", "family/pharmacy/2026/mom_meds_schedule_for_the_august_visits_list.xlsx"},
		{"time zone", "pages/timezone_bug.html"},
		{"time zone bug", "pages/timezone_bug.html"},
		{"on-call rotation", "infra/oncall_rotation.ics"},
		{"back up script", "scripts/backup.sh"},
	})
}

// TestBestCamelCaseWhole: a name written in camelCase (WhatsApp, iPhone,
// eVisa) is found by the word typed whole in lower case, as a word, above
// files holding only one of its parts or the query's other words; typed in
// camelCase, it still finds the names that write it apart or whole.
func TestBestCamelCaseWhole(t *testing.T) {
	// Each wrong file sorts before the right one: a tie would rank it first.
	x := indexOfPaths(t,
		"Media/App/a.jpg",
		"WhatsApp/Media/b.jpg",
		"docs/india/visa_photo.jpg",
		"docs/eVisa_doyle.pdf",
		"backups/phone/contacts.vcf",
		"backups/iPhone/contacts.vcf",
		"cloud/one_note.md",
		"cloud/OneDrive/report.docx",
	)
	wantFirst(t, x, [][2]string{
		{"whatsapp", "WhatsApp/Media/b.jpg"},
		{"whatsapp media", "WhatsApp/Media/b.jpg"},
		{"WhatsApp", "WhatsApp/Media/b.jpg"},
		{"india evisa", "docs/eVisa_doyle.pdf"},
		{"iphone contacts", "backups/iPhone/contacts.vcf"},
		{"onedrive report", "cloud/OneDrive/report.docx"},
		{"one drive report", "cloud/OneDrive/report.docx"},
	})
}

// TestBestAcronymPlurals: capitals and a plural s ("OKRs", "CVs") are one
// word, not split as camelCase into "ok" "rs" or "c" "vs": "OKRs" finds the
// OKR files, not ok.md, and "versus" is not "vs" of "CVs".
func TestBestAcronymPlurals(t *testing.T) {
	// Each wrong file sorts before the right one: a tie would rank it first.
	x := indexOfPaths(t,
		"docs/aa/ok.md",
		"docs/OKR_review.md",
		"docs/quarterly_okrs.md",
		"hr/Team CVs.pdf",
		"pricing/hourly versus flat fee.md",
	)
	res := wantFirst(t, x, [][2]string{
		{"OKRs", "docs/OKR_review.md"},
		{"hourly versus flat", "pricing/hourly versus flat fee.md"},
	})
	if got := paths(res[0]); len(got) != 2 || got[1] != "docs/quarterly_okrs.md" {
		t.Errorf("OKRs: %v, want the two OKR files only", got)
	}
	for _, r := range res[1] {
		if r.Path == "hr/Team CVs.pdf" {
			t.Errorf("hourly versus flat: %s found (CVs is no vs)", r.Path)
		}
	}
}

// TestBestFormTokensInARow: a form of several tokens counts where its
// tokens stand in a row, as the name writes it: "first" is v1, not a v3 (1)
// copy; winter 2026 is 2026-12, not a June folder's 14.00.12; a recording
// is .m4a, not an m and a 4 apart.
func TestBestFormTokensInARow(t *testing.T) {
	// Each wrong file sorts before the right one: a tie would rank it first.
	x := indexOfPaths(t,
		"inspection/a_self_assessment_v3 (1).docx",
		"inspection/b_self_assessment_draft_for_the_board_v1.docx",
		"A/2026-06-16 14.00.12 voice notes/audio.ogg",
		"B/2026-12-20 voice notes of the long evening walk/audio.ogg",
		"memo/m/idea 4 a.txt",
		"memo/mine/idea.m4a",
	)
	wantFirstAt(t, x, time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC), [][2]string{
		{"self assessment first", "inspection/b_self_assessment_draft_for_the_board_v1.docx"},
		{"voice notes winter 2026", "B/2026-12-20 voice notes of the long evening walk/audio.ogg"},
		{"idea recording", "memo/mine/idea.m4a"},
	})
}

// TestBestFileKinds: a word for a kind of file ("picture", "spreadsheet",
// "recording", "python", "clip") matches the extensions of that kind, as a word of the query:
// of files the other words find alike, the one of that kind ranks first. The
// word as written decides ("records" is no recording).
func TestBestFileKinds(t *testing.T) {
	// Each wrong file sorts before the right one: a tie would rank it first.
	x := indexOfPaths(t,
		"finance/dinner_receipt.doc",
		"finance/dinner_receipt.jpg",
		"budget/offsite_costs.bak",
		"budget/offsite_costs.csv",
		"music/bridge_idea.abc",
		"music/bridge_idea.m4a",
		"car/service_records.txt",
		"music/service_demo.m4a",
		"code/umf.c",
		"code/umf.py",
		"notes/python/snippets.md",
		"chat/media/ptt-20260401.jpg",
		"chat/media/ptt-20260401.opus",
		"chat/media/img-20260401.heic",
		"chat/media/vid-20260401.mp4",
		"photos/dsc_1204.jpg",
		"photos/dsc_1204.nef",
		"sql/donor_cohorts.md",
		"sql/donor_cohorts.sql",
		"bank/balance.jpg",
		"bank/balance.png",
	)
	wantFirst(t, x, [][2]string{
		{"picture of the dinner receipt", "finance/dinner_receipt.jpg"},
		{"offsite costs spreadsheet", "budget/offsite_costs.csv"},
		{"voice memo of the bridge idea", "music/bridge_idea.m4a"},
		{"service records", "car/service_records.txt"},
		{"umf python", "code/umf.py"},
		{"voice message 20260401", "chat/media/ptt-20260401.opus"},
		{"clip 20260401", "chat/media/vid-20260401.mp4"},
		{"raw 1204", "photos/dsc_1204.nef"},
		{"donor cohorts query", "sql/donor_cohorts.sql"},
	})
	// A camera's jpg is no screenshot: "screenshot" finds the png only.
	if got := paths(best(t, x, index.Query{Text: "screenshot"})); len(got) != 1 || got[0] != "bank/balance.png" {
		t.Errorf("screenshot: %v, want bank/balance.png alone", got)
	}
}

// TestBestWordsInsideWords: a query word held only inside a longer word
// ("sitter" in babysitter, "list" in prislista) is evidence, half a word's:
// of files the other words find alike, the one holding it inside a word ranks
// first, below one holding it as a word of its own; a query whose words are
// found nowhere as words finds the files holding them inside words. The word
// is looked for as written too, where its stem is not inside it (policy:
// polici).
func TestBestWordsInsideWords(t *testing.T) {
	// Each wrong file sorts before the right one: a tie would rank it first.
	x := indexOfPaths(t,
		"a/work_schedule.md",
		"z/babysitter_schedule.md",
		"a/tassen_schema.pdf",
		"m/tassen_prislista.pdf",
		"n/tassen_list.pdf",
		"notes/lisbon.md",
		"parking/a_rules.pdf",
		"parking/Parkeringspolicy_Orebro.pdf",
	)
	wantFirst(t, x, [][2]string{
		{"sitter schedule", "z/babysitter_schedule.md"},
		{"tassen list", "n/tassen_list.pdf"},
		{"isbon", "notes/lisbon.md"},
		// The word as written, not only its stem (polici).
		{"policy", "parking/Parkeringspolicy_Orebro.pdf"},
	})
	res := best(t, x, index.Query{Text: "tassen list", Explain: true})
	if got := paths(res); len(got) != 3 || got[1] != "m/tassen_prislista.pdf" || got[2] != "a/tassen_schema.pdf" {
		t.Errorf("tassen list: %v, want the whole word, then the word inside a word, then neither", got)
	} else if w := res[1].Explain.Words["path"]; strings.Join(w, ",") != "tassen,list" {
		t.Errorf("tassen list: explain says %v matched %s's path", w, res[1].Path)
	} else if res[0].Score-res[2].Score <= 0 || res[1].Score-res[2].Score >= (res[0].Score-res[2].Score)*0.75 {
		t.Errorf("tassen list: scores %.3f %.3f %.3f: the word inside a word should earn about half a word's", res[0].Score, res[1].Score, res[2].Score)
	}
}

// TestBestMonthInCompactDate: a month counts for a file whose name dates it
// without separators (IMG_20250614_…, a period's GSTR1_…_102026 or
// statement_202503), among the files the other words found; "may" too,
// where it is the month. It counts as a whole word: a file dated March
// 2026 without separators ranks above one under a 2024-03 folder for
// "video march 2026".
func TestBestMonthInCompactDate(t *testing.T) {
	// Each wrong file sorts before the right one: a tie would rank it first.
	x := indexOfPaths(t,
		"beach/IMG_20250514_101010.jpg",
		"beach/IMG_20250614_093000.jpg",
		"chat/DOC-20260420-WA0001.pdf",
		"chat/DOC-20260520-WA0011.pdf",
		"gst/GSTR1_27AAKCJ4821M1ZQ_092026.pdf",
		"gst/GSTR1_27AAKCJ4821M1ZQ_102026.pdf",
		"bank/statement_202502.pdf",
		"bank/statement_202503.pdf",
		"Pictures/iPhone import/2024-03/IMG_0260.MOV",
		"WhatsApp/Media/WhatsApp Video/VID-20260314-WA0002.mp4",
		"Pictures/Memories/Lisbon 2026.mov",
		"Pictures/iPhone import/2026-01/IMG_0001.MOV",
	)
	wantFirst(t, x, [][2]string{
		{"video march 2026", "WhatsApp/Media/WhatsApp Video/VID-20260314-WA0002.mp4"},
		{"beach june", "beach/IMG_20250614_093000.jpg"},
		{"chat pdf may", "chat/DOC-20260520-WA0011.pdf"},
		{"gstr1 october", "gst/GSTR1_27AAKCJ4821M1ZQ_102026.pdf"},
		{"statement march", "bank/statement_202503.pdf"},
	})
}

// TestBestDayOfMonth: a number beside a month ("3 may", "april 1") is that
// month's day, as a date writes it with separators (2026-05-03) or without
// (PTT-20260401): that file ranks above one of the same month, another day.
func TestBestDayOfMonth(t *testing.T) {
	// Each wrong file sorts before the right one: a tie would rank it first.
	x := indexOfPaths(t,
		"class/conseil 2nde3 2025-05.eml",
		"scans/Scan 2026-05-17.pdf",
		"scans/Scan 2026-05-03.pdf",
		"voice/PTT-20260415-WA0001.opus",
		"voice/PTT-20260401-WA0002.opus",
	)
	wantFirst(t, x, [][2]string{
		{"scan 3 may", "scans/Scan 2026-05-03.pdf"},
		{"voice message april 1", "voice/PTT-20260401-WA0002.opus"},
	})
}

// TestBestMonthAbbreviations: a month typed short ("dec", "sept") is the
// month, dated however the name dates it or abbreviates it (Apr26 for
// April 2026 too); a month's name is not the start of longer words (juli:
// Julia).
func TestBestMonthAbbreviations(t *testing.T) {
	// Each wrong file sorts before the right one: a tie would rank it first.
	x := indexOfPaths(t,
		"stmt/tfsa_2025-08.pdf",
		"stmt/tfsa_2025-09.pdf",
		"stmt/tfsa_2025-11.pdf",
		"stmt/tfsa_2025-12.pdf",
		"tally/TrialBalance_31-Aug-2026.xlsx",
		"tally/TrialBalance_notes_2026.xlsx",
		"tally/TrialBalance_30-Sep-2026.xlsx",
		"clients/Julia/invoice.pdf",
		"clients/Julien/invoice.pdf",
		"clients/acme/invoice_2026-07.pdf",
		"roofs/12 Marchmont Rd/roof_quote.pdf",
		"roofs/roof_quote_2025-03.pdf",
		"care/Craigmonie_invoice_Apr25.pdf",
		"care/Craigmonie_invoice_Apr26.pdf",
	)
	wantFirst(t, x, [][2]string{
		{"tfsa dec", "stmt/tfsa_2025-12.pdf"},
		{"tfsa sept", "stmt/tfsa_2025-09.pdf"},
		// "sept" is also written sep, and "sep" sept.
		{"trial balance sept 2026", "tally/TrialBalance_30-Sep-2026.xlsx"},
		// A month's name does not stand for the longer words it begins.
		{"july invoice", "clients/acme/invoice_2026-07.pdf"},
		{"roof quote march", "roofs/roof_quote_2025-03.pdf"},
		// A month of a year written short: Apr26 is April 2026.
		{"care home invoice april 2026", "care/Craigmonie_invoice_Apr26.pdf"},
	})
}

// TestBestNameOfSeveralWords: a name of two words typed with a space is
// a name: "adobe scan" is the app adobe_scan, whose file ranks above another
// app's covering the same words; "tax return" the file tax-return.pdf.
func TestBestNameOfSeveralWords(t *testing.T) {
	x := openIndex(t, t.TempDir(), index.Options{})
	ino := uint64(0)
	create := func(p, by string) {
		ino++
		mustCreate(t, x, p, by, ino)
	}
	// Each wrong file sorts before the right one: a tie would rank it first.
	create("a/adobe_scan_contract.md", "notes")
	create("b/2025/ryt_season_contract_signed.pdf", "adobe_scan")
	create("taxes/2025/return/tax_1.md", "notes")
	create("taxes/2025/scans/tax-return.pdf", "notes")
	for i := range 12 {
		create(fmt.Sprintf("scans/adobe_scan_%02d.pdf", i), "adobe_scan")
	}
	for _, res := range wantFirst(t, x, [][2]string{
		{"adobe scan contract", "b/2025/ryt_season_contract_signed.pdf"},
		{"tax return 2025", "taxes/2025/scans/tax-return.pdf"},
	}) {
		if len(res) < 2 || res[0].Score <= res[1].Score {
			t.Errorf("%v: the name does not lift its file above the next", paths(res))
		}
	}
	// The app's name alone, typed as two words: its 13 files first, before
	// a file whose basename the query is (a path's name is a tie-break).
	create("notes/adobe scan.md", "notes")
	if res := best(t, x, index.Query{Text: "adobe scan"}); rankOf(res, "notes/adobe scan.md") != 13 {
		t.Errorf("adobe scan: %v, want the app's 13 files before notes/adobe scan.md", paths(res))
	}
}

// TestBestNearWords: a word no file holds in any form finds, at half a
// word's share, the words a typo away ("statment": statement; two edits from
// 8 letters, one from 6); explain names them. A word some file holds is
// never taken for another, nor a short one.
func TestBestNearWords(t *testing.T) {
	x := indexOfPaths(t,
		"bank/balance_2025.pdf",
		"bank/statement_2025.pdf",
		"garden/plants.md",
		"garden/planet.md",
		"garden/tulip.md",
	)
	res := wantFirst(t, x, [][2]string{{"statment 2025", "bank/statement_2025.pdf"}})[0]
	if len(res) < 2 || res[0].Score <= res[1].Score {
		t.Errorf("statment 2025: %v, the near word adds nothing", paths(res))
	}
	e := best(t, x, index.Query{Text: "statment 2025", Explain: true})[0].Explain
	if !slices.Contains(e.Words["path"], "statment") {
		t.Errorf("statment 2025: explain says %v", e.Words)
	}
	// "plants" is held: planet, one edit from its stem, stays out.
	if got := paths(best(t, x, index.Query{Text: "plants"})); len(got) != 1 || got[0] != "garden/plants.md" {
		t.Errorf("plants: %v", got)
	}
	// Five letters: no near words ("tulop" is one edit from tulip).
	if got := paths(best(t, x, index.Query{Text: "tulop"})); len(got) != 0 {
		t.Errorf("tulop: %v", got)
	}
}

// TestBestExplain: explain says which words hit which field, the names and
// the similarity.
func TestBestExplain(t *testing.T) {
	x := openIndex(t, t.TempDir(), index.Options{})
	mustCreate(t, x, "notes/2026/trip-lisbon.md", "notes", 1)
	mustTag(t, x, "notes/2026/trip-lisbon.md", "plan the itinerary", []string{"calendar"}, vec4(1, 0, 0, 0))
	res := best(t, x, index.Query{Text: "notes lisbon planning", Vector: vec4(1, 0, 0, 0), Explain: true})
	if len(res) != 1 || res[0].Explain == nil {
		t.Fatalf("results %v", res)
	}
	e := res[0].Explain
	if e.Rank != index.RankBest || strings.Join(e.Names, ",") != "NOTES" ||
		strings.Join(e.Words["path"], ",") != "note,lisbon" || strings.Join(e.Words["task"], ",") != "plan" ||
		strings.Join(e.Words["apps"], ",") != "note" || e.Similarity == nil || *e.Similarity != 1 || e.Keyword <= 0 {
		t.Errorf("explain %+v (similarity %v)", e, e.Similarity)
	}
	if res := best(t, x, index.Query{Text: "lisbon"}); res[0].Explain != nil {
		t.Error("explain without asking")
	}
	seed := query(t, x, index.Query{Text: "lisbon md", Explain: true, Rank: index.RankSeed})
	if len(seed) != 1 || seed[0].Explain == nil || seed[0].Explain.Rank != index.RankSeed || seed[0].Explain.Keyword != 2 ||
		strings.Join(seed[0].Explain.Words["any"], ",") != "LISBON,MD" {
		t.Errorf("seed explain %+v", seed[0].Explain)
	}
}

// TestBestUnknownRank: a rank that does not exist is KindInvalid.
func TestBestUnknownRank(t *testing.T) {
	x := openIndex(t, t.TempDir(), index.Options{})
	_, err := x.Query(t.Context(), index.Query{Text: "a", Rank: "fancy"})
	if index.KindOf(err) != index.KindInvalid {
		t.Fatalf("rank fancy: %v", err)
	}
}

// TestBestMeaningBreaksTies: among files matching the same words, the file
// closest in meaning ranks first, and no file shows a score of 0; a query
// whose words hit nothing still returns the closest file when it stands out,
// even under the model's threshold.
func TestBestMeaningBreaksTies(t *testing.T) {
	x := openIndex(t, t.TempDir(), index.Options{})
	r := rand.New(rand.NewSource(1))
	vecs := make([]*index.Vector, 40)
	for i := range 40 {
		p := fmt.Sprintf("misc/file%02d.txt", i)
		mustCreate(t, x, p, "shell", uint64(i+1))
		// "report" is a common word: every other file has it.
		task := "weekly chores"
		if i%2 == 0 {
			task = "old report"
		}
		vecs[i] = vec4(-1-r.Float32(), r.Float32(), r.Float32()-0.5, r.Float32()-0.5)
		mustTag(t, x, p, task, nil, vecs[i])
	}
	mustCreate(t, x, "notes/restaurants.md", "notes", 100)
	mustTag(t, x, "notes/restaurants.md", "tascas and seafood in alfama", nil, vec4(1, 0.2, 0, 0))

	qv := vec4(-1, 0.5, 0.2, 0)
	closest, top := "", -1.0
	for i := 0; i < 40; i += 2 { // the "report" files
		p := fmt.Sprintf("misc/file%02d.txt", i)
		if s := index.Similarity(qv.Values, vecs[i].Values); s > top {
			closest, top = p, s
		}
	}
	res := best(t, x, index.Query{Text: "report about good places to eat", Vector: qv, Limit: 5})
	if len(res) == 0 || res[0].Path != closest {
		t.Errorf("meaning should break the tie of the report files (closest %s): %v", closest, scores(res))
	}
	for _, r := range res {
		if r.Score < 0.001 {
			t.Errorf("a returned file shows score %.3f: %v", r.Score, scores(res))
		}
	}
	// Threshold 0.5 for test-4d: a query at cosine ~0.45 from its closest file,
	// far from every other, still gets that file.
	res = best(t, x, index.Query{Text: "zzzz qqqq", Vector: vec4(0.45, 0, 0.89, 0), Limit: 3})
	if len(res) == 0 || res[0].Path != "notes/restaurants.md" || res[0].Score < 0.001 {
		t.Errorf("no empty answer (nor a score of 0) when the closest file stands out: %v", scores(res))
	}
	// A lone file found by meaning: no spread to scale by, still not 0.
	lone := openIndex(t, t.TempDir(), index.Options{})
	mustCreate(t, lone, "notes/only.md", "notes", 1)
	mustTag(t, lone, "notes/only.md", "tascas", nil, vec4(1, 0, 0, 0))
	if res := best(t, lone, index.Query{Vector: vec4(1, 0.2, 0, 0)}); len(res) != 1 || res[0].Score < 0.001 {
		t.Errorf("lone file by meaning: %v", scores(res))
	}
	// The seed's rule gives nothing there: no word hits, nothing over the threshold.
	if res := query(t, x, index.Query{Text: "zzzz qqqq", Vector: vec4(0.45, 0, 0.89, 0), Rank: index.RankSeed}); len(res) != 0 {
		t.Errorf("seed: %v", scores(res))
	}
}

// TestBestMiniLMClientVectors: client-supplied all-MiniLM-L6-v2 vectors
// (threshold 0.2) in the best mode: every file at or above the threshold is
// returned, in cosine order, before any other.
func TestBestMiniLMClientVectors(t *testing.T) {
	ref := embedtest.LoadMiniLMRef(t)
	x := openIndex(t, t.TempDir(), index.Options{})
	q := ref.Items[0]
	type want struct {
		path string
		cos  float64
	}
	var wants []want
	for _, it := range ref.Items[1:] {
		p := "docs/" + it.Group + "/" + it.ID
		mustTag(t, x, p, it.Title, nil, &index.Vector{Model: embed.MiniLM.Name, Values: it.Vector})
		if c := cosine64(q.Vector, it.Vector); c >= embed.MiniLM.Threshold {
			wants = append(wants, want{p, c})
		}
	}
	sort.Slice(wants, func(i, j int) bool { return wants[i].cos > wants[j].cos })
	got := best(t, x, index.Query{Vector: &index.Vector{Model: embed.MiniLM.Name, Values: q.Vector}, Explain: true})
	if len(got) < len(wants) || len(wants) == 0 {
		t.Fatalf("%d results, want at least %d", len(got), len(wants))
	}
	for i, w := range wants {
		g := got[i]
		if g.Path != w.path || g.Explain.Similarity == nil || math.Abs(*g.Explain.Similarity-w.cos) > 1e-5 {
			t.Errorf("rank %d: %s, want %s %.6f", i, g.Path, w.path, w.cos)
		}
	}
	// With text too, the words lead and the vectors break ties: the query's
	// group is in the top 3.
	got = best(t, x, index.Query{Text: q.Title, Vector: &index.Vector{Model: embed.MiniLM.Name, Values: q.Vector}, Limit: 3})
	if !slices.ContainsFunc(got, func(r index.Result) bool { return strings.HasPrefix(r.Path, "docs/"+q.Group+"/") }) {
		t.Errorf("text %q (group %s) + MiniLM vector: %v", q.Title, q.Group, scores(got))
	}
}
