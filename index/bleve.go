package index

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/custom"
	"github.com/blevesearch/bleve/v2/analysis/token/ngram"
	"github.com/blevesearch/bleve/v2/analysis/tokenizer/single"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search/query"
	"github.com/tidwall/buntdb"
)

const (
	bleveDir   = "bleve"
	bleveGen   = "semfs.gen" // Bleve internal key: the buntdb generation it reflects
	trigramTok = "semfs_trigram"

	// bleveLayout (Bleve internal key bleveLayoutKey) names the mapping and
	// scoring model an index was built with. An index built by an older build
	// (no key, or another value) is rebuilt from buntdb at Open like one out of
	// step: the tags live in buntdb, so nothing is lost.
	bleveLayoutKey = "semfs.layout"
	bleveLayout    = "5:trigram+words-bm25" // 3: no whole-name field (the name map answers names); 4: words folded to ASCII; 5: camelCase words kept whole too
)

// bleveConfig: Bleve batches return once applied in memory (unsafe_batch); Bleve
// persists them in the background. That is safe because buntdb, written and
// synced first, is the source of truth: if the process dies before Bleve
// persisted, the generations differ at the next Open and Bleve is rebuilt.
//
// The persister naps 200 ms between rounds (while the index has fewer than
// 1,000 segment files), so that small batches (a query flushes whatever is
// pending) are merged in memory before they reach the disk, instead of each
// becoming a segment file that the merger reads and rewrites again. In-memory
// segments are searchable meanwhile.
func bleveConfig() map[string]interface{} {
	return map[string]interface{}{
		"unsafe_batch": true,
		"scorchPersisterOptions": map[string]interface{}{
			"PersisterNapTimeMSec":      200,
			"PersisterNapUnderNumFiles": 1000,
		},
	}
}

func newMapping() (mapping.IndexMapping, error) {
	im := bleve.NewIndexMapping()
	im.ScoringModel = "bm25" // the best rank's keyword evidence (the seed's rule never scores)
	if err := im.AddCustomTokenFilter(trigramTok, map[string]interface{}{
		"type": ngram.Name, "min": 3.0, "max": 3.0,
	}); err != nil {
		return nil, err
	}
	if err := im.AddCustomAnalyzer(trigramTok, map[string]interface{}{
		"type": custom.Name, "tokenizer": single.Name, "token_filters": []string{trigramTok},
	}); err != nil {
		return nil, err
	}
	if err := addWordAnalyzers(im); err != nil {
		return nil, err
	}
	fm := bleve.NewTextFieldMapping()
	fm.Analyzer = trigramTok
	fm.Store = false
	fm.IncludeTermVectors = false
	fm.IncludeInAll = false
	fm.DocValues = false
	dm := bleve.NewDocumentStaticMapping()
	dm.AddFieldMappingsAt(kwField, fm)
	for _, f := range wordFields {
		wm := bleve.NewTextFieldMapping()
		wm.Analyzer = wordsAnalyzer
		wm.Store = false
		wm.IncludeTermVectors = false
		wm.IncludeInAll = false
		wm.DocValues = false
		dm.AddFieldMappingsAt(f.field, wm)
	}
	im.DefaultMapping = dm
	im.DefaultAnalyzer = trigramTok
	im.StoreDynamic = false
	im.IndexDynamic = false
	im.DocValuesDynamic = false
	return im, nil
}

// bleveDoc is a record as Bleve indexes it: the seed's trigram field, the best
// rank's word fields (path, task, apps with the creator). Whole names are not
// Bleve's: the exact-name map in memory answers them (hayTable.byName).
func bleveDoc(path string, s *stored) map[string]interface{} {
	apps := make([]string, 0, 1+len(s.RelatedApps))
	if s.CreatedBy != "" {
		apps = append(apps, s.CreatedBy)
	}
	apps = append(apps, s.RelatedApps...)
	return map[string]interface{}{
		kwField:   bleveValues(haystack(path, s)),
		pathField: path,
		taskField: s.Task,
		appsField: apps,
	}
}

