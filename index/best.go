package index

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search/query"
	index "github.com/blevesearch/bleve_index_api"
)

// The best rank (RankBest, the default). For a query with analysed words T
// (words.go), whitespace-separated words W and, when there is a query vector,
// the clamped cosine sim(f) of each file f:
//
//	kw(f)    = Σ_{t∈T matched by f} idf(t)·m(t,f) / Σ_{t∈T} idf(t)                in [0,1]
//	m(t,f)   = p + (1−p)·bm25(t,f)/max_g bm25(t,g)    t a word of f or a word's start
//	         = p                                       t a month only inside a compact date
//	         = h·p                                     t only inside a longer word of f
//	sem(f)   = (1−δ)·clamp((sim(f) − mean sim)/(max sim − mean sim), 0, 1) + δ·sim(f)   in [0,1]
//	         for f with kw(f) > 0 and no vector: the mean sem of the files with kw > 0 and one
//	λ        = λtie + λrescue·max(0, 1 − max_g kw(g)/κ)
//	apps(f)  = |{w in W : w equals f's creator or a related app}|
//	paths(f) = |{w in W : w equals f's full path or basename, with or without extension}|
//	score(f) = kw(f) + λ·sem(f) + (λ + b)·apps(f) + ε·paths(f)
//	         raised to λ + μ + ε·score(f) when apps(f) + paths(f) > 0 and it is below
//
// bm25(t,f) is Bleve's BM25 score of term t (exact token, or token prefix when t
// has prefixMin runes or more, or one of t's other forms at half weight: a
// month's abbreviation and dated number, two adjacent words joined, a kind's
// extensions, a short form, a relative year or season, an ordinal's version,
// a number word's digits, a number's zero-padded forms (3: 03, 003…), a
// day's eight digits (2026-11-18: 20261118), as
// queryTerms.forms lists them; a qualifier's forms count only for files other
// terms found) over the path, task and apps fields with their boosts;
// idf(t) = ln(1 + (N − df + ½)/(df + ½))^γ counts a term found nowhere as
// the rarest. With p = 0.9, kw is first the IDF-weighted coverage of the
// query's informative words, and only then how strongly each matches. A word of
// W that analyses to several terms ("v2.2.1", "invoice_8841") is one unit: a
// file holding it as written (a case-insensitive substring of a field, the
// seed's test) gets its terms' whole share, a file holding them apart half of
// what they earn. A directory's name is one of the path's words, weighted by
// its rarity like any other, never a name of the file (issue 27). A term of
// prefixMin runes or more that f holds only inside a longer word ("sitter" in
// babysitter, "list" in prislista: compounds and words glued together, the
// seed's substring test) earns h = infixShare of a match; such files are
// looked for among the other evidence's files, or among all files when no
// file holds any of the query's terms as a word (infixEvidence).
//
// Meaning weighs λ: within a coverage band (λtie) when some file covers κ of
// the query's words or more, rising to λtie + λrescue as the best coverage
// falls to nothing (the calibration set λrescue to 0: a rescue cost the
// package set and partial keywords more than it gave paraphrases; see
// BENCHMARKS.md), so it cannot drag a file below one covering more of the
// query's words by more than λ. A word-matched file without a vector (only
// tagged files are embedded: most of a real tree has none) takes the mean
// meaning of the word-matched files that have one: a missing vector is no
// evidence, and scored 0 it sank below every tagged match of equal words.
// sem keeps a share δ of the raw cosine, so a file returned for its meaning
// alone never scores 0.
// A name hit raises the file above λ + μ, more than meaning alone can give
// (λ·sem ≤ λ; stop words give no kw when the query has other words), so a
// file whose app, basename or path equals a query word ranks above every file
// matched by meaning or by stop words alone; an app hit adds λ + b, more than
// meaning and strength (at most 1 − p) can separate two files of equal
// coverage, so the app's files rank above other apps' files with the same
// coverage (the seed's promise, stated precisely). Results are ordered by
// score, then name hits, then similarity, then path. Returned: files with a
// keyword or name hit, and files whose similarity reaches the model's
// threshold or stands out (z-score >= zStandOut among all files): a query
// whose words hit nothing still gets its closest files.
const (
	prefixMin   = 4   // shorter words match whole tokens only
	prefixBoost = 0.5 // a prefix hit is worth less than the whole token
	zStandOut   = 2.5
	kwMax       = 1000 // per word, the best files Bleve returns
	presence    = 0.9  // p: share of a word's kw that any match of it earns
	semRaw      = 0.1  // δ: share of sem that is the raw cosine
	nameBonus   = 0.11 // b: an app hit beyond λ, more than 1 − p (the most strength adds)
	nameMargin  = 0.01 // μ: a name hit's floor beyond λ, the most meaning alone gives
	nameTie     = 0.05 // ε: a path's name hit, a tie-break
	scattered   = 0.5  // share of a several-term word's kw its terms earn apart
	idfPower    = 0.75 // γ: a rarer word weighs more, but not by BM25's whole ratio
)

// idf is a term's weight among the query's, for a term df of n files hold:
// BM25's idf raised to γ. With γ = 1 a word twenty times rarer than another
// outweighed it two to three times over, so the file holding the rare word
// of a query ("payment") beat the file holding the word the query is about
// ("roof", in many of a flat's files) by more than meaning could say
// otherwise. Of 1, 0.85, 0.75, 0.65 and 0.5, γ = 0.75 scored best over the
// dev sets (0.5 tied it, but put one class below the seed's rule);
// docs/benchmarks-history.md has the curve.
func idf(n, df float64) float64 {
	return math.Pow(math.Log(1+(n-df+0.5)/(df+0.5)), idfPower)
}

// The calibrated weights of meaning (λtie, λrescue, κ above; Query.Fusion
// overrides them; BENCHMARKS.md has the calibration curve).
const (
	fusionTie    = 0.1
	fusionRescue = 0
	fusionWeak   = 0.25
)

// lambda is the weight of meaning for a query whose best-covered file has kw
// kwTop: Tie, plus Rescue scaled by how far kwTop falls short of Weak.
func (fu Fusion) lambda(kwTop float64) float64 {
	if fu.Weak <= 0 || kwTop >= fu.Weak {
		return fu.Tie
	}
	return fu.Tie + fu.Rescue*(1-max(0, kwTop)/fu.Weak)
}

type bestCand struct {
	slot  int
	names int // query words equal to one of the file's own names
	apps  int // those equal to its creator or a related app
	word  int // 1 + the index in queryTerms.nameWords of the last word counted
	kw    float64
	sim   float64
	has   bool // sim is known
	score float64
	csim  float64 // the best passage's cosine (chas: known)
	chas  bool
	hit   int    // 1 + its index in the content hits, 0: none
	terms uint64 // bit i: term i (one infixEvidence counts) found, as a word or inside one
}

