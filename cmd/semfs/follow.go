//go:build linux

package main

import (
	"context"
	"time"

	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/server"
)

// follow is the Watcher's FollowFunc: it brings the index in line with what
// host processes did inside scopes, as the start-up reconcile does for the
// whole directory. A file a host process created gets a record with no
// creator (created_by ""), unless it carries a durable record (a user.semfs
// attribute copied with it, or the journal's, by file identity); a file
// renamed or moved keeps its record, found by file identity (inode and birth
// time), when both its old and its new name are in the batch; a removed file
// loses its record.
func (d *daemon) follow(ctx context.Context, scopes []string) error {
	t0 := time.Now()
	var files []index.FileState
	add := func(p string, a server.Attr) error {
		if !a.Mode.IsRegular() && !a.IsSymlink() {
			return nil
		}
		fst := index.FileState{Path: p, Ino: a.FileID(), Size: a.Size, ModTime: a.Mtime}
		m, src, err := d.fs.ReadMeta(ctx, p)
		switch {
		case err != nil && server.KindOf(err) == server.KindNotFound:
			return nil // removed meanwhile: the next batch has its event
		case err != nil && server.KindOf(err) == server.KindInvalid:
			d.log.Warn("unreadable durable record; the index's record is kept", "path", p, "err", err)
		case err != nil:
			return err
		case src != server.MetaNone:
			saved := savedOf(m)
			fst.Saved = &saved
		}
		files = append(files, fst)
		return nil
	}
	for _, s := range scopes {
		if s == "" {
			if err := d.fs.Walk(ctx, "", add); err != nil {
				return err
			}
			continue
		}
		a, err := d.fs.Lstat(ctx, s)
		if err != nil {
			if k := server.KindOf(err); k == server.KindNotFound || k == server.KindNotDir {
				continue // gone, or below what is now a file or symlink: its records go
			}
			return err
		}
		if !a.IsDir() {
			if err := add(s, a); err != nil {
				return err
			}
			continue
		}
		if err := d.fs.Walk(ctx, s, add); err != nil && server.KindOf(err) != server.KindNotFound {
			return err
		}
	}
	rep, err := d.idx.ReconcileIn(scopes, files)
	if err != nil {
		return err
	}
	if rep.Changed() || len(rep.RecoveredCreators)+len(rep.RecoveredTags) > 0 {
		d.log.Info("index followed changes made in the backing directory", "report", rep.String(),
			"scopes", len(scopes), "files", len(files), "took", time.Since(t0).Round(time.Microsecond))
	}
	return nil
}