// openBleve opens the Bleve index under dir and makes it reflect buntdb at
// generation gen, rebuilding it from buntdb when it is missing, unreadable or at
// another generation (a crash between the buntdb commit and Bleve's persist).
// Precondition: x.db open, no concurrent use of x yet.
func (x *Index) openBleve(gen uint64) error {
	p := filepath.Join(x.dir, bleveDir)
	idx, err := bleve.OpenUsing(p, bleveConfig())
	if err == nil {
		v, gerr := idx.GetInternal([]byte(bleveGen))
		have, perr := strconv.ParseUint(string(v), 10, 64)
		if gerr == nil && perr == nil {
			x.bleveSeen = have
		}
		layout, lerr := idx.GetInternal([]byte(bleveLayoutKey))
		inStep := gerr == nil && perr == nil && have == gen
		switch {
		case inStep && lerr == nil && string(layout) == bleveLayout:
			x.bl = idx
			return nil
		case inStep:
			// Built by an older build: a rebuild, not damage.
			x.log.Info("index: Bleve built with another layout; rebuilding from buntdb",
				"dir", x.dir, "layout", string(layout), "want", bleveLayout)
		default:
			if have > gen {
				x.damage.Bleve = "ahead of records.db"
			} else {
				x.damage.Bleve = "out of step"
			}
			x.log.Warn("index: Bleve out of step with records (crash before Bleve persisted?); rebuilding from buntdb",
				"dir", x.dir, "bleveGen", string(v), "recordsGen", gen)
		}
		_ = idx.Close()
	} else if !errors.Is(err, bleve.ErrorIndexPathDoesNotExist) {
		x.damage.Bleve = "unreadable"
		x.log.Warn("index: Bleve unreadable; rebuilding from buntdb", "dir", x.dir, "err", err)
	} else if gen > 0 {
		x.damage.Bleve = "missing"
		x.log.Warn("index: Bleve missing; rebuilding from buntdb", "dir", x.dir)
	}
	if err := os.RemoveAll(p); err != nil {
		return err
	}
	im, err := newMapping()
	if err != nil {
		return err
	}
	idx, err = bleve.NewUsing(p, im, scorch.Name, scorch.Name, bleveConfig())
	if err != nil {
		return err
	}
	x.bl = idx
	n, err := x.rebuildBleve(gen)
	if err != nil {
		return err
	}
	if n > 0 {
		x.log.Info("index: rebuilt Bleve from buntdb", "dir", x.dir, "records", n)
	}
	return nil
}

// rebuildBleve indexes every record, in batches, and stamps the generation.
func (x *Index) rebuildBleve(gen uint64) (int, error) {
	const chunk = 2000
	n := 0
	from := recPrefix
	for {
		var items []kv
		err := x.db.View(func(tx *buntdb.Tx) error {
			return tx.AscendRange("", from, "r;", func(k, v string) bool {
				if k == from && n > 0 {
					return true // the last key of the previous chunk
				}
				items = append(items, kv{k, v})
				return len(items) < chunk
			})
		})
		if err != nil {
			return n, err
		}
		b := x.bl.NewBatch()
		for _, it := range items {
			s, err := decodeStored(it.val)
			if err != nil {
				return n, fmt.Errorf("record %q: %w", it.key, err)
			}
			path := it.key[len(recPrefix):]
			if err := b.Index(path, bleveDoc(path, s)); err != nil {
				return n, err
			}
		}
		n += len(items)
		if len(items) < chunk {
			b.SetInternal([]byte(bleveGen), []byte(strconv.FormatUint(gen, 10)))
			b.SetInternal([]byte(bleveLayoutKey), []byte(bleveLayout))
			return n, x.bl.Batch(b)
		}
		if err := x.bl.Batch(b); err != nil {
			return n, err
		}
		from = items[len(items)-1].key
	}
}

// bleveBatchMax is how many pending document changes force a Bleve batch before
// the next query would.
const bleveBatchMax = 1024

