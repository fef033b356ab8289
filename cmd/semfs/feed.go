//go:build linux

package main

import (
	"context"
	"encoding/json"
	"time"

	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/server"
	"github.com/semfs/semfs/server/control"
	"github.com/semfs/semfs/server/feed"
)

// The change feed (server/feed, docs/changes.md) as the daemon feeds it:
// the core's change stream as the Batcher applies it to the index (off
// every reply path), tags once the index committed them, and the host's
// changes once the watcher or the start-up reconcile took them in.

// openFeed opens the history beside the index. It starts a new one (every
// cursor answers reset) when the index was rebuilt, is new or lost records:
// what clients built from the old history is to be listed again.
func (d *daemon) openFeed() error {
	dmg := d.idx.Damage()
	fresh := d.args.rebuildIndex || dmg.New || dmg.RecordsDamaged()
	l, err := feed.Open(feed.Options{Path: feed.PathIn(d.paths.Index), Keep: d.args.changesKeep,
		KeepFor: d.args.changesKeepFor, Fresh: fresh, Logger: d.log, Fill: d.fillEvent})
	if err != nil {
		return err
	}
	d.feed = l
	return nil
}

// recordChanges records a batch of the core's change stream. It runs where
// the Batcher applies the batch, which may be a COMMIT's own goroutine
// (FlushHere): it only converts and enqueues; the log's goroutine does the
// rest (fillEvent, numbering, the write).
func (d *daemon) recordChanges(cs []server.Change) {
	if d.feed == nil {
		return
	}
	evs := make([]feed.Event, len(cs))
	for i, c := range cs {
		evs[i] = feed.FromChange(c)
	}
	d.feed.Enqueue(evs)
}

// fillEvent is the log's Fill: the size of a file written or tagged, as it
// is now (one statx, as the daemon, on the log's goroutine).
func (d *daemon) fillEvent(e *feed.Event) {
	switch e.Op {
	case feed.OpWrite, feed.OpTruncate, feed.OpTag:
	default:
		return
	}
	if a, err := d.fs.Lstat(context.Background(), e.Path); err == nil {
		e.Size = a.Size
		if a.IsSymlink() {
			e.Type = server.TypeSymlink
		}
	}
}

// recordTags is the index's Tagged hook: one tag event per file, attributed
// to the tagging caller (a mount's or 9P attach's app, or the app registered
// for the control socket peer's uid).
func (d *daemon) recordTags(ctx context.Context, paths []string) {
	if d.feed == nil || d.fs == nil {
		return
	}
	actx := ctx
	if id := server.IdentityFrom(ctx); id.MountApp == "" && !id.HasUID {
		if uid, ok := control.CallerUID(ctx); ok {
			actx = server.WithIdentity(ctx, server.Identity{UID: uid, HasUID: true, Proto: "control"})
		}
	}
	app := d.fs.App(actx)
	now := time.Now()
	evs := make([]feed.Event, len(paths))
	for i, p := range paths {
		evs[i] = feed.Event{Op: feed.OpTag, Path: p, Type: server.TypeFile, App: app, At: now}
	}
	d.feed.Enqueue(evs)
}

// recordHost appends what the index took in of host processes' changes (a
// watcher batch, the start-up reconcile), app "host". Renames of a whole
// directory come as one rename per file, as the index found them.
func (d *daemon) recordHost(rep index.ReconcileReport, files []index.FileState) {
	if d.feed == nil || !rep.Changed() {
		return
	}
	size := make(map[string]int64, len(rep.Created)+len(rep.Updated)+len(rep.Renamed))
	want := func(p string) { size[p] = -1 }
	for _, p := range rep.Created {
		want(p)
	}
	for _, p := range rep.Updated {
		want(p)
	}
	for _, m := range rep.Renamed {
		want(m.To)
	}
	for _, f := range files {
		if _, ok := size[f.Path]; ok {
			size[f.Path] = f.Size
		}
	}
	now := time.Now()
	ev := func(op, p, from, typ string) feed.Event {
		e := feed.Event{Op: op, Path: p, From: from, Type: typ, App: feed.AppHost, At: now}
		if s := size[p]; s > 0 {
			e.Size = s
		}
		return e
	}
	var evs []feed.Event
	for _, m := range rep.Renamed {
		evs = append(evs, ev(feed.OpRename, m.To, m.From, server.TypeFile))
	}
	for _, p := range rep.Removed {
		evs = append(evs, ev(feed.OpRemove, p, "", ""))
	}
	for _, p := range rep.Created {
		evs = append(evs, ev(feed.OpCreate, p, "", server.TypeFile))
	}
	for _, p := range rep.Updated {
		evs = append(evs, ev(feed.OpWrite, p, "", server.TypeFile))
	}
	d.feed.Enqueue(evs)
}

// recentChanges is .semfs/changes (meta.ChangesFunc): the last n events the
// caller may see, as JSON lines, newest last.
func (d *daemon) recentChanges(ctx context.Context, n int) ([]byte, time.Time) {
	if d.feed == nil {
		return nil, time.Time{}
	}
	_ = d.feed.Settle(ctx) // the changes made before the look are in it
	var newest time.Time
	if last := d.feed.Last(1, nil); len(last) == 1 {
		newest = last[0].At
	}
	view := d.changesView(ctx)
	if _, rules := d.fs.Rules(ctx); rules != nil { // the mount's app's hidden paths
		view = feed.Hiding(view, rules.Hidden)
	}
	var out []byte
	for _, e := range d.feed.Last(n, func(e feed.Event) (feed.Event, bool) { return feed.See(view, e) }) {
		b, _ := json.Marshal(e)
		out = append(append(out, b...), '\n')
	}
	return out, newest
}

// changesView is what the caller in ctx may search of the feed, through the
// control socket and .semfs/changes alike: root mode's rule
// (feed.SearchView). Each door then takes out its caller's hidden paths
// under a --policy file (feed.Hiding): the control socket by its peer's
// registered app, .semfs/changes by the mount's.
func (d *daemon) changesView(ctx context.Context) feed.View {
	return feed.SearchView(ctx, d.fs)
}

// feedStats is the health report's part on the history.
func (d *daemon) feedStats() *feed.Stats {
	if d.feed == nil {
		return nil
	}
	s := d.feed.Stats()
	return &s
}