func (x *Index) queryBest(ctx context.Context, q Query) ([]Result, error) {
	var qv []float32
	var model string
	hasWords := len(strings.Fields(q.Text)) > 0
	switch {
	case q.Vector != nil:
		if err := x.checkClientVector("query", "", q.Vector); err != nil {
			return nil, err
		}
		qv, model = q.Vector.Values, q.Vector.Model
	case x.emb != nil && hasWords:
		v, err := x.embedOne(ctx, q.Text)
		if err != nil {
			return nil, ioErr("query", "", err)
		}
		qv, model = v, x.emb.Name()
	}
	if !hasWords && qv == nil {
		return nil, errorf("query", KindInvalid, "", fmt.Errorf("%w: no words and no vector", ErrInvalidQuery))
	}
	threshold := x.models[model].Threshold
	var chits []ContentHit
	switch q.Scope {
	case ScopeAll:
		if q.Contents != nil && hasWords {
			// Before the lock: the source checks files as the caller.
			var err error
			if chits, err = q.Contents.Evidence(ctx, q.Text, qv, model, threshold); err != nil {
				return nil, ioErr("query", "", err)
			}
		}
	case ScopeTags:
	default:
		return nil, errorf("query", KindInvalid, "", fmt.Errorf("%w: scope %q: want %q or %q (the default)", ErrInvalidQuery, q.Scope, ScopeTags, "all"))
	}
	res, from, err := x.rankBest(ctx, q, qv, model, threshold, chits)
	if err != nil || len(chits) == 0 {
		return res, err
	}
	// After the lock, and only for the answer's files: their passages' text,
	// read as the caller.
	var read []*ContentHit
	for _, h := range from {
		if h > 0 {
			read = append(read, &chits[h-1])
		}
	}
	if err := q.Contents.Read(ctx, q.Text, read); err != nil {
		return nil, ioErr("query", "", err)
	}
	for i, h := range from {
		if h > 0 {
			res[i].Passages = chits[h-1].Passages
		}
	}
	return res, nil
}