// applyBleve queues committed record changes for Bleve (nil = delete). They reach
// Bleve in one batch before the next query reads it (or once bleveBatchMax are
// pending): file events arrive one or two at a time, and a Bleve batch per event
// costs a segment each, persisted and merged again: 8 ms of CPU per created file.
//
// The batch that bleveBatchMax forces runs on a goroutine of its own, not in
// the write that filled it: a batch of 1,024 documents takes tens of
// milliseconds, and the write holds x.mu, which the index's next write (an NFS
// COMMIT waiting for its create's record, measured as one COMMIT in a thousand
// answered 35 ms late) would otherwise wait for. Precondition: x.mu held for
// writing.
func (x *Index) applyBleve(docs map[string]*stored, gen uint64) {
	if x.pending == nil {
		x.pending = make(map[string]*stored, len(docs))
	}
	for p, s := range docs {
		x.pending[p] = s
	}
	x.pendingGen = gen
	x.appliedGen.Store(gen)
	if len(x.pending) >= bleveBatchMax && !x.bleveKicked {
		x.bleveKicked = true
		x.bleveFlushes.Add(1)
		go func() {
			defer x.bleveFlushes.Add(-1)
			x.blMu.Lock()
			defer x.blMu.Unlock()
			x.flushBleveBlLocked()
		}()
	}
}

// flushBleve makes Bleve hold every change committed before the call: it
// waits for a batch on its way that carries some, and sends what no batch
// has; queries call it first, so they see every change committed before
// them.
//
// Queries that arrive while a batch is on its way wait for it (blMu); those
// whose changes it carried then return without a batch of their own. Without
// that, each waiting query sent the changes committed while it waited, one
// small batch and one records.db sync each, one query at a time: under a
// steady stream of writes (the mixed load, integration/bench/mixed) queries
// queued behind one another's syncs.
func (x *Index) flushBleve() {
	// Every change committed before this query began is at or below want;
	// sentGen is stored once Bleve has taken a batch, so sentGen >= want
	// means Bleve holds them all. (An empty pending set did not: a batch
	// another query has taken may still be on its way.)
	want := x.appliedGen.Load()
	if x.sentGen.Load() >= want {
		return
	}
	if x.onFlushWait != nil {
		x.onFlushWait()
	}
	x.blMu.Lock()
	defer x.blMu.Unlock()
	if x.sentGen.Load() >= want {
		return
	}
	x.flushBleveBlLocked()
}

// flushBleveBlLocked mirrors the pending changes into Bleve in one batch, taken
// under x.mu and sent to Bleve without it: x.mu's readers (queries) and writers
// go on meanwhile; blMu keeps batches in commit order and lets a query wait
// for the one in flight. Precondition: blMu held, x.mu not held.
func (x *Index) flushBleveBlLocked() {
	x.mu.Lock()
	docs, gen, sync, ok := x.takeBleveLocked()
	x.mu.Unlock()
	if !ok {
		return
	}
	if err := x.syncAndSend(docs, gen, sync); err != nil {
		x.mu.Lock()
		x.failBleveLocked(err, sync)
		x.mu.Unlock()
		return
	}
	x.sentGen.Store(gen)
}

// flushBleveLocked is flushBleveBlLocked for a caller holding x.mu (Close,
// which holds blMu too).
func (x *Index) flushBleveLocked() {
	docs, gen, sync, ok := x.takeBleveLocked()
	if !ok {
		return
	}
	if err := x.syncAndSend(docs, gen, sync); err != nil {
		x.failBleveLocked(err, sync)
		return
	}
	x.sentGen.Store(gen)
}

// takeBleveLocked takes the pending changes for a Bleve batch; ok=false when
// there is nothing to send. sync says records.db holds commits not yet synced,
// which syncAndSend makes durable before Bleve is told their generation (so
// that Open's "records.db behind Bleve" still means records.db lost commits);
// the caller needs no x.mu for it. Precondition: x.mu held for writing, and
// blMu (the caller's sync and batch come before any other batch's).
func (x *Index) takeBleveLocked() (docs map[string]*stored, gen uint64, sync, ok bool) {
	docs, gen = x.pending, x.pendingGen
	x.pending = nil
	x.bleveKicked = false // a forced batch still waiting for blMu finds less, or nothing
	if len(docs) == 0 || x.degraded != nil || x.closed {
		return nil, 0, false, false
	}
	sync = x.unsynced
	x.unsynced = false // the caller syncs every commit up to here; later ones set it again
	return docs, gen, sync, true
}

