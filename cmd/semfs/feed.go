//go:build linux

package main

import (
	"context"
	"encoding/json"
	"slices"
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
	d.sizes = feed.NewSizes() // before the log's goroutine can fill an event (fillEvent)
	l, err := feed.Open(feed.Options{Path: feed.PathIn(d.paths.Index), Keep: d.args.changesKeep,
		KeepFor: d.args.changesKeepFor, Fresh: fresh, Logger: d.log, Fill: d.fillEvent})
	if err != nil {
		return err
	}
	d.feed = l
	d.dirs = feed.NewHostDirs()
	// The list is good only for the history it was saved with: loaded when
	// the history goes on, and removed either way (Load).
	if err := d.dirs.Load(feed.DirsPathIn(d.paths.Index)); err != nil && l.Fresh() == "" {
		d.log.Warn("no directory list from the last stop: host changes to directories made while the daemon was down are not recorded", "err", err)
	}
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
	// On the stack for the usual small batch (a COMMIT's): Enqueue copies.
	var small [8]feed.Event
	evs := small[:0]
	if len(cs) > len(small) {
		evs = make([]feed.Event, 0, len(cs))
	}
	evs = evs[:len(cs)]
	for i, c := range cs {
		evs[i] = feed.FromChange(c)
		if c.IsDir {
			d.dirs.Apply(c, c.Ino)
		}
	}
	d.feed.Enqueue(evs)
}

