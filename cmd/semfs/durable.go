//go:build linux

package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/server"
)

// journalPath is the durable record journal of an index directory: beside it,
// never inside, so that losing the whole index directory keeps it.
func journalPath(indexDir string) string {
	return filepath.Clean(indexDir) + ".journal"
}

// recordSaver is the index's Saver: the core's durable records (MetaXattr on
// the file, else the journal).
type recordSaver daemon

func (s *recordSaver) SaveRecord(ctx context.Context, p string, update func(index.Saved, bool) index.Saved) (index.Saved, error) {
	m, err := s.fs.SaveMeta(ctx, p, func(cur server.Meta, ok bool) server.Meta {
		return metaOf(update(savedOf(cur), ok))
	})
	if err != nil {
		// The file went away (or became a directory) since the control socket
		// checked it: the caller's mistake to report, not a storage failure.
		switch server.KindOf(err) {
		case server.KindNotFound:
			return index.Saved{}, &index.Error{Op: "tag", Kind: index.KindNotFound, Path: p, Err: err}
		case server.KindIsDir, server.KindInvalid, server.KindNotDir:
			return index.Saved{}, &index.Error{Op: "tag", Kind: index.KindInvalid, Path: p, Err: err}
		}
		return index.Saved{}, err
	}
	return savedOf(m), nil
}

func savedOf(m server.Meta) index.Saved {
	d := index.Saved{CreatedBy: m.CreatedBy, CreatedAt: m.CreatedAt, Task: m.Task, RelatedApps: m.RelatedApps}
	if m.Vector != nil {
		d.Vector = &index.Vector{Model: m.Vector.Model, Values: m.Vector.Values}
	}
	return d
}

func metaOf(d index.Saved) server.Meta {
	m := server.Meta{CreatedBy: d.CreatedBy, CreatedAt: d.CreatedAt, Task: d.Task, RelatedApps: d.RelatedApps}
	if d.Vector != nil {
		m.Vector = &server.MetaVector{Model: d.Vector.Model, Values: d.Vector.Values}
	}
	return m
}

// durableScan is what the start-up walk read of the files' durable records.
type durableScan struct {
	from       map[string]server.MetaSource // path -> where its record was read
	xattr      int                          // files whose record is their MetaXattr
	journal    int                          // files whose record is in the journal
	unreadable []string                     // records that could not be decoded
	live       map[uint64]bool              // file identities present (journal compaction)
}

func (s *durableScan) count() int { return s.xattr + s.journal }

// refusal is the start-up error when the index lost records that cannot be
// recovered from the backing files.
func refusal(indexDir string, dmg index.Damage, why string) error {
	return fmt.Errorf("the index at %s is damaged (%s) and %s, so tags or creators may be lost. "+
		"Restore the index with `semfs restore`, or start with `semfs serve --rebuild-index` "+
		"to rebuild it from the backing files alone", indexDir, describeLoss(dmg), why)
}

func describeLoss(dmg index.Damage) string {
	if dmg.Records != "" {
		return "records.db " + dmg.Records
	}
	return "records.db missing with the whole index directory"
}

