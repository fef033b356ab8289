package meta

import (
	"context"
	"fmt"
	"time"

	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/server"
)

// contents is the query/ directories' content evidence (Options.Contents).
// An answer ranked by contents depends on the caller (only files it may read
// give evidence) and on the passage index, which moves without the tag
// index's generation: it is kept per caller, for seenFor within one
// generation, never shared between callers.
type contents struct {
	source func(ctx context.Context) index.ContentSource
	views  map[seenKey]seenView // guarded by Tree.mu
}

// contentResults is results with the files' contents: query q as POST
// /v1/query answers it for the caller of ctx, the files it cannot find left
// out as results does.
func (t *Tree) contentResults(ctx context.Context, p string, q queryKey) ([]index.Result, error) {
	gen := t.idx.Generation()
	sk := seenKey{q: q, who: fmt.Sprintf("%+v", server.IdentityFrom(ctx))}
	t.mu.Lock()
	if v, ok := t.contents.views[sk]; ok && v.gen == gen && time.Since(v.at) < seenFor {
		t.mu.Unlock()
		return v.res, nil
	}
	t.mu.Unlock()
	res, err := t.idx.Query(ctx, index.Query{Text: q.text, Limit: q.limit, Contents: t.contents.source(ctx)})
	if err != nil {
		kind := server.KindIO
		if index.KindOf(err) == index.KindInvalid {
			kind = server.KindInvalid
		}
		return nil, server.E("query", kind, p, err)
	}
	out := make([]index.Result, 0, len(res))
	for _, r := range res {
		if t.inTree(r.Path) {
			continue
		}
		if _, err := t.lstat(ctx, "query", r.Path); err != nil {
			continue
		}
		out = append(out, r)
	}
	t.mu.Lock()
	if len(t.contents.views) >= maxSeen {
		for k := range t.contents.views {
			delete(t.contents.views, k)
			break
		}
	}
	t.contents.views[sk] = seenView{gen: gen, at: time.Now(), res: out}
	t.mu.Unlock()
	return out, nil
}
