//go:build linux

package main

import (
	"context"
	"fmt"
	"time"

	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/index/content"
	"github.com/semfs/semfs/server"
)

// sync waits until every change made before the call, through the core or by
// a host process in the backing directory, has reached the index: the
// watcher takes in what the kernel queued (Watcher.Sync), then the change
// stream is flushed. Every control request, grep and .semfs answer starts
// with it.
func (d *daemon) sync(ctx context.Context) error {
	d.mu.Lock()
	w := d.watch
	d.mu.Unlock()
	if w != nil {
		if err := w.Sync(ctx); err != nil {
			return err
		}
	}
	return d.queue.Flush(ctx)
}

// follow is the Watcher's FollowFunc: it brings the index in line with what
// host processes did inside scopes, as the start-up reconcile does for the
// whole directory. A file a host process created gets a record with no
// creator (created_by ""), unless it carries a durable record (a user.semfs
// attribute copied with it, or the journal's, by file identity); a file
// renamed or moved keeps its record, found by file identity (inode and birth
// time), when both its old and its new name are in the batch; a removed file
// loses its record.
//
// A scope that cannot be looked at (a name the core refuses, a directory that
// cannot be listed) is left out of the batch with a warning, rather than
// failing it: its records are kept as they are, and every other scope is
// followed. A file whose durable record cannot be read keeps its record.
// Directories whose attributes alone changed (server.AttribOf) are looked at
// for the change feed only.
func (d *daemon) follow(ctx context.Context, scopes []string) error {
	// After the scopes' events: a directory chmodded outside them.
	defer d.recordDirAttribs(ctx, scopes)
	if len(scopes) == 0 {
		return nil // only directories' attributes changed
	}
	t0 := time.Now()
	since := d.content.Begin()
	psince := d.passagesBegin()
	var texts []content.FileStat
	dirs := hostDirs{ino: map[string]uint64{}, mode: map[string]uint32{}}
	// The regular files and symlinks of the scopes followed; their durable
	// records are read after the walks, a directory at a time.
	var walked []index.FileState
	add := func(p string, a server.Attr) error {
		if a.IsDir() {
			dirs.ino[p], dirs.mode[p] = a.FileID(), server.UnixPerm(a.Mode)
			return nil
		}
		if fs, ok := contentStat(p, a); ok {
			texts = append(texts, fs)
		}
		if a.Mode.IsRegular() || a.IsSymlink() {
			walked = append(walked, indexState(p, a))
		}
		return nil
	}
	kept := scopes[:0:0]
	for _, s := range scopes {
		n := len(walked)
		err := d.scope(ctx, s, add)
		if err != nil {
			walked = walked[:n]
			d.log.Warn("cannot follow changes here; its records stay as they are until the next start", "path", s, "err", err)
			continue
		}
		kept = append(kept, s)
	}
	// Without the files gone since the walk.
	files := d.withRecords(ctx, walked, func(i int, _ server.MetaSource, err error) bool {
		switch {
		case err != nil && server.KindOf(err) == server.KindNotFound:
			return false // removed meanwhile: the next batch has its event
		case err != nil:
			d.log.Warn("durable record unreadable; the index's record is kept", "path", walked[i].Path, "err", err)
		}
		return true
	})
	if err := ctx.Err(); err != nil {
		return err // records not read are not records gone
	}
	d.content.Reconcile(since, kept, texts)
	d.passagesReconcile(psince, kept, texts)
	rep, err := d.idx.ReconcileIn(kept, files)
	if err != nil {
		return err
	}
	d.recordHost(ctx, kept, dirs, rep, true)
	if rep.Changed() || len(rep.RecoveredCreators)+len(rep.RecoveredTags) > 0 {
		d.log.Info("index followed changes made in the backing directory", "report", rep.String(),
			"scopes", len(kept), "files", len(files), "took", time.Since(t0).Round(time.Microsecond))
	}
	return nil
}

// scope calls add for every regular file and symlink at or below s as it is
// now ("" is the whole backing directory); nothing for a path that is gone.
func (d *daemon) scope(ctx context.Context, s string, add func(string, server.Attr) error) error {
	if s == "" {
		return d.fs.Walk(ctx, "", add)
	}
	a, err := d.fs.Lstat(ctx, s)
	if err != nil {
		if k := server.KindOf(err); k == server.KindNotFound || k == server.KindNotDir {
			return nil // gone, or below what is now a file or symlink: its records go
		}
		return err
	}
	if !a.IsDir() {
		return add(s, a)
	}
	if err := add(s, a); err != nil { // the directory itself
		return err
	}
	if err := d.fs.Walk(ctx, s, add); err != nil && server.KindOf(err) != server.KindNotFound {
		return err
	}
	return nil
}

// watchState is the health report's line on the watcher.
func (d *daemon) watchState() string {
	if d.watch == nil {
		return ""
	}
	st := d.watch.Stats()
	return fmt.Sprintf("%s, %d watches; %d batches (%d full rescans, %d queue overflows, %d failed)",
		st.Mode, st.Watches, st.Batches, st.Rescans, st.Overflows, st.Errors)
}
