package meta

import (
	"context"

	"github.com/semfs/semfs/server"
)

// The tree under the --policy file (server/policy): a real path hidden from
// the caller is missing here too (its tags path, its query results, its
// attributes), and a tag is changed only within the caller's tag rights.

// lstat is the FS's Lstat of real path rp as the caller may see it: a
// hidden path answers as a missing one.
func (t *Tree) lstat(ctx context.Context, op, rp string) (server.Attr, error) {
	if t.fs.Hidden(ctx, rp) {
		return server.Attr{}, server.E(op, server.KindNotFound, rp, nil)
	}
	return t.fs.Lstat(ctx, rp)
}

// readDir is the FS's ReadDir of real directory rp without what the caller
// may not see.
func (t *Tree) readDir(ctx context.Context, rp string) ([]server.DirEntry, error) {
	ents, err := t.fs.ReadDir(ctx, rp)
	if err != nil {
		return nil, err
	}
	out := ents[:0]
	for _, e := range ents {
		if !t.fs.Hidden(ctx, server.Join(rp, e.Name)) {
			out = append(out, e)
		}
	}
	return out, nil
}

// checkTag is the caller's tag right on real path rp (EACCES outside it).
func (t *Tree) checkTag(ctx context.Context, op, rp string) error {
	by := t.fs.CreatedBy(rp)
	if by == "" { // no durable records kept: the index's
		if rec, err := t.idx.Get(rp); err == nil {
			by = rec.CreatedBy
		}
	}
	return t.fs.CheckTag(ctx, op, rp, by)
}