// syncAndSend sends a taken batch to Bleve, records.db synced first if
// takeBleveLocked said so. Precondition: blMu held.
func (x *Index) syncAndSend(docs map[string]*stored, gen uint64, sync bool) error {
	if sync {
		if err := x.syncRecordsFile(); err != nil {
			return err
		}
	}
	return x.sendBleve(docs, gen)
}

// failBleveLocked records a failed batch: Bleve is left behind buntdb, the
// index is marked degraded (queries fall back to the exhaustive scan), and
// the next Open rebuilds Bleve because the generations differ; records.db is
// marked unsynced again if this batch was to sync it. Precondition: x.mu held.
func (x *Index) failBleveLocked(err error, sync bool) {
	if sync {
		x.unsynced = true
	}
	x.degrade(err)
}

// sendBleve applies one taken set of changes to Bleve. Bleve is safe for
// searches during a batch.
func (x *Index) sendBleve(docs map[string]*stored, gen uint64) error {
	if x.onBleveBatch != nil {
		x.onBleveBatch()
	}
	b := x.bl.NewBatch()
	for p, s := range docs {
		if s == nil {
			b.Delete(p)
			continue
		}
		if err := b.Index(p, bleveDoc(p, s)); err != nil {
			return err
		}
	}
	b.SetInternal([]byte(bleveGen), []byte(strconv.FormatUint(gen, 10)))
	return x.bl.Batch(b)
}

func (x *Index) degrade(err error) {
	if x.degraded == nil {
		x.log.Error("index: Bleve update failed; queries scan every record until restart", "dir", x.dir, "err", err)
		x.degraded = err
	}
}

// planMode selects how keyword hits are found; only tests change it.
type planMode int

const (
	planAuto  planMode = iota
	planBleve          // always ask Bleve
	planScan           // always scan the in-memory fields
)

// The keyword planner. Bleve costs a few microseconds per candidate it returns;
// checking one record's joined fields in memory costs about a tenth of that. So a
// query whose words are selective asks Bleve, and one with a word likely to hit
// more than scanFraction of the records (estimated from the document frequency of
// the word's rarest trigram; a one- or two-rune word counts as hitting every
// record) scans every record instead. Either way each candidate is checked
// against the exact rule, so the plan changes the cost, never the answer.
// Indexes of up to scanMin records always use Bleve.
const (
	scanFraction = 25 // scan when the estimate exceeds records/25 (4%)
	scanMin      = 2000
)

// keywordCandidates returns the paths Bleve finds for the folded words, a superset
// of the records where some word is a substring of some field; or scan = true when
// scanning every record is cheaper. Precondition: x.mu held for reading.
func (x *Index) keywordCandidates(ctx context.Context, words []string) (paths []string, scan bool, err error) {
	if len(words) == 0 {
		return nil, false, nil
	}
	if x.plan == planScan || x.degraded != nil {
		return nil, true, nil
	}
	total := x.hay.len()
	budget := max(scanMin, total/scanFraction)
	if x.plan == planBleve {
		budget = math.MaxInt
	}
	est := 0
	seen := map[string]bool{}
	var qs []query.Query
	for _, w := range words {
		if seen[w] {
			continue
		}
		seen[w] = true
		if n := utf8.RuneCountInString(w); n < 3 {
			est += total
			if est > budget {
				return nil, true, nil
			}
			q := bleve.NewRegexpQuery(shortWordRegexp(w))
			q.SetField(kwField)
			qs = append(qs, q)
			continue
		}
		tris := trigrams(w)
		rarest := math.MaxInt
		for _, t := range tris {
			n, err := x.docFreq(t)
			if err != nil {
				return nil, false, err
			}
			rarest = min(rarest, n)
		}
		if rarest == 0 {
			continue // some trigram occurs nowhere: the word hits nothing
		}
		if est += rarest; est > budget {
			return nil, true, nil
		}
		var conj []query.Query
		for _, t := range tris {
			q := bleve.NewTermQuery(t)
			q.SetField(kwField)
			conj = append(conj, q)
		}
		qs = append(qs, bleve.NewConjunctionQuery(conj...))
	}
	if len(qs) == 0 {
		return nil, false, nil
	}
	n, err := x.bl.DocCount()
	if err != nil || n == 0 {
		return nil, false, err
	}
	req := bleve.NewSearchRequestOptions(bleve.NewDisjunctionQuery(qs...), int(n), 0, false)
	req.Score = bleve.ScoreNone
	res, err := x.bl.SearchInContext(ctx, req)
	if err != nil {
		return nil, false, err
	}
	paths = make([]string, len(res.Hits))
	for i, h := range res.Hits {
		paths[i] = h.ID
	}
	return paths, false, nil
}

