package feed

import (
	"context"
	"fmt"
	"path"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/semfs/semfs/server"
)

// View decides which paths one reader sees. A nil View sees every path. The
// --policy file's hidden paths are taken out with Hiding, renames out of view
// turned into removes (See).
type View interface {
	Sees(p string) bool
}

// See is e as a reader with view v sees it, ok=false when it sees none of it.
// A rename seen from one side only is a create at its new path (moved into
// view) or a remove of its old path (moved out of view).
func See(v View, e Event) (Event, bool) {
	if v == nil {
		return e, true
	}
	if e.Op != OpRename {
		return e, v.Sees(e.Path)
	}
	to, from := v.Sees(e.Path), v.Sees(e.From)
	switch {
	case to && from:
		return e, true
	case to:
		e.Op, e.From = OpCreate, ""
		return e, true
	case from:
		e.Op, e.Path, e.From = OpRemove, e.From, ""
		return e, true
	}
	return e, false
}

// Hiding is v less the paths hidden says do not exist for the reader (the
// --policy file's hide rules: a hidden directory hides what is below it, so
// hidden is asked of the path itself). nil hidden leaves v as it is.
func Hiding(v View, hidden func(p string) bool) View {
	if hidden == nil {
		return v
	}
	return hidingView{v, hidden}
}

type hidingView struct {
	inner  View
	hidden func(string) bool
}

func (h hidingView) Sees(p string) bool {
	return !h.hidden(p) && (h.inner == nil || h.inner.Sees(p))
}

// SearchView is root mode's view for the caller in ctx (its Identity): a
// path is seen when the caller could search every directory above it, as
// the kernel decides for that caller (server.FS.Access), so a caller sees
// the names it could look up. nil (everything) when fs does not check ctx's
// caller: an unprivileged daemon, root callers, the daemon's own work.
// Directory answers are remembered for the life of the view (one request),
// so a page of events costs one check per distinct directory. A path whose
// directory is gone by the time it is read is not seen.
func SearchView(ctx context.Context, fs *server.FS) View {
	if fs == nil || !fs.ChecksPermissions(ctx) {
		return nil
	}
	return &searchView{ctx: ctx, fs: fs, dirs: map[string]bool{}}
}

type searchView struct {
	ctx  context.Context
	fs   *server.FS
	dirs map[string]bool // directory -> the caller may search it and every one above
}

func (v *searchView) Sees(p string) bool {
	d := path.Dir(p)
	if d == "." {
		d = ""
	}
	return v.searches(d)
}

// searches reports whether the caller may search d and every directory
// above it.
func (v *searchView) searches(d string) bool {
	if ok, seen := v.dirs[d]; seen {
		return ok
	}
	ok := true
	if d != "" {
		up := path.Dir(d)
		if up == "." {
			up = ""
		}
		ok = v.searches(up)
	}
	if ok {
		got, err := v.fs.Access(v.ctx, d, server.MayExec)
		ok = err == nil && got&server.MayExec != 0
	}
	v.dirs[d] = ok
	return ok
}

// Globs is a paths filter: doublestar patterns ("src/**/*.go", "notes/*")
// matched against an event's path, and a rename's old path too. Empty
// matches everything.
type Globs []string

// ParseGlobs splits a comma-separated list of patterns and checks each.
func ParseGlobs(list []string) (Globs, error) {
	var g Globs
	for _, item := range list {
		for _, p := range strings.Split(item, ",") {
			p = strings.TrimPrefix(strings.TrimSpace(p), "/")
			if p == "" {
				continue
			}
			if !doublestar.ValidatePattern(p) {
				return nil, fmt.Errorf("paths: %q is not a valid glob", p)
			}
			g = append(g, p)
		}
	}
	return g, nil
}

// Match reports whether e is one the filter keeps.
func (g Globs) Match(e Event) bool {
	if len(g) == 0 {
		return true
	}
	for _, p := range g {
		if ok, _ := doublestar.Match(p, e.Path); ok {
			return true
		}
		if e.From != "" {
			if ok, _ := doublestar.Match(p, e.From); ok {
				return true
			}
		}
	}
	return false
}