// checkRecoverable decides, before the index is changed, whether the start may
// go on: when the index lost records (records.db damaged, or the whole index
// directory gone while the backing files carry durable records), every record
// must be recoverable from the backing files. It cannot be when the journal did
// not exist before this start (records of symlinks, and of files tagged by an
// older semfs, lived in the index only), when journal lines were unreadable, or
// when some durable records are. --rebuild-index accepts the loss.
func (d *daemon) checkRecoverable(scan *durableScan) error {
	dmg := d.idx.Damage()
	lost := dmg.RecordsDamaged() || dmg.New && scan.count() > 0
	if !lost {
		return nil
	}
	// Recorded in the index until the recovery completes: a start that
	// refuses, or dies, leaves it for the next start to find again.
	what := dmg.Records
	if what == "" {
		what = "missing with the whole index directory"
	}
	if err := d.idx.MarkDamaged(what); err != nil {
		return err
	}
	mi := d.fs.MetaInfo()
	var why []string
	if !mi.Journal.Existed {
		why = append(why, fmt.Sprintf("the journal %s did not exist (records kept only in the index before it: symlinks, files tagged by an older semfs)", mi.Journal.Path))
	}
	if mi.Journal.Bad > 0 {
		why = append(why, fmt.Sprintf("%d journal lines in %s are unreadable", mi.Journal.Bad, mi.Journal.Path))
	}
	if n := len(scan.unreadable); n > 0 {
		why = append(why, fmt.Sprintf("%d files' durable records are unreadable (first: /%s)", n, scan.unreadable[0]))
	}
	if len(why) == 0 {
		return nil
	}
	if d.args.rebuildIndex {
		d.log.Warn("--rebuild-index: starting from the backing files alone; records they do not hold are lost",
			"damage", describeLoss(dmg), "why", strings.Join(why, "; "))
		return nil
	}
	return refusal(d.paths.Index, dmg, strings.Join(why, "; "))
}

// logRecovery says what the reconcile took from the durable records, and from
// where; after a damaged index it is what was recovered.
func (d *daemon) logRecovery(rep index.ReconcileReport, scan *durableScan, took time.Duration) {
	dmg := d.idx.Damage()
	bySource := func(paths []string) (x, j int) {
		for _, p := range paths {
			switch scan.from[p] {
			case server.MetaFromXattr:
				x++
			case server.MetaFromJournal:
				j++
			}
		}
		return
	}
	cx, cj := bySource(rep.RecoveredCreators)
	tx, tj := bySource(rep.RecoveredTags)
	vx, vj := bySource(rep.RecoveredVectors)
	attrs := []any{
		"creators", len(rep.RecoveredCreators), "creatorsFromXattr", cx, "creatorsFromJournal", cj,
		"tags", len(rep.RecoveredTags), "tagsFromXattr", tx, "tagsFromJournal", tj,
		"vectors", len(rep.RecoveredVectors), "vectorsFromXattr", vx, "vectorsFromJournal", vj,
		"durableRecords", scan.count(), "inXattrs", scan.xattr, "inJournal", scan.journal,
		"took", took.Round(time.Millisecond),
	}
	lost := dmg.RecordsDamaged() || dmg.New && scan.count() > 0
	switch {
	case lost:
		d.log.Warn("index recovered from the backing files' durable records", append([]any{"damage", describeLoss(dmg)}, attrs...)...)
	case len(rep.RecoveredCreators)+len(rep.RecoveredTags)+len(rep.RecoveredVectors) > 0:
		d.log.Info("index completed from durable records (writes a crash kept from the index)", attrs...)
	}
}

// saveUnsaved gives the records only the index holds a durable copy, and drops
// journal records of files that are gone.
// compact is false when clients were served during the walk: the journal is
// then left as it is (backgroundReconcile runs so only when it is empty).
func (d *daemon) saveUnsaved(ctx context.Context, rep index.ReconcileReport, scan *durableScan, compact bool) error {
	// An unreadable record (of a newer semfs?) is left as it is, not overwritten.
	bad := make(map[string]bool, len(scan.unreadable))
	for _, p := range scan.unreadable {
		bad[p] = true
	}
	var unsaved []string
	for _, p := range rep.Unsaved {
		if !bad[p] {
			unsaved = append(unsaved, p)
		}
	}
	if len(unsaved) > 0 {
		n, err := d.idx.Backfill(ctx, unsaved)
		d.log.Info("saved durable records of files the index alone described", "saved", n, "of", len(unsaved))
		if err != nil {
			return fmt.Errorf("saving durable records: %w", err)
		}
	}
	if compact {
		dropped, err := d.fs.CompactJournal(func(id uint64) bool { return scan.live[id] })
		if err != nil {
			return err
		}
		if dropped > 0 {
			d.log.Info("journal compacted", "droppedRecordsOfGoneFiles", dropped)
		}
	}
	// Everything the backing files hold is in the index again, and everything
	// the index holds is saved with them.
	return d.idx.ClearDamage()
}