// eachKeywordCandidate calls visit with the slot of each record
// keywordCandidates finds for the folded words, or of every record where it
// says a scan is cheaper: a superset of the records where some word is a
// substring of some field, each visited once, which visit tests itself.
// Precondition: x.mu held for reading.
func (x *Index) eachKeywordCandidate(ctx context.Context, words []string, visit func(slot int)) error {
	paths, scan, err := x.keywordCandidates(ctx, words)
	if err != nil {
		return err
	}
	if scan {
		for slot := range x.hay.entries {
			visit(slot)
		}
		return nil
	}
	for _, p := range paths { // distinct paths
		if slot, ok := x.hay.pos[p]; ok {
			visit(slot)
		}
	}
	return nil
}

// docFreq is the number of records whose fields hold trigram t (deleted records
// not yet merged away may count: it is an estimate).
func (x *Index) docFreq(t string) (int, error) {
	d, err := x.bl.FieldDictRange(kwField, []byte(t), []byte(t))
	if err != nil {
		return 0, err
	}
	defer d.Close()
	e, err := d.Next()
	if err != nil || e == nil {
		return 0, err
	}
	return int(e.Count), nil
}

// persistBleve waits until Bleve's background persister has written every
// batch sent so far: it sends a last one carrying gen, the generation Bleve
// holds, whose persisted callback tells. Precondition: blMu held, so that no
// batch is sent meanwhile.
func (x *Index) persistBleve(gen uint64) error {
	done := make(chan error, 1)
	b := x.bl.NewBatch()
	b.SetInternal([]byte(bleveGen), []byte(strconv.FormatUint(gen, 10)))
	b.SetPersistedCallback(func(err error) { done <- err })
	if err := x.bl.Batch(b); err != nil {
		return err
	}
	select {
	case err := <-done:
		return err
	case <-time.After(time.Minute):
		return errors.New("Bleve did not persist within a minute")
	}
}

// MergeText sends Bleve every committed change, waits until it has
// persisted them, and merges its segments into one. Bleve's word scores
// (which the best rank weighs) depend on how its segments stand: a re-tagged
// file's old version counts in them until a merge drops it, so the same
// query over the same files can rank two near-equal files either way from
// one moment to the next. After MergeText, until the next change, they do
// not: an evaluation builds its index, then calls it, and prints the same
// figures every run (index/eval; without it, two runs in five differed, and
// with a merge alone, which leaves segments not yet persisted out, one in
// three). Queries wait for the persisting, not for the merge.
func (x *Index) MergeText(ctx context.Context) error {
	// As Close does: with both locks, Bleve holds exactly generation x.gen
	// once the pending changes are sent.
	x.blMu.Lock()
	x.mu.Lock()
	if x.closed {
		x.mu.Unlock()
		x.blMu.Unlock()
		return errorf("merge", KindClosed, "", ErrClosed)
	}
	x.flushBleveLocked()
	gen, degraded := x.gen, x.degraded != nil
	x.mu.Unlock()
	var err error
	if !degraded {
		err = x.persistBleve(gen)
	}
	x.blMu.Unlock()
	switch {
	case degraded:
		return nil // queries read the records, not Bleve: nothing to settle
	case err != nil:
		return errorf("merge", KindIO, "", err)
	}
	adv, err := x.bl.Advanced()
	if err != nil {
		return errorf("merge", KindIO, "", err)
	}
	sc, ok := adv.(*scorch.Scorch)
	if !ok {
		return nil // not a segment index: nothing to merge
	}
	if err := sc.ForceMerge(ctx, nil); err != nil {
		return errorf("merge", KindIO, "", err)
	}
	return nil
}
