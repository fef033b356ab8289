//go:build linux

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/semfs/semfs/index/content"
	"github.com/semfs/semfs/index/passage"
	"github.com/semfs/semfs/server"
	"github.com/semfs/semfs/server/policy"
)

// openContent opens the content index beside the tag index. Its files are
// read through the core (contentFiles), never by a path on the host.
func (d *daemon) openContent() error {
	x, err := content.Open(content.Options{Dir: d.paths.Index, Max: d.args.contentMax, Files: contentFiles{d}, Log: d.log,
		Requests: d.metrics.FileRequests})
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

func (f contentFiles) Open(ctx context.Context, p string, use func(content.FileReader) error) error {
	return openOne(ctx, f.d.fs, p, use)
}

// openOne is content.Files.Open of p through the core: a bare descriptor
// (server.Reader), not an *os.File and its two system calls more.
func openOne(ctx context.Context, fs *server.FS, p string, use func(content.FileReader) error) error {
	var err error
	fs.OpenEach(ctx, []string{p}, func(_ int, r *server.Reader, oerr error) {
		if err = oerr; err == nil {
			err = use(coreFile{r})
		}
	})
	return err
}

// coreFile is a file the core opened, as the content indexes read it.
type coreFile struct{ *server.Reader }

func (f coreFile) Stat() (content.FileInfo, error) {
	a, err := f.Reader.Stat()
	if err != nil {
		return content.FileInfo{}, err
	}
	return content.FileInfo{Size: a.Size, MTime: a.Mtime.UnixNano(), Ino: a.Ino, Links: uint64(a.Nlink), Regular: a.Mode.IsRegular()}, nil
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
// holds back, the change stream flushed (after the watcher took in what host
// processes changed before the grep began), and files opened only where the
// caller may read them (callerFiles).
func (d *daemon) grepEnv() content.Env {
	cf := d.callerFiles()
	return content.Env{Unsettled: d.fs.Unsettled, Sync: d.sync, Open: cf.Open}
}

// callerFiles decides, for one grep or query, which files its caller may
// search, and reads them as that caller (a daemon in root mode acts as its
// caller). Under a --policy file, only what the caller's app may read and
// see. A file is the caller's to search when grep -r run as that caller would
// read it: it may read the file, and list and search every directory above
// it (the export's root included). Directory answers are kept for the one
// request.
func (d *daemon) callerFiles() *callerFiles {
	return &callerFiles{d: d, dirs: map[string]bool{}}
}

type callerFiles struct {
	d    *daemon
	mu   sync.Mutex
	dirs map[string]bool // directory -> the caller may list and search it
}

// check says whether the caller of ctx may search p.
func (c *callerFiles) check(ctx context.Context, p string) error {
	if err := c.checkAbove(ctx, p); err != nil || !c.d.fs.ChecksPermissions(ctx) {
		return err
	}
	return c.d.fs.CheckAccess(ctx, "grep", p, server.MayRead)
}

// checkAbove is check but for p's own read permission: the --policy file's
// say on p, and every directory above it.
func (c *callerFiles) checkAbove(ctx context.Context, p string) error {
	fs := c.d.fs
	// The --policy file first: a hidden path does not exist for the caller,
	// and one outside its read patterns is not read (as the core's own open
	// decides).
	if _, rules := fs.Rules(ctx); rules != nil && (rules.Hidden(p) || !rules.May(policy.Read, p, "")) {
		return server.E("grep", server.KindPermission, p, nil)
	}
	if !fs.ChecksPermissions(ctx) {
		return nil
	}
	for dir := p; dir != ""; {
		dir, _ = server.Split(dir)
		c.mu.Lock()
		ok, seen := c.dirs[dir]
		c.mu.Unlock()
		if !seen {
			ok = fs.CheckAccess(ctx, "grep", dir, server.MayRead|server.MayExec) == nil
			c.mu.Lock()
			c.dirs[dir] = ok
			c.mu.Unlock()
		}
		if !ok {
			return server.E("grep", server.KindPermission, dir, nil)
		}
	}
	return nil
}

// Open opens p for reading as the caller of ctx, where it may search it,
// and calls use with it (content.Env.Open).
func (c *callerFiles) Open(ctx context.Context, p string, use func(content.FileReader) error) error {
	if err := c.check(ctx, p); err != nil {
		return err
	}
	return openOne(ctx, c.d.fs, p, use)
}

// ReadEach opens each of paths the caller of ctx may search (check), and
// calls each with the open file and its own size and modification time
// (Source.ReadEach): files sharing a directory share its lookup
// (FS.OpenEach).
func (c *callerFiles) ReadEach(ctx context.Context, paths []string, each func(int, io.ReaderAt, passage.FileState)) {
	// The whole check before the open: a file the caller may not read is
	// not opened at all (opening a device node put in a file's place could
	// do something).
	may, at := sift(ctx, paths, c.check, func(i int, err error) { each(i, nil, passage.FileState{Err: err}) })
	c.d.fs.OpenEach(ctx, may, func(j int, r *server.Reader, err error) {
		var a server.Attr
		if err == nil {
			a, err = r.Stat()
		}
		st := fileState(may[j], a, err)
		if st.Err != nil {
			each(at[j], nil, st)
			return
		}
		each(at[j], r, st)
	})
}

// Stat is, for each of paths, the regular file's size and modification time
// as the caller of ctx sees it, where it may search it (check's answer, its
// last step, the file's own read permission, from the same statx:
// FS.LstatReadable; files sharing a directory share its lookup).
func (c *callerFiles) Stat(ctx context.Context, paths []string) []passage.FileState {
	out := make([]passage.FileState, len(paths))
	may, at := sift(ctx, paths, c.checkAbove, func(i int, err error) { out[i].Err = err })
	attrs, errs := c.d.fs.LstatReadable(ctx, may)
	for j, i := range at {
		out[i] = fileState(may[j], attrs[j], errs[j])
	}
	return out
}

// sift keeps the paths check allows (may, with their indexes at in paths)
// and hands each refused one's index and error to refused.
func sift(ctx context.Context, paths []string, check func(context.Context, string) error, refused func(int, error)) (may []string, at []int) {
	may, at = make([]string, 0, len(paths)), make([]int, 0, len(paths))
	for i, p := range paths {
		if err := check(ctx, p); err != nil {
			refused(i, err)
			continue
		}
		may = append(may, p)
		at = append(at, i)
	}
	return may, at
}

// fileState is what a content query knows of p from its attributes a, or
// from err where they could not be read: its size and modification time,
// or why it is not to be searched (it is not a regular file).
func fileState(p string, a server.Attr, err error) passage.FileState {
	switch {
	case err != nil:
		return passage.FileState{Err: err}
	case !a.Mode.IsRegular():
		return passage.FileState{Err: server.E("grep", server.KindInvalid, p, errors.New("not a regular file"))}
	}
	return passage.FileState{Size: a.Size, MTime: a.Mtime.UnixNano(), CTime: a.Ctime.UnixNano(), Ino: a.Ino}
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
