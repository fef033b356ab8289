//go:build linux

package main

import (
	"context"
	"fmt"
	"io"

	"github.com/semfs/semfs/embed"
	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/index/content"
	"github.com/semfs/semfs/index/passage"
)

// openPassages opens the passage index (meaning over contents) beside the
// content index, embedding with the tag index's in-process model through a
// cache of its own: a burst of written files' passages went through the
// queries' cache and pushed out every query's vector, so that a query an
// agent repeats paid a forward pass each time; passages that repeat (copies,
// templates) still skip theirs. Its worker reads files through the core as
// the daemon, like the content indexer.
func (d *daemon) openPassages() error {
	var emb embed.Embedder
	if d.model != nil {
		emb = embed.NewCached(d.model, passageCache)
	}
	x, err := passage.Open(passage.Options{Dir: d.paths.Index, Max: d.args.contentMax, Files: contentFiles{d},
		Embedder: emb, CPU: d.args.passageCPU, Log: d.log, Requests: d.metrics.FileRequests})
	if err != nil {
		return fmt.Errorf("opening the passage index: %w", err)
	}
	if dmg := x.Damaged(); dmg != "" && dmg != "missing" {
		d.log.Warn("passage index damaged; rebuilding it from the files", "why", dmg)
	}
	d.passages = x
	return nil
}

// passageCache is how many passages' vectors the passage index's own cache
// keeps (as many as the queries' cache; a vector of USE-lite is 2 KiB).
const passageCache = 1024

// passageChanges hands the change stream, as the content index takes it, to
// the passage index (only queued: no file is read here).
func (d *daemon) passageChanges(cs []content.Change) {
	if d.passages != nil {
		d.passages.Apply(cs)
	}
}

// passagesBegin and passagesReconcile bracket a walk as the content index's
// Begin and Reconcile do.
func (d *daemon) passagesBegin() uint64 {
	if d.passages == nil {
		return 0
	}
	return d.passages.Begin()
}

func (d *daemon) passagesReconcile(since uint64, scopes []string, walked []content.FileStat) {
	if d.passages != nil {
		d.passages.Reconcile(since, scopes, walked)
	}
}

// contents is the best rank's content evidence for the caller of ctx
// (control.Options.Contents): passages only from files that caller may read,
// decided as for grep (callerFiles).
func (d *daemon) contents(ctx context.Context) index.ContentSource {
	if d.passages == nil {
		return nil
	}
	cf := d.callerFiles()
	return passage.Source{X: d.passages,
		Stat: func(_ context.Context, paths []string) []passage.FileState { return cf.Stat(ctx, paths) },
		ReadEach: func(_ context.Context, paths []string, each func(int, io.ReaderAt, passage.FileState)) {
			cf.ReadEach(ctx, paths, each)
		}}
}

// passageStats is the health report's passages section.
func (d *daemon) passageStats() *passage.Stats {
	if d.passages == nil {
		return nil
	}
	st := d.passages.Stats()
	return &st
}

func (d *daemon) closePassages() {
	if d.passages != nil {
		if err := d.passages.Close(); err != nil {
			d.log.Error("closing the passage index", "err", err)
		}
	}
}