// fillEvent is the log's Fill: the size of a file written or tagged, as it
// is now (one lstat, as the daemon, on the log's goroutine), unless the
// write's close told it (Event.Sized); then the sizes kept for host
// truncates (feed.Sizes) follow the event.
func (d *daemon) fillEvent(e *feed.Event) {
	if (e.Op == feed.OpWrite || e.Op == feed.OpTruncate || e.Op == feed.OpTag) && !e.Sized {
		if a, err := d.fs.Lstat(context.Background(), e.Path); err == nil {
			e.Size = a.Size
			if a.IsSymlink() {
				e.Type = server.TypeSymlink
			}
		}
	}
	if d.sizes != nil {
		d.sizes.Note(*e)
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

// recordHost records what a look at the backing directory found of host
// processes' changes inside scopes (a watcher batch, or the start-up
// reconcile's whole tree), app "host": the index's verdict on the files, and
// the directories made, moved and removed, which the directory list
// (feed.HostDirs) tells. With record false (a new history) the list is
// brought in line and nothing is recorded.
func (d *daemon) recordHost(ctx context.Context, scopes []string, dirs hostDirs, rep index.ReconcileReport, record bool) {
	if d.feed == nil {
		return
	}
	look := feed.HostLook{Scopes: scopes, Dirs: dirs.ino, Modes: dirs.mode, Removed: rep.Removed, At: time.Now()}
	if record {
		look.Created, look.Updated, look.Chmod = d.hostFiles(ctx, rep, server.AttribOf(ctx).Files)
		for _, m := range rep.Renamed {
			look.Renamed = append(look.Renamed, feed.Move{From: m.From, To: m.To})
		}
		for _, m := range rep.Replaced {
			look.Over = append(look.Over, feed.Move{From: m.From, To: m.To})
		}
	}
	evs := d.dirs.Events(look)
	if record {
		d.feed.Enqueue(evs)
	}
}

// hostDirs is the directories a look at the backing directory found: their
// identities (server.Attr.FileID) and permission bits (server.UnixPerm).
type hostDirs struct {
	ino  map[string]uint64
	mode map[string]uint32
}

// recordDirAttribs records a host's chmod of each directory whose attributes
// changed in the watcher's batch (server.AttribOf) outside scopes, which the
// look of the scopes told already: one lstat each, compared with the list of
// directories (feed.HostDirs.Attrib).
func (d *daemon) recordDirAttribs(ctx context.Context, scopes []string) {
	if d.feed == nil {
		return
	}
	var evs []feed.Event
	for _, p := range server.AttribOf(ctx).Dirs {
		if slices.ContainsFunc(scopes, func(s string) bool { return server.Within(p, s) }) {
			continue
		}
		a, err := d.fs.Lstat(ctx, p)
		if err != nil || !a.IsDir() {
			continue // gone or replaced since: its parent's events tell
		}
		if e, ok := d.dirs.Attrib(p, a.FileID(), server.UnixPerm(a.Mode), time.Now()); ok {
			evs = append(evs, e)
		}
	}
	d.feed.Enqueue(evs)
}

// hostFiles is the files the index found created and updated, each as it is
// now (one lstat each: these are the host's changes, not the core's): its
// type and size, whether it is a new name of a file that has another (a
// hard link: a second name it got in this same look is the link, the first
// its create), and whether it shrank; and the files whose mode changed, or
// which a host touched (attrib: the batch's files whose attributes changed;
// one updated with its size unchanged had its times set, not its data
// written).
func (d *daemon) hostFiles(ctx context.Context, rep index.ReconcileReport, attrib map[string]bool) (created, updated, chmod []feed.HostFile) {
	look := func(p string) (feed.HostFile, server.Attr) {
		f := feed.HostFile{Path: p, Type: server.TypeFile}
		a, err := d.fs.Lstat(ctx, p)
		if err != nil {
			return f, a // gone since: a later look has its event
		}
		f.Size = a.Size
		if a.IsSymlink() {
			f.Type = server.TypeSymlink
		}
		return f, a
	}
	files := make([]feed.HostFile, len(rep.Created))
	attrs := make([]server.Attr, len(rep.Created))
	names := map[uint64]uint32{} // new names per file in this look
	for i, p := range rep.Created {
		files[i], attrs[i] = look(p)
		if attrs[i].Nlink > 1 {
			names[attrs[i].FileID()]++
		}
	}
	first := map[uint64]bool{}
	for i, f := range files { // in path order
		if a := attrs[i]; a.Nlink > 1 && f.Type == server.TypeFile {
			// A new name is a link when the file had a name before this
			// look (more names than the look made), or is not the first
			// of the look's names for it.
			id := a.FileID()
			f.Link = first[id] || names[id] < a.Nlink
			first[id] = true
		}
		created = append(created, f)
	}
	set := func(ps []string) map[string]bool {
		m := make(map[string]bool, len(ps))
		for _, p := range ps {
			m[p] = true
		}
		return m
	}
	shrunk, resized, unsized, chmodded := set(rep.Shrunk), set(rep.Resized), set(rep.Unsized), set(rep.Chmod)
	if len(unsized) > 0 {
		// The sizes of clients' last changes are noted as the log fills
		// their events: those before this look first.
		_ = d.feed.Settle(ctx)
	}
	var touched []feed.HostFile
	for _, p := range rep.Updated {
		f, _ := look(p)
		same := !resized[p]
		if unsized[p] {
			// The index had no size since a client's write: the size the
			// feed noted at that client's last event, if kept.
			was, ok := d.sizes.Size(p)
			f.Trunc = ok && f.Size < was
			same = ok && f.Size == was
		} else {
			f.Trunc = shrunk[p]
		}
		if attrib[p] && same {
			if !chmodded[p] { // a chmod with it says setattr already
				touched = append(touched, f)
			}
			continue
		}
		updated = append(updated, f)
	}
	for _, p := range rep.Chmod {
		f, _ := look(p)
		chmod = append(chmod, f)
	}
	return created, updated, append(chmod, touched...)
}

// saveDirs saves the directory list beside the log at a clean stop, so
// that the next start tells what host processes did to directories
// meanwhile.
func (d *daemon) saveDirs() {
	if err := d.dirs.Save(feed.DirsPathIn(d.paths.Index)); err != nil {
		d.log.Warn("the directory list could not be saved: the next start records no host changes to directories made while it was down", "err", err)
	}
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
