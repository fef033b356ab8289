package index_test

import (
	"fmt"
	"testing"

	"github.com/semfs/semfs/index"
)

func zzRun(t *testing.T, q string, paths ...string) {
	x := indexOfPaths(t, paths...)
	res := best(t, x, index.Query{Text: q, Explain: true})
	fmt.Printf("== %q\n", q)
	for i, r := range res {
		fmt.Printf("  %d %-60s score %.3f kw %.3f words %v names %v\n", i+1, r.Path, r.Score, r.Explain.Keyword, r.Explain.Words, r.Explain.Names)
	}
}

func TestZZ(t *testing.T) {
	fill := []string{"misc/a.txt", "misc/b.txt", "misc/c.txt", "misc/d.txt", "misc/e.txt", "misc/f.txt"}
	w := func(p ...string) []string { return append(p, fill...) }
	zzRun(t, "caledonia v1", w("choir/scores/Caledonia_arr_FM.mscz", "work/jobs/calc_foundations_rev1.ods", "choir/scores/Caledonia_arr_FM_v2.pdf")...)
	zzRun(t, "cashflow forecast q2", w("finance/cashflow_forecast_2026.xlsx", "zotero/storage/ZQ2M8K4R/Orebro kommun.pdf", "finance/forecast_q3.xlsx")...)
	zzRun(t, "proof we're insured", w("Insurance/PI_policy_2025.pdf", "Insurance/WorkCover letter.pdf", "Insurance/Medibank policy.pdf", "corro/email re mulch.eml")...)
	zzRun(t, "what i'm going to say in my vows", w("wedding/vows_draft.md", "music/first_dance.m3u", "music/idea.m4a", "music/idea2.m4a")...)
	zzRun(t, "rollbook dump may 9", w("rollbook/dumps/rollbook_2026-05-01.sql", "rollbook/dumps/rollbook_2026-05-09.sql")...)
	zzRun(t, "ep7 final master", w("Sessions/AltLine_ep41/AltLine_ep41_final_master.mp3", "Sessions/LedgerLace_ep07/LL07_final_master.mp3")...)
	zzRun(t, "kochi flight e-ticket", w("calendar/Kerala flights.ics", "travel/Fort_Kochi_homestay.pdf", "mail/EK_eticket_MEHTA.pdf")...)
	zzRun(t, "kochi flight eticket", w("calendar/Kerala flights.ics", "travel/Fort_Kochi_homestay.pdf", "mail/EK_eticket_MEHTA.pdf")...)
	zzRun(t, "under 14s photo", w("Footy/U14 2025/end of season photo.jpg", "Zoom/2026-06-16 14.00 Raman's Meeting/photo.jpg")...)
	zzRun(t, ".zshrc", w("code/dotfiles/.zshrc", "code/dotfiles/zshrc.bak", "code/dotfiles/zshrc_notes.md")...)
	zzRun(t, "nigeria q&a", w("Film/Fade_QandA_notes.md", "Film/grant_report_Q2_2026.docx", "finance/quarterly_plan.md")...)
}