// rankBest is the best rank's answer to q under the index's read lock, given
// the query's vector qv of model and its content evidence chits; from[i] is
// 1 + the index in chits of res[i]'s content hit, 0 for none (its passages'
// text is not read yet).
func (x *Index) rankBest(ctx context.Context, q Query, qv []float32, model string, threshold float64, chits []ContentHit) (res []Result, from []int, err error) {
	x.flushBleve()
	x.mu.RLock()
	if x.degraded != nil && !x.closed {
		// Bleve failed mid-run, so its word fields are stale until the next
		// Open rebuilds them: answer with the seed's exhaustive scan meanwhile.
		x.mu.RUnlock()
		res, err := x.querySeed(ctx, q)
		return res, nil, err
	}
	defer x.mu.RUnlock()
	if x.closed {
		return nil, nil, errorf("query", KindClosed, "", ErrClosed)
	}
	im := x.bl.Mapping()
	now := q.Now
	if now.IsZero() {
		now = time.Now()
	}
	qt := analyseQuery(im.AnalyzerNamed(splitAnalyzer), im.AnalyzerNamed(queryAnalyzer), q.Text, now)

	var set *vecSet
	if qv != nil {
		set = x.vecs[model]
	}
	// Large sets with a limit: the keyword and name candidates get their exact
	// similarity lazily, best possible score first (pruned below).
	lazy := set != nil && set.len() > exactMax && q.Limit > 0
	k := 0
	if set != nil {
		k = max(q.Limit, 50)
		if q.Limit <= 0 {
			k = set.len() // every match: every file at or above the threshold
		}
	}
	pathOf := func(slot int) string { return x.hay.entries[slot].path }
	// A lazy scan needs no candidates, so it runs beside the word searches:
	// on a second core the query waits for the longer of the two, not both.
	var sc scanResult
	var scanned chan struct{}
	var scanErr error
	if lazy {
		scanned = make(chan struct{})
		go func() {
			defer close(scanned)
			defer recoverTo(&scanErr) // the caller's recover cannot see this goroutine
			sc = set.scan(qv, nil, pathOf, k)
		}()
	}

	cands := x.newCands()
	defer x.freeCands(&cands)
	get := cands.get
	x.nameEvidence(qt, get)
	var inContents map[string]bool // the query's words the caller's readable files hold
	for _, h := range chits {
		for _, t := range h.Terms {
			if inContents == nil {
				inContents = map[string]bool{}
			}
			inContents[t] = true
		}
	}
	shares, err := x.keywordEvidence(ctx, qt, &cands, inContents)
	// Words found nowhere as words: the files holding one inside a longer
	// word are found now, so that meaning weighs them too.
	wordsFound := slices.ContainsFunc(shares, func(s termShare) bool { return s.found })
	if err == nil && !wordsFound {
		err = x.infixEvidence(ctx, qt, shares, &cands, true)
	}
	if scanned != nil {
		<-scanned // x.mu is held until the scan is done with the set
		err = errors.Join(err, scanErr)
	}
	if err != nil {
		return nil, nil, ioErr("query", "", err)
	}
	cLo, cHi := x.contentEvidence(chits, &cands, threshold)

	var semHi, semLo float64
	if set != nil && set.len() > 0 {
		if !lazy {
			slots := make([]int, 0, len(cands.list))
			for _, c := range cands.list {
				slots = append(slots, c.slot)
			}
			sc = set.scan(qv, slots, pathOf, k)
		}
		semLo, semHi = sc.mean, sc.max
		for slot, s := range sc.known {
			if c := cands.find(slot); c != nil {
				c.sim, c.has = s, true
			}
		}
		for _, t := range sc.top {
			if c := cands.find(t.slot); c != nil {
				c.sim, c.has = t.sim, true // a candidate already: its exact similarity
			} else if t.sim >= threshold || (sc.std > 0 && (t.sim-sc.mean)/sc.std >= zStandOut) {
				c := get(t.slot)
				c.sim, c.has = t.sim, true
			}
		}
	}
	if wordsFound {
		// Only among the files words, names, contents or meaning found: on
		// the dev sets, searching every file for a word inside longer words
		// brought a paraphrase's common words' look-alikes above its answer.
		if err := x.infixEvidence(ctx, qt, shares, &cands, false); err != nil {
			return nil, nil, ioErr("query", "", err)
		}
	}
	semOf := func(c *bestCand) float64 {
		switch {
		case !c.has:
			return 0
		case semHi <= semLo:
			return c.sim // no spread to scale by: the cosine itself
		}
		return (1-semRaw)*math.Min(1, math.Max(0, (c.sim-semLo)/(semHi-semLo))) + semRaw*c.sim
	}
	// A file matched by words but without a vector (most of a real tree:
	// few apps tag, and only tagged files are embedded) has no meaning to
	// weigh, which is no evidence against it: it takes the mean sem of the
	// word-matched files whose similarity is known, so meaning reorders the
	// files with vectors around it instead of sinking it below all of them.
	// (A lazy scan knows the similarity of the closest k files only: the
	// mean is theirs, an upper side; a pending file's bound, sem 1, holds.)
	var missing float64
	known := 0
	for i := range cands.list {
		if c := &cands.list[i]; c.has && c.kw > 0 {
			missing += semOf(c)
			known++
		}
	}
	if known > 0 {
		missing /= float64(known)
	}
	tagSem := semOf
	semOf = func(c *bestCand) float64 {
		s := tagSem(c)
		if !c.has && c.kw > 0 {
			s = missing
		}
		return max(s, contentSem(c, cLo, cHi))
	}
	lambda := 0.0 // keyword-only: no meaning to weigh
	if set != nil || cHi > 0 {
		fu := Fusion{Tie: fusionTie, Rescue: fusionRescue, Weak: fusionWeak}
		if q.Fusion != nil {
			fu = *q.Fusion
		}
		kwTop := 0.0
		for i := range cands.list {
			kwTop = max(kwTop, cands.list[i].kw)
		}
		lambda = fu.lambda(kwTop)
	}
	scoreOf := func(c *bestCand, sem float64) {
		c.score = c.kw + lambda*sem + (lambda+nameBonus)*float64(c.apps) + nameTie*float64(c.names-c.apps)
		if c.names > 0 {
			c.score = max(c.score, lambda+nameMargin+nameTie*c.score)
		}
	}
	// No more candidates from here: pointers into cands.list stay valid.
	hits := make([]*bestCand, 0, len(cands.list))
	var pending []*bestCand
	for i := range cands.list {
		c := &cands.list[i]
		if lazy && !c.has {
			scoreOf(c, 1) // an upper bound: the score is monotone in sem
			pending = append(pending, c)
			continue
		}
		scoreOf(c, semOf(c))
		hits = append(hits, c)
	}
	if len(pending) > 0 {
		// Threshold pruning: once limit files score at least a pending file's
		// bound, it and every later one can only rank below them.
		sort.Slice(pending, func(i, j int) bool { return pending[i].score > pending[j].score })
		var kept minScores
		for _, c := range hits {
			kept.offer(c.score, q.Limit)
		}
		nq := norm(qv)
		// Each record's vector by slot (1 + its index, 0: none): hashing the
		// paths of thousands of pending files cost more than this pass.
		vecOf := make([]int32, x.hay.len())
		for i, slot := range set.slots {
			vecOf[slot] = int32(i + 1)
		}
		for _, c := range pending {
			if len(kept) == q.Limit && c.score < kept[0] {
				break
			}
			if i := int(vecOf[c.slot]) - 1; i >= 0 {
				c.sim, c.has = similarity(dot(qv, set.vector(i)), nq, set.norms[i]), true
			}
			scoreOf(c, semOf(c))
			kept.offer(c.score, q.Limit)
			hits = append(hits, c)
		}
	}
	better := func(a, b *bestCand) bool {
		if a.score != b.score {
			return a.score > b.score
		}
		if a.names != b.names {
			return a.names > b.names
		}
		if a.sim != b.sim {
			return a.sim > b.sim // files beyond the semantic scale still go closest first
		}
		return x.hay.entries[a.slot].path < x.hay.entries[b.slot].path
	}
	if q.Limit > 0 && len(hits) > q.Limit {
		// A busy name brings thousands of hits: keep the best limit of them
		// (the order is total, so these are the first limit of a full sort).
		hits = bestOf(hits, q.Limit, better)
	}
	sort.Slice(hits, func(i, j int) bool { return better(hits[i], hits[j]) })

	res = make([]Result, len(hits))
	from = make([]int, len(hits))
	err = x.view("query", "", func(tx txn) error {
		for i, h := range hits {
			p := x.hay.entries[h.slot].path
			s, ok, err := getRecord(tx.Tx, p)
			if err != nil {
				return fmt.Errorf("record %q: %w", p, err)
			}
			if !ok {
				return fmt.Errorf("record %q indexed but not stored", p)
			}
			res[i] = Result{Record: s.record(p), Score: h.score}
			from[i] = h.hit
			if q.Explain {
				res[i].Explain = x.explainBest(qt, shares, res[i].Record, h, semOf(h))
			}
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return res, from, nil
}

// termShare is what a query's term is worth: its share of kw, and whether
// some file holds it as a word or a word's start (Bleve found it).
type termShare struct {
	share float64  // idf(t)/Σ idf
	found bool     // some file holds it as a word, a word's start or a form
	near  []string // the words a typo away that stood for it (searchNear)
}

// keywordEvidence adds to each file Bleve finds its kw share (see the formula
// above): one BM25 search per analysed word. It returns each term's
// termShare, for infixEvidence. A word no file's tags hold is looked for as
// the words a typo away (searchNear) unless inContents holds it: a word the
// caller's files hold in their contents is no typo, and its look-alikes in
// names are no evidence (nor worth the automaton). Precondition: x.mu held
// for reading.
func (x *Index) keywordEvidence(ctx context.Context, qt queryTerms, cands *candSet, inContents map[string]bool) ([]termShare, error) {
	get := cands.get
	if len(qt.terms) == 0 {
		return nil, nil
	}
	total, err := x.bl.DocCount()
	if err != nil || total == 0 {
		return nil, err
	}
	n := float64(total)
	rarest := idf(n, 0)
	var sumIDF float64
	type termHits struct {
		idf    float64
		best   float64
		scores []slotSim // by slot, Bleve's BM25 score
	}
	// One search per word, all at once (Bleve's index serves concurrent
	// searches); their results are summed in word order below, so the sums
	// do not depend on which finishes first.
	results := make([]*bleve.SearchResult, len(qt.terms))
	// byWord[i], for a term with forms that count only where they stand as
	// the form means (placedForms: a month's number, a digit's padding, a
	// form of several tokens), is the files that hold it otherwise; the
	// others count only where such a form fits.
	byWord := make([]map[string]bool, len(qt.terms))
	errs := make([]error, len(qt.terms))
	near := make([][]string, len(qt.terms)) // results[i] is of these words, a typo away from term i
	memo := &dictMemo{}
	var wg sync.WaitGroup
	for i, t := range qt.terms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer recoverTo(&errs[i])
			forms := qt.forms[t]
			results[i], errs[i] = x.searchWord(ctx, memo, t, forms)
			if errs[i] == nil && results[i].Total == 0 && !inContents[t] {
				// Found nowhere: a typo's, or a cognate's, words.
				var nr *bleve.SearchResult
				var words []string
				if nr, words, errs[i] = x.searchNear(ctx, memo, t); nr != nil && nr.Total > 0 {
					results[i], near[i] = nr, words
				}
			}
			if placed, _ := qt.placedForms(t); len(placed) > 0 && errs[i] == nil {
				var words *bleve.SearchResult
				words, errs[i] = x.searchWord(ctx, memo, t, slices.DeleteFunc(slices.Clone(forms), func(f string) bool { return slices.Contains(placed, f) }))
				if errs[i] == nil {
					byWord[i] = make(map[string]bool, len(words.Hits))
					for _, h := range words.Hits {
						byWord[i][h.ID] = true
					}
				}
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	per := make([]termHits, len(results))
	for i, res := range results {
		df := float64(res.Total)
		if df == 0 {
			per[i].idf = rarest // a word found nowhere: every file misses it
			sumIDF += rarest
			continue
		}
		th := termHits{scores: make([]slotSim, 0, len(res.Hits))}
		_, fits := qt.placedForms(qt.terms[i])
		for _, h := range res.Hits {
			slot, ok := x.hay.pos[h.ID]
			if !ok {
				continue
			}
			if byWord[i] != nil && !byWord[i][h.ID] && !fits(x.hay.entries[slot].joined) {
				df-- // its month's number is a day's, its padded digit a date's, its form's tokens apart
				continue
			}
			th.scores = append(th.scores, slotSim{slot, h.Score})
			th.best = max(th.best, h.Score)
		}
		df = max(df, 1)
		th.idf = idf(n, df)
		sumIDF += th.idf
		per[i] = th
	}
	inGroup := make([]bool, len(per))
	for _, g := range qt.groups {
		for _, t := range g.terms {
			inGroup[t] = true
		}
	}
	// contrib adds term i's kw to each file it matched, through add.
	contrib := func(i int, add func(slot int, v float64)) {
		th := per[i]
		if th.best <= 0 {
			return
		}
		w := 1.0
		if near[i] != nil {
			w = nearShare
		}
		for _, h := range th.scores {
			add(h.slot, w*th.idf*(presence+(1-presence)*h.sim/th.best)/sumIDF)
		}
	}
	for i := range per {
		if !inGroup[i] && !qt.qualifier(i) {
			// bestCand.terms marks the terms infixEvidence counts (the first
			// 64 selecting words: infixTerm); a group's terms and a
			// qualifier are not among them.
			var bit uint64
			if i < 64 {
				bit = 1 << i
			}
			contrib(i, func(slot int, v float64) { c := get(slot); c.kw += v; c.terms |= bit })
		}
	}
	// A word of several tokens ("v2.2.1", "invoice_8841", "OKRs") is worth
	// its tokens' whole share to a file that holds it as written (a
	// case-insensitive substring of a field, the seed's test; a day also as
	// names write it, 2026-11-18 as 20261118) and half of
	// what its tokens earn to one that holds them apart ("v2.1.1").
	// Every group's files first, so that the literal test below sees each
	// candidate whichever group brought it.
	aparts := make([]map[int]float64, len(qt.groups))
	for gi, g := range qt.groups {
		aparts[gi] = map[int]float64{}
		for _, t := range g.terms {
			contrib(t, func(slot int, v float64) { aparts[gi][slot] += v })
		}
		for slot := range aparts[gi] {
			get(slot)
		}
	}
	for gi, g := range qt.groups {
		var whole float64
		for _, t := range g.terms {
			whole += per[t].idf / sumIDF
		}
		for i := range cands.list {
			c := &cands.list[i]
			if j := x.hay.entries[c.slot].joined; strings.Contains(j, g.literal) || g.also != "" && strings.Contains(j, g.also) ||
				slices.ContainsFunc(g.spellings, func(s string) bool { return strings.Contains(j, s) }) {
				c.kw += whole
			} else {
				c.kw += scattered * aparts[gi][c.slot]
			}
		}
	}
	// A qualifier ("this year") only tells apart the files the query's
	// other words or names found: being dated this year is no answer alone.
	for i := range per {
		if qt.qualifier(i) && !inGroup[i] {
			contrib(i, func(slot int, v float64) {
				if cands.find(slot) != nil || len(qt.terms) == 1 {
					get(slot).kw += v
				}
			})
		}
	}
	shares := make([]termShare, len(per))
	for i := range per {
		shares[i] = termShare{per[i].idf / sumIDF, per[i].best > 0 && near[i] == nil, near[i]}
	}
	return shares, nil
}

// infixShare is the share of a term's kw a file earns that holds it only
// inside a longer word ("sitter" in babysitter_notes.md, "list" in
// prislista.pdf): less than a word of its own, as "shots" in screenshots
// is seldom what a query for shots means.
const infixShare = 0.5

// nearShare is the share of a term's kw a file earns that holds only a word
// a typo away from it (searchNear: "statment" and statement, or a cognate,
// "notary" and notaire): a guess, worth less than the word itself.
const nearShare = 0.5

// infixTerm says whether the query's term i counts inside longer words: a
// selecting word (not a qualifier nor part of a word of several terms,
// which the literal test serves) of prefixMin runes or more that is not a
// stop word, among the first 64 (bestCand.terms).
func (qt queryTerms) infixTerm(i int) bool {
	return i < 64 && !qt.qualifier(i) && utf8.RuneCountInString(qt.terms[i]) >= prefixMin && !stopWords[qt.terms[i]] &&
		!slices.ContainsFunc(qt.groups, func(g termGroup) bool { return slices.Contains(g.terms, i) })
}

// infixEvidence gives each file that holds one of the query's terms inside a
// longer word, not as a word of its own or a word's start (which Bleve found),
// infixShare of that term's share (shares[i]): the seed's substring test, for
// compounds ("babysitter", Swedish "prislista") and words glued together. A
// month's term is held by a compact date of that month (compactDated:
// IMG_20250614_…), which no token of Bleve's shows, and earns its whole
// share there: the date is the month as the name writes it, not a look-alike
// (on the dev sets, half a share ranked a video under 2024-03/ above
// VID-20260314 for "video march 2026": mixed +0.01–0.06 nDCG@5). The files
// are cands' and, with discover, every file that holds an infix term, found as
// the seed finds a word's (the trigram field, then the substring test).
// Precondition: x.mu held for reading.
func (x *Index) infixEvidence(ctx context.Context, qt queryTerms, shares []termShare, cands *candSet, discover bool) error {
	for i, t := range qt.terms {
		if i >= len(shares) {
			continue
		}
		infix, lit := qt.infixTerm(i), fold(t)
		if !infix && !qt.dateTerm(i) {
			continue
		}
		// add tests one file; dates: its compact dates too (candidates only:
		// the discovery finds what holds lit, whatever the planner reads).
		add := func(slot int, dates bool) {
			if c := cands.find(slot); c != nil && c.terms&(1<<i) != 0 {
				return
			}
			j := x.hay.entries[slot].joined
			dated := dates && qt.inCompactDate(i, j)
			if dated || (infix && holdsInside(j, lit, qt.written[t])) {
				c := cands.get(slot)
				share := presence * shares[i].share
				if !dated {
					share *= infixShare
				}
				c.kw += share
				c.terms |= 1 << i
			}
		}
		for k := range cands.list {
			add(cands.list[k].slot, true)
		}
		if discover && infix {
			if err := x.eachKeywordCandidate(ctx, append([]string{lit}, qt.written[t]...), func(slot int) { add(slot, false) }); err != nil {
				return err
			}
		}
	}
	return nil
}

// dateTerm says whether the query's term i is a month or a day beside one
// (monthNumber, dayOf) that counts where a compact date holds it: a
// selecting term among the first 64 (bestCand.terms).
func (qt queryTerms) dateTerm(i int) bool {
	if i >= 64 || qt.qualifier(i) {
		return false
	}
	t := qt.terms[i]
	return qt.monthNumber[t] != "" || qt.dayOf[t] != ""
}

// inCompactDate says whether the folded fields j hold the query's date term
// i (dateTerm) in a date written without separators: its month
// (compactDated: IMG_20250614_…) or its month and day (compactMonthDay).
// The ranking (infixEvidence) and its explanation both ask it.
func (qt queryTerms) inCompactDate(i int, j string) bool {
	if !qt.dateTerm(i) {
		return false
	}
	t := qt.terms[i]
	mm, md := qt.monthNumber[t], qt.dayOf[t]
	return mm != "" && compactDated(j, mm) || md != "" && compactMonthDay(j, md)
}

// holdsInside says whether the folded fields j hold the folded term lit or
// one of the words written as the query wrote them that stem to it.
func holdsInside(j, lit string, written []string) bool {
	return strings.Contains(j, lit) || slices.ContainsFunc(written, func(w string) bool { return strings.Contains(j, w) })
}

// searchWord is the BM25 search of one analysed word t over the word fields:
// t's own token, when t is long enough the longer tokens it is a prefix of
// at prefixBoost, and the other forms it takes (queryTerms.forms), also at
// prefixBoost. Its dictionary lookups go through memo, the query's.
// Precondition: x.mu held for reading.
func (x *Index) searchWord(ctx context.Context, memo *dictMemo, t string, forms []string) (*bleve.SearchResult, error) {
	q, bound, err := x.wordQuery(memo, t, forms)
	if err != nil {
		return nil, err
	}
	return x.searchAtMost(ctx, q, bound)
}

// wordQuery is searchWord's query, and bound, at least the files it can
// match: the sum of its terms' document counts in Bleve's dictionary (which
// may count files since deleted or updated, never fewer than hold the term).
// Precondition: x.mu held for reading.
func (x *Index) wordQuery(memo *dictMemo, t string, forms []string) (query.Query, uint64, error) {
	var qs []query.Query
	var bound uint64
	// The longer tokens t is a prefix of stand for it. Of a month's name,
	// only where the stem is cut short of any word (septemb: septembre): the
	// others begin other words (juli: julia, julien; march: marchmont).
	prefix := utf8.RuneCountInString(t) >= prefixMin && (monthForms(t) == nil || slices.Contains(monthCutStems, t))
	for _, f := range wordFields {
		tq := bleve.NewTermQuery(t)
		tq.SetField(f.field)
		tq.SetBoost(f.boost)
		qs = append(qs, tq)
		if prefix {
			// Each longer token its own term (a prefix query would read
			// t's own postings a second time).
			longer, n, err := memo.longerTerms(x, f.field, t)
			if err != nil {
				return nil, 0, err
			}
			bound += n
			for _, lt := range longer {
				pq := bleve.NewTermQuery(lt)
				pq.SetField(f.field)
				pq.SetBoost(f.boost * prefixBoost)
				qs = append(qs, pq)
			}
		} else {
			n, err := memo.termCount(x, f.field, t)
			if err != nil {
				return nil, 0, err
			}
			bound += n
		}
	}
	for _, alt := range forms {
		// A form of several tokens ("m 4 a", the extension m4a as the words
		// analysis splits it) is all of them in one field.
		toks := strings.Fields(alt)
		for _, f := range wordFields {
			var all []query.Query
			least := uint64(math.MaxUint64)
			for _, tok := range toks {
				n, err := memo.termCount(x, f.field, tok)
				if err != nil {
					return nil, 0, err
				}
				least = min(least, n)
				aq := bleve.NewTermQuery(tok)
				aq.SetField(f.field)
				aq.SetBoost(f.boost * prefixBoost / float64(len(toks)))
				all = append(all, aq)
			}
			if least == 0 {
				continue // most joined words ("carinsurance") are no file's
			}
			if len(all) == 1 {
				qs = append(qs, all[0])
			} else {
				qs = append(qs, bleve.NewConjunctionQuery(all...))
			}
			bound += least
		}
	}
	return bleve.NewDisjunctionQuery(qs...), bound, nil
}

// searchNear is the BM25 search, over the word fields, of the words a typo
// away from t (nearTerms), for a word no file holds in any form; nil when
// there are none. The near words' document counts are not read (a postings
// read per term, segment and field), so the search is sized for one hit and
// made again at kwMax when more match, as with Bleve's fuzzy dictionary.
// Precondition: x.mu held for reading.
func (x *Index) searchNear(ctx context.Context, memo *dictMemo, t string) (*bleve.SearchResult, []string, error) {
	var qs []query.Query
	var words []string
	for _, f := range wordFields {
		near, err := memo.nearTerms(x, f.field, t)
		if err != nil {
			return nil, nil, err
		}
		for _, nt := range near {
			nq := bleve.NewTermQuery(nt)
			nq.SetField(f.field)
			nq.SetBoost(f.boost)
			qs = append(qs, nq)
			if !slices.Contains(words, nt) {
				words = append(words, nt)
			}
		}
	}
	if len(qs) == 0 {
		return nil, nil, nil
	}
	res, err := x.searchAtMost(ctx, bleve.NewDisjunctionQuery(qs...), 1)
	return res, words, err
}

// searchAtMost returns q's best kwMax hits, asking Bleve for at most bound
// (at least 1): Bleve allocates a match pool of the request's size for every
// search, whatever it finds (a thousand matches for kwMax), so asking for no
// more than can match gives the same hits without it. When more than bound
// match (a batch sent after the bound was counted), Total says so and the
// search is made again at kwMax, as it would have been.
func (x *Index) searchAtMost(ctx context.Context, q query.Query, bound uint64) (*bleve.SearchResult, error) {
	size := int(min(max(bound, 1), kwMax))
	req := bleve.NewSearchRequestOptions(q, size, 0, false)
	res, err := x.bl.SearchInContext(ctx, req)
	if err != nil || size == kwMax || res.Total <= uint64(size) {
		return res, err
	}
	req.Size = kwMax
	return x.bl.SearchInContext(ctx, req)
}

// maxExpansion bounds how many longer tokens one prefix stands for.
const maxExpansion = 64

// longerTerms returns the indexed tokens of field that start with t and are
// longer, at most maxExpansion of them, and the sum of the dictionary's
// document counts of t and of those. Precondition: x.mu held for reading.
func (x *Index) longerTerms(field, t string) ([]string, uint64, error) {
	d, err := x.bl.FieldDictPrefix(field, []byte(t))
	if err != nil {
		return nil, 0, err
	}
	defer d.Close()
	return termsOf(d, t)
}

// termsOf reads dictionary d: its terms other than t, at most maxExpansion
// of them, and the sum of the document counts of all it read.
func termsOf(d index.FieldDict, t string) ([]string, uint64, error) {
	var out []string
	var n uint64
	for len(out) < maxExpansion {
		e, err := d.Next()
		if err != nil || e == nil {
			return out, n, err
		}
		n += e.Count
		if e.Term != t {
			out = append(out, e.Term)
		}
	}
	return out, n, nil
}

// dictMemo makes each of one query's dictionary lookups once. The same ones
// recur within a query: a joined form is a form of both words it joins
// ("time zone": timezone), and a month's word is searched twice. The words'
// searches run at once, so a lookup in flight is waited for, not made again.
// (Each lookup opens an iterator on every segment of Bleve's index, one
// goroutine a segment; under a mixed load they were 4-5 % of the daemon's
// CPU, docs/benchmarks-history.md.)
type dictMemo struct {
	mu sync.Mutex
	m  map[dictKey]*dictLookup
}

type dictKey struct {
	field, t string
	kind     uint8 // lookLonger, lookCount or lookNear
}

const (
	lookCount  = iota // termCount
	lookLonger        // longerTerms
	lookNear          // nearTerms
)

type dictLookup struct {
	once   sync.Once
	longer []string
	n      uint64
	err    error
}

func (m *dictMemo) lookup(k dictKey, look func() ([]string, uint64, error)) ([]string, uint64, error) {
	m.mu.Lock()
	if m.m == nil {
		m.m = map[dictKey]*dictLookup{}
	}
	l := m.m[k]
	if l == nil {
		l = &dictLookup{}
		m.m[k] = l
	}
	m.mu.Unlock()
	l.once.Do(func() { l.longer, l.n, l.err = look() })
	return l.longer, l.n, l.err
}

// longerTerms is x.longerTerms(field, t), looked up once a query.
func (m *dictMemo) longerTerms(x *Index, field, t string) ([]string, uint64, error) {
	return m.lookup(dictKey{field, t, lookLonger}, func() ([]string, uint64, error) { return x.longerTerms(field, t) })
}

// nearTerms is x.nearTerms(field, t), looked up once a query.
func (m *dictMemo) nearTerms(x *Index, field, t string) ([]string, error) {
	near, _, err := m.lookup(dictKey{field, t, lookNear}, func() ([]string, uint64, error) {
		near, err := x.nearTerms(field, t)
		return near, 0, err
	})
	return near, err
}

// termCount is x.termCount(field, t), looked up once a query.
func (m *dictMemo) termCount(x *Index, field, t string) (uint64, error) {
	_, n, err := m.lookup(dictKey{field, t, lookCount}, func() ([]string, uint64, error) {
		n, err := x.termCount(field, t)
		return nil, n, err
	})
	return n, err
}

// termCount is the dictionary's document count of token t in field (0 when
// no file holds it). Precondition: x.mu held for reading.
func (x *Index) termCount(field, t string) (uint64, error) {
	d, err := x.bl.FieldDictPrefix(field, []byte(t))
	if err != nil {
		return 0, err
	}
	defer d.Close()
	// t is the least of the tokens it is a prefix of: the first, if indexed.
	e, err := d.Next()
	if err != nil || e == nil || e.Term != t {
		return 0, err
	}
	return e.Count, nil
}

// nameEvidence counts, for each file, the query's whole words equal to one of
// its own names, and of those the ones equal to its creator or a related app,
// from the exact-name map (hayTable.byName). Precondition: x.mu held for
// reading.
func (x *Index) nameEvidence(qt queryTerms, get func(int) *bestCand) {
	for wi, w := range qt.nameWords {
		for _, slot := range x.hay.byName[w].slots {
			c := get(int(slot))
			if c.word == wi+1 {
				continue // w is both a path's and an app's name of this file: one word, one hit
			}
			c.word = wi + 1
			c.names++
			e := &x.hay.entries[slot]
			if slices.Contains(e.names[e.own:], w) {
				c.apps++
			}
		}
	}
}

// candSet holds the query's candidates in one slice, found by record slot
// through a dense slot index (4 bytes a record per query: cheaper than a map
// and an allocation per candidate when a busy name brings 18k of them).
type candSet struct {
	at   []int32 // by slot: 1 + the candidate's position in list, 0 if none
	list []bestCand
}

// newCands is an empty candSet for the records now: its at from candAt when
// one is long enough. At 100,000 files a new one cost each query 400 KB to
// allocate and clear (under the mixed load, whose writers add 20,000 files
// a minute, the most a query allocated). Precondition: x.mu held for reading.
func (x *Index) newCands() candSet {
	n := x.hay.len()
	if p, _ := x.candAt.Get().(*[]int32); p != nil && cap(*p) >= n {
		return candSet{at: (*p)[:n]}
	}
	return candSet{at: make([]int32, n)}
}

// freeCands zeroes the slots s set and keeps its at for the next query.
func (x *Index) freeCands(s *candSet) {
	for i := range s.list {
		s.at[s.list[i].slot] = 0
	}
	at := s.at[:cap(s.at)]
	x.candAt.Put(&at)
}

// get returns slot's candidate, adding it if new. The pointer is valid until
// the next get.
func (s *candSet) get(slot int) *bestCand {
	if k := s.at[slot]; k > 0 {
		return &s.list[k-1]
	}
	s.list = append(s.list, bestCand{slot: slot})
	s.at[slot] = int32(len(s.list))
	return &s.list[len(s.list)-1]
}

func (s *candSet) find(slot int) *bestCand {
	if k := s.at[slot]; k > 0 {
		return &s.list[k-1]
	}
	return nil
}

// explainBest says which query words matched which field of r (shares:
// keywordEvidence's, for the near words that stood for a term).
func (x *Index) explainBest(qt queryTerms, shares []termShare, r Record, c *bestCand, sem float64) *Explanation {
	e := &Explanation{Rank: RankBest, Keyword: c.kw, Semantic: sem}
	if c.has {
		s := c.sim
		e.Similarity = &s
	}
	if c.names > 0 {
		have := names(r.Path, r.CreatedBy, r.RelatedApps)
		for _, w := range qt.nameWords {
			for _, n := range have {
				if n == w {
					e.Names = append(e.Names, w)
					break
				}
			}
		}
	}
	a := x.bl.Mapping().AnalyzerNamed(wordsAnalyzer)
	fields := map[string]string{
		"path": r.Path,
		"task": r.Task,
		"apps": strings.Join(append([]string{r.CreatedBy}, r.RelatedApps...), " "),
	}
	for name, text := range fields {
		var toks []string
		for _, tok := range a.Analyze([]byte(text)) {
			toks = append(toks, string(tok.Term))
		}
		folded := fold(text)
		for i, t := range qt.terms {
			// A placed form (a month's number, a padded digit, a form of
			// several tokens) counts as the ranking counts it: where it fits.
			placed, fits := qt.placedForms(t)
			hit := qt.infixTerm(i) && holdsInside(folded, fold(t), qt.written[t]) ||
				qt.inCompactDate(i, folded) || fits(folded)
			for _, tok := range toks {
				if hit || tok == t || (utf8.RuneCountInString(t) >= prefixMin && strings.HasPrefix(tok, t)) || (slices.Contains(qt.forms[t], tok) && !slices.Contains(placed, tok)) || (i < len(shares) && slices.Contains(shares[i].near, tok)) {
					hit = true
					break
				}
			}
			if hit {
				if e.Words == nil {
					e.Words = map[string][]string{}
				}
				e.Words[name] = append(e.Words[name], t)
			}
		}
	}
	return e
}

// minScores is a min-heap of the best limit scores seen.
type minScores []float64

func (h *minScores) offer(s float64, limit int) {
	switch {
	case len(*h) < limit:
		heap.Push(h, s)
	case s > (*h)[0]:
		(*h)[0] = s
		heap.Fix(h, 0)
	}
}

func (h minScores) Len() int           { return len(h) }
func (h minScores) Less(i, j int) bool { return h[i] < h[j] }
func (h minScores) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *minScores) Push(x any)        { *h = append(*h, x.(float64)) }
func (h *minScores) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// bestOf returns the k best of cs under the strict total order better, in no
// particular order, by a bounded heap whose root is the worst kept.
func bestOf(cs []*bestCand, k int, better func(a, b *bestCand) bool) []*bestCand {
	h := worstCandFirst{better: better, cs: make([]*bestCand, 0, k)}
	for _, c := range cs {
		switch {
		case len(h.cs) < k:
			heap.Push(&h, c)
		case better(c, h.cs[0]):
			h.cs[0] = c
			heap.Fix(&h, 0)
		}
	}
	return h.cs
}

type worstCandFirst struct {
	better func(a, b *bestCand) bool
	cs     []*bestCand
}

func (h worstCandFirst) Len() int           { return len(h.cs) }
func (h worstCandFirst) Less(i, j int) bool { return h.better(h.cs[j], h.cs[i]) }
func (h worstCandFirst) Swap(i, j int)      { h.cs[i], h.cs[j] = h.cs[j], h.cs[i] }
func (h *worstCandFirst) Push(x any)        { h.cs = append(h.cs, x.(*bestCand)) }
func (h *worstCandFirst) Pop() any {
	x := h.cs[len(h.cs)-1]
	h.cs = h.cs[:len(h.cs)-1]
	return x
}

// recoverTo turns a panic of a query's helper goroutine into an error for the
// query: uncaught there, it would end the daemon instead of one request.
func recoverTo(err *error) {
	if v := recover(); v != nil {
		*err = fmt.Errorf("panic: %v", v)
	}
}

// monthForms returns the other forms a month's name takes in dated paths
// and tags ("2026-02-19", "feb_budget", "oct25"): its abbreviation and its
// two-digit number, last, for t the analysed (stemmed) name of a month (or
// its abbreviation: the name and the number); nil for any
// other t, and for "may", a modal verb more often than a month (findForms gives
// it 05 where mayIsMonth says it is the month).
func monthForms(t string) []string {
	if f := monthNameForms(t); f != nil {
		return f
	}
	// An abbreviation typed in the query ("tfsa dec", "sept invoices") is
	// its month: the full name, the month's other abbreviations ("sept":
	// sep, as TrialBalance_30-Sep-2026 writes it) and the number.
	for _, full := range monthStems {
		if f := monthNameForms(full); f != nil && slices.Contains(f[:len(f)-1], t) {
			return append([]string{full}, slices.DeleteFunc(slices.Clone(f), func(a string) bool { return a == t })...)
		}
	}
	return nil
}

// monthCutStems are the months' stems that are no word of their own: only a
// month's name, in English or another language, goes on from them
// (septembre, octobre), so their longer tokens are that month too.
var monthCutStems = []string{"januari", "februari", "septemb", "octob", "novemb", "decemb"}

// monthStems are the months' names as the query analyser stems them, January
// first; May's is "" (monthForms leaves it to mayIsMonth).
var monthStems = [12]string{"januari", "februari", "march", "april", "", "june", "juli", "august", "septemb", "octob", "novemb", "decemb"}

// MonthShortForms returns the abbreviations the best rank takes a month's
// name to be written as ("september": sep, sept), nil for other words: for
// the evaluation's strict paraphrases (index/eval), as KindExtensions.
func MonthShortForms(word string) []string {
	for i, stem := range monthStems {
		if stem != "" && strings.EqualFold(word, time.Month(i+1).String()) {
			f := monthNameForms(stem)
			return f[:len(f)-1]
		}
	}
	return nil
}

// monthNameForms is monthForms of a month's full name.
func monthNameForms(t string) []string {
	switch t {
	case "januari":
		return []string{"jan", "01"}
	case "februari":
		return []string{"feb", "02"}
	case "march":
		return []string{"mar", "03"}
	case "april":
		return []string{"apr", "04"}
	case "june":
		return []string{"jun", "06"}
	case "juli":
		return []string{"jul", "07"}
	case "august":
		return []string{"aug", "08"}
	case "septemb":
		return []string{"sep", "sept", "09"}
	case "octob":
		return []string{"oct", "10"}
	case "novemb":
		return []string{"nov", "11"}
	case "decemb":
		return []string{"dec", "12"}
	}
	return nil
}

// placedForms is term t's forms that count only where they stand as the
// form means (nil for none), and fits, whether a file's folded fields j
// hold one of them so: a month's number where a date puts a month
// (datedMonth), a digit's zero padding where no date or time does
// (undatedNumber), a form of several tokens with its tokens in a row
// (inARow: "v 2" is v2 or v_2, not a v3 (2) copy; "2026 12" a December,
// not 2026-06-16 14.00.12).
func (q queryTerms) placedForms(t string) (placed []string, fits func(j string) bool) {
	mm, pad := q.monthNumber[t], q.padNumber[t]
	for _, f := range q.forms[t] {
		if f == mm || f == pad || strings.Contains(f, " ") {
			placed = append(placed, f)
		}
	}
	return placed, func(j string) bool {
		for _, f := range placed {
			switch {
			case f == mm && datedMonth(j, f), f == pad && undatedNumber(j, f), strings.Contains(f, " ") && inARow(j, f):
				return true
			}
		}
		return false
	}
}

// inARow says whether the folded fields j hold form's tokens (space-
// separated, as the words analysis gives them) one after the other within
// one field, as the words analysis would cut them: each a whole run of
// letters or of digits, apart by at most three other characters (none
// between a letter and a digit: m4a, v2). Case is ignored (j is folded).
func inARow(j, form string) bool {
	toks := strings.Fields(form)
	if len(toks) == 0 {
		return false
	}
	class := func(b byte) int {
		switch {
		case isDigit(b):
			return 1
		case isLetter(b) || b >= utf8.RuneSelf && b != fieldSep[0]:
			return 2
		}
		return 0
	}
	first := toks[0]
	for k := 0; k+len(first) <= len(j); k++ {
		if !strings.EqualFold(j[k:k+len(first)], first) || k > 0 && class(j[k-1]) == class(first[0]) {
			continue
		}
		pos, ok := k+len(first), true
		for n, tok := range toks[1:] {
			gap := 0
			for pos < len(j) && class(j[pos]) == 0 && j[pos] != fieldSep[0] && gap < 3 {
				pos++
				gap++
			}
			prev := toks[n]
			if gap == 0 && class(prev[len(prev)-1]) == class(tok[0]) || pos+len(tok) > len(j) || !strings.EqualFold(j[pos:pos+len(tok)], tok) {
				ok = false
				break
			}
			pos += len(tok)
		}
		last := toks[len(toks)-1]
		if ok && (pos == len(j) || class(j[pos]) != class(last[len(last)-1])) {
			return true
		}
	}
	return false
}

// undatedNumber says whether the folded fields j hold the number nn as a
// whole run of digits that no separator joins to another run of digits, as
// names number an episode or a chapter (ep09, ch03_solutions, roll 07,
// glued to a word whatever follows) and not as a date or a time writes a
// month, a day or a minute (2025-09-15, 14.09.12).
func undatedNumber(j, nn string) bool {
	return anyAt(j, nn, func(at int) bool {
		end := at + len(nn)
		switch {
		case at > 0 && isDigit(j[at-1]) || end < len(j) && isDigit(j[end]):
			return false // part of a longer number
		case at > 0 && isLetter(j[at-1]):
			return true // glued to a word: a label's number (ep09, SITE04_2025-03-03)
		}
		// Not a date's or a time's.
		return !(at >= 2 && isDateSep(j[at-1]) && isDigit(j[at-2]) || end+1 < len(j) && isDateSep(j[end]) && isDigit(j[end+1]))
	})
}

// anyAt says whether ok holds at some occurrence of s in j (ok is given
// its index).
func anyAt(j, s string, ok func(at int) bool) bool {
	for k := 0; ; {
		at := strings.Index(j[k:], s)
		if at < 0 {
			return false
		}
		at += k
		if ok(at) {
			return true
		}
		k = at + 1
	}
}

// isLetter says whether b is an ASCII letter.
func isLetter(b byte) bool { return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' }

// isDateSep says whether b separates a date's or a time's numbers.
func isDateSep(b byte) bool {
	return b == '-' || b == '_' || b == '.' || b == '/' || b == ':' || b == ' '
}

// datedMonth says whether the folded fields j hold the two-digit month mm
// where a date puts a month, after a year ("2026-02", "2026_02_19",
// "202602"), not only as a day ("2024-06-12" for december) or another
// number.
func datedMonth(j, mm string) bool {
	return anyAt(j, mm, func(at int) bool { return !(at+2 < len(j) && isDigit(j[at+2])) && yearBefore(j[:at]) })
}

// yearBefore says whether s ends in a year (19xx or 20xx), then at most one
// separator: what comes next is a date's month.
func yearBefore(s string) bool {
	if n := len(s); n > 0 && !isDigit(s[n-1]) {
		s = s[:n-1]
	}
	n := len(s)
	if n < 4 || (n > 4 && isDigit(s[n-5])) {
		return false
	}
	return isYear(s[n-4:])
}

// isYear says whether y is a year as names write one: four digits, 19xx or
// 20xx.
func isYear(y string) bool {
	return len(y) == 4 && (y[:2] == "19" || y[:2] == "20") && isDigit(y[2]) && isDigit(y[3])
}

func isDigit(b byte) bool { return b >= '0' && b <= '9' }

// compactDated says whether the folded fields j hold a date written without
// separators whose month is mm: a run of 8 digits (YYYYMMDD) or 14
// (YYYYMMDDhhmmss), its year 19xx or 20xx and its day 01 to 31, as cameras
// and chat apps name files; or a month of 6 (YYYYMM or MMYYYY, its year 20xx),
// as statements and tax returns name their period (Statement_202503.pdf,
// GSTR1_…_042025.pdf), unless it is the time after a date.
func compactDated(j, mm string) bool {
	afterDate := false
	return anyDigitRun(j, func(k, e int) bool {
		r := j[k:e]
		if isCompactDay(r) && r[4:6] == mm && r[6:8] >= "01" && r[6:8] <= "31" ||
			len(r) == 6 && !afterDate && ((r[:2] == "20" && r[4:] == mm) || (r[:2] == mm && r[2:4] == "20")) {
			return true
		}
		// Six digits one separator after eight are a time of day
		// (IMG_20250418_102030), not a month.
		afterDate = e-k == 8 && e+1 < len(j) && !isDigit(j[e]) && isDigit(j[e+1])
		return false
	})
}

// isCompactDay says whether the run of digits r is a day written without
// separators: 8 digits (YYYYMMDD) or 14 (YYYYMMDDhhmmss), of a year 19xx or
// 20xx.
func isCompactDay(r string) bool {
	return (len(r) == 8 || len(r) == 14) && isYear(r[:4])
}

// anyDigitRun says whether ok holds for some run of digits j[k:e] of j, the
// runs offered in order.
func anyDigitRun(j string, ok func(k, e int) bool) bool {
	for k := 0; k < len(j); {
		if !isDigit(j[k]) {
			k++
			continue
		}
		e := k
		for e < len(j) && isDigit(j[e]) {
			e++
		}
		if ok(k, e) {
			return true
		}
		k = e
	}
	return false
}

// compactMonthDay says whether the folded fields j hold a date written
// without separators (YYYYMMDD, YYYYMMDDhhmmss) on the month and day md
// ("0501").
func compactMonthDay(j, md string) bool {
	return anyDigitRun(j, func(k, e int) bool { return isCompactDay(j[k:e]) && j[k+4:k+8] == md })
}
