//go:build linux

package main

import (
	"context"
	"fmt"
	"os"
	"sync"

	"github.com/semfs/semfs/index/content"
	"github.com/semfs/semfs/server"
	"github.com/semfs/semfs/server/policy"
)

// openContent opens the content index beside the tag index. Its files are
// read through the core (contentFiles), never by a path on the host.
func (d *daemon) openContent() error {
	x, err := content.Open(content.Options{Dir: d.paths.Index, Max: d.args.contentMax, Files: contentFiles{d}, Log: d.log})
	if err != nil {
		return fmt.Errorf("opening the content index: %w", err)
	}
	if dmg := x.Damaged(); dmg != "" && dmg != "missing" {
		d.log.Warn("content index damaged; rebuilding it from the files", "why", dmg)
	}
	d.content = x
	return nil
}

// contentFiles reads the export for the content indexer, as the daemon.
type contentFiles struct{ d *daemon }

func (f contentFiles) Open(ctx context.Context, p string) (*os.File, error) {
	return f.d.fs.OpenRead(ctx, p)
}

// contentChanges hands a batch of the core's change stream to the content
// index, beside the tag index (it only marks paths dirty: no file is read here).
func (d *daemon) contentChanges(cs []server.Change) {
	if d.content == nil {
		return
	}
	out := make([]content.Change, 0, len(cs))
	for _, c := range cs {
		switch c.Op {
		case server.ChangeCreate, server.ChangeWrite:
			out = append(out, content.Change{Op: content.Written, Path: c.Path})
		case server.ChangeRename:
			out = append(out, content.Change{Op: content.Renamed, Path: c.Path, NewPath: c.NewPath, IsDir: c.IsDir})
		case server.ChangeRemove:
			out = append(out, content.Change{Op: content.Removed, Path: c.Path})
		}
	}
	d.content.Apply(out)
	d.passageChanges(out)
}

// contentStat is a walked regular file as the content index compares it.
func contentStat(p string, a server.Attr) (content.FileStat, bool) {
	if !a.Mode.IsRegular() {
		return content.FileStat{}, false
	}
	return content.FileStat{Path: p, Size: a.Size, MTime: a.Mtime}, true
}

// grepEnv is what a grep needs for the caller of ctx: the dirty paths the core
// holds back, the change stream flushed, and files opened only where the
// caller may read them (a daemon in root mode acts as its caller).
//
// Under a --policy file, only what the caller's app may read and see. A file
// is the caller's to search when grep -r run as that caller would read
// it: it may read the file, and list and search every directory above it
// (the export's root included). Directory answers are kept for the one grep.
func (d *daemon) grepEnv() content.Env {
	var mu sync.Mutex
	dirs := map[string]bool{}
	dirOK := func(ctx context.Context, dir string) bool {
		mu.Lock()
		ok, seen := dirs[dir]
		mu.Unlock()
		if !seen {
			ok = d.fs.CheckAccess(ctx, "grep", dir, server.MayRead|server.MayExec) == nil
			mu.Lock()
			dirs[dir] = ok
			mu.Unlock()
		}
		return ok
	}
	return content.Env{
		Unsettled: d.fs.Unsettled,
		Sync:      d.queue.Flush,
		Open: func(ctx context.Context, p string) (*os.File, error) {
			// The --policy file first: a hidden path does not exist for
			// the caller, and one outside its read patterns is not read
			// (as the core's own open decides).
			if _, rules := d.fs.Rules(ctx); rules != nil && (rules.Hidden(p) || !rules.May(policy.Read, p, "")) {
				return nil, server.E("grep", server.KindPermission, p, nil)
			}
			if d.fs.ChecksPermissions(ctx) {
				for dir := p; dir != ""; {
					dir, _ = server.Split(dir)
					if !dirOK(ctx, dir) {
						return nil, server.E("grep", server.KindPermission, dir, nil)
					}
				}
				if err := d.fs.CheckAccess(ctx, "grep", p, server.MayRead); err != nil {
					return nil, err
				}
			}
			return d.fs.OpenRead(ctx, p)
		},
	}
}

// contentStats is the health report's content section.
func (d *daemon) contentStats() *content.IndexStats {
	if d.content == nil {
		return nil
	}
	st := d.content.Stats()
	return &st
}

// grep answers POST /v1/grep (control.Options.Grep) for the caller of ctx.
func (d *daemon) grep(ctx context.Context, req content.Request) (content.Answer, error) {
	c, err := content.Compile(req)
	if err != nil {
		return content.Answer{}, err
	}
	return d.content.Grep(ctx, c, d.grepEnv())
}
