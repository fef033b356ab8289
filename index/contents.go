package index

import (
	"context"
)

// ContentSource is the content evidence of the best rank (Query.Contents): the
// files whose passages match a query by words or by meaning, for one caller.
// The passage index (index/passage) is the daemon's.
type ContentSource interface {
	// Evidence returns, for text and, when vec is not nil, its vector of
	// model, the files whose contents match, each with its best passages'
	// lines and scores but not their text. A file the caller may not read,
	// or that changed since its passages were indexed, is never among them;
	// nor is one whose evidence does not count (ContentHit.Counts at
	// threshold): leaving it out spares checking the file.
	Evidence(ctx context.Context, text string, vec []float32, model string, threshold float64) ([]ContentHit, error)
	// Read fills in the text of hits' passages (the answer's few, not every
	// candidate's): each a snippet of at most a few hundred bytes around
	// the query text's words, its Line the line it begins on. It reads each
	// file as the caller; a hit whose file can no longer be read, or changed
	// since Evidence, loses its passages.
	Read(ctx context.Context, text string, hits []*ContentHit) error
}

// ContentHit is one file's content evidence.
type ContentHit struct {
	Path string
	// Keyword is the coverage of the query's words by the file's best
	// passage: the IDF-weighted share it holds, each word moved by at most a
	// tenth by its BM25 strength; in [0,1].
	Keyword float64
	// Terms are the query's analysed words its passages hold (as contents
	// are analysed: camelCase is not split). A query word the caller's
	// readable files hold is no typo: the best rank looks for no word a
	// typo away from it in the tags (keywordEvidence).
	Terms []string
	// Sim is the best cosine between the query and a passage (HasSim: one
	// was computed); StandOut says it is at least 2.5 standard deviations
	// above the mean over every passage.
	Sim      float64
	HasSim   bool
	StandOut bool
	Passages []Passage // the best 1–3, best first
	// Spans are the Passages' byte ranges in the file, [start, end), and
	// Size and MTime (Unix ns) the file's when they were indexed: Read reads
	// the text from that version only. CTime (Unix ns) and Ino are the
	// file's as Evidence checked it (the source may show bytes it read of
	// that very version before).
	Spans       [][2]int64
	Size, MTime int64
	CTime       int64
	Ino         uint64
}

// Counts reports whether h is evidence the best rank counts: words of the
// query, or a passage close enough in meaning (its cosine at least
// threshold, or standing out). A passage merely nearer than others is not.
func (h ContentHit) Counts(threshold float64) bool {
	return h.Keyword > 0 || h.HasSim && (h.Sim >= threshold || h.StandOut)
}

// Passage is the text of a file that matched a query: one of its passages, or
// of a longer one the snippet where the query's words are densest.
type Passage struct {
	Line  int     `json:"line"` // the first line of Text, 1-based
	Text  string  `json:"text"`
	Score float64 `json:"score"`
}

// Scopes of Query.Scope.
const (
	ScopeAll  = ""     // tags, names and, with Query.Contents, contents
	ScopeTags = "tags" // tags and names only
)

// contentEvidence adds the contents' evidence to the candidates: a file whose
// passages hold query words gets kw += (1 − kw)·Keyword (its contents cover
// what its tags miss; kw stays in [0,1]), one whose closest passage reaches
// threshold or stands out becomes a candidate for its meaning (or adds it);
// a hit that does not count (ContentHit.Counts) adds nothing. Files with no
// record are left out (every file has one once the change stream reached
// the tag index). It returns the spread of the passages' cosines, for
// contentSem. Precondition: x.mu held for reading, keyword evidence complete.
func (x *Index) contentEvidence(hits []ContentHit, cands *candSet, threshold float64) (lo, hi float64) {
	var sum float64
	n := 0
	for i, h := range hits {
		slot, ok := x.hay.pos[h.Path]
		if !ok || !h.Counts(threshold) {
			continue
		}
		c := cands.get(slot)
		c.hit = i + 1
		c.kw += (1 - c.kw) * min(1, h.Keyword)
		if h.HasSim {
			c.csim, c.chas = h.Sim, true
			sum += h.Sim
			hi = max(hi, h.Sim)
			n++
		}
	}
	if n > 0 {
		lo = sum / float64(n)
	}
	return lo, hi
}

// contentSem is a candidate's meaning from its closest passage, scaled as
// the best rank scales tag similarity (sem, best.go), so in [0,1]: weighed by
// λ like any meaning, it cannot lift a file above a name hit.
func contentSem(c *bestCand, lo, hi float64) float64 {
	switch {
	case !c.chas:
		return 0
	case hi <= lo:
		return c.csim
	}
	return (1-semRaw)*min(1, max(0, (c.csim-lo)/(hi-lo))) + semRaw*c.csim
}
