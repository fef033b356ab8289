package index

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/semfs/semfs/embed"
)

// Create records that path was created by createdBy (an app name, "" when
// unattributed) with inode ino. Idempotent: an existing record keeps its CreatedBy,
// CreatedAt and tags; its inode is updated and UpdatedAt moves to at if later.
// Write guarantee: serialised with every other write, durable when it returns.
func (x *Index) Create(path, createdBy string, ino uint64, at time.Time) error {
	if err := checkPath("create", path); err != nil {
		return err
	}
	if err := checkText("create", path, createdBy); err != nil {
		return err
	}
	at = stamp(at)
	return x.update("create", path, func(tx txn, e *effects) error {
		return createTx(tx, e, path, createdBy, ino, 0, at)
	})
}

// createTx is Create inside a transaction.
func createTx(tx txn, e *effects, path, createdBy string, ino uint64, mode uint32, at time.Time) error {
	s, ok, err := getRecord(tx.Tx, path)
	if err != nil {
		return err
	}
	if ok {
		if s.Ino == ino && s.Mode == mode && !at.After(s.UpdatedAt) {
			return nil
		}
		s.Ino, s.Mode = ino, mode
		if at.After(s.UpdatedAt) {
			s.UpdatedAt = at
		}
		return e.putRecord(tx, path, s, false)
	}
	s = &stored{CreatedBy: createdBy, RelatedApps: []string{}, CreatedAt: at, UpdatedAt: at, Ino: ino, Mode: mode}
	return e.putRecord(tx, path, s, true)
}

// modeTx records that path's permission bits are now mode (a chmod through
// the core), so that a Reconcile does not take it for a host's.
func modeTx(tx txn, e *effects, path string, mode uint32) error {
	s, ok, err := e.record(tx, path)
	if err != nil {
		return err
	}
	if !ok {
		return errorf("mode", KindNotFound, path, ErrNotFound)
	}
	if s.Mode == mode {
		return nil
	}
	s.Mode = mode
	return e.putRecord(tx, path, s, false)
}

// Touch records a write to path at time at: UpdatedAt becomes at unless it is
// already later (change events may arrive out of order). ErrNotFound if the index
// has no record of path.
// Write guarantee: serialised with every other write, durable when it returns.
func (x *Index) Touch(path string, at time.Time) error {
	if err := checkPath("touch", path); err != nil {
		return err
	}
	at = stamp(at)
	return x.update("touch", path, func(tx txn, e *effects) error {
		return touchTx(tx, e, path, at, nil)
	})
}

// touchTx is Touch inside a transaction; left, when not nil, is the state
// the touch left the file in (Change.Left).
func touchTx(tx txn, e *effects, path string, at time.Time, left *Left) error {
	s, ok, err := e.record(tx, path)
	if err != nil {
		return err
	}
	if !ok {
		return errorf("touch", KindNotFound, path, ErrNotFound)
	}
	// The size/mtime Reconcile last saw are stale now: the next Reconcile
	// compares the file with the state the touch left when it is known, and
	// otherwise its mtime with UpdatedAt.
	s.Seen = nil
	if left != nil {
		s.Seen = &seen{Size: left.Size, ModTime: stamp(left.ModTime)}
	}
	if at.After(s.UpdatedAt) {
		s.UpdatedAt = at
	}
	return e.putRecord(tx, path, s, false)
}

// Rename moves the record of oldPath and every record under oldPath+"/" to the
// same place under newPath, replacing whatever the index held at newPath (and
// under newPath+"/"). Tags, CreatedBy and CreatedAt follow the file; UpdatedAt of
// each moved record becomes at (if later). Client-supplied vectors move as they
// are; in-process vectors move too and are re-embedded in the background, since
// the path is part of the tag text. Renaming a path onto itself changes nothing;
// renaming one the index holds nothing of only drops what was at newPath; moving
// a directory into its own subtree (or onto an ancestor) is KindInvalid.
// Write guarantee: serialised with every other write, durable when it returns.
func (x *Index) Rename(oldPath, newPath string, at time.Time) error {
	if err := checkPath("rename", oldPath); err != nil {
		return err
	}
	if err := checkPath("rename", newPath); err != nil {
		return err
	}
	if oldPath == newPath {
		return nil
	}
	if err := checkMove(oldPath, newPath); err != nil {
		return err
	}
	at = stamp(at)
	return x.update("rename", oldPath, func(tx txn, e *effects) error {
		return moveTree(tx, e, oldPath, newPath, at)
	})
}

func checkMove(oldPath, newPath string) error {
	if strings.HasPrefix(newPath, oldPath+"/") || strings.HasPrefix(oldPath, newPath+"/") {
		return errorf("rename", KindInvalid, oldPath, fmt.Errorf("%w: cannot move %q to %q", ErrInvalidPath, oldPath, newPath))
	}
	return nil
}

// moveTree is Rename inside a transaction.
func moveTree(tx txn, e *effects, oldPath, newPath string, at time.Time) error {
	recs, err := recordsUnder(tx.Tx, oldPath)
	if err != nil {
		return err
	}
	vecs, err := vectorsUnder(tx.vec, oldPath)
	if err != nil {
		return err
	}
	// Whatever was at newPath was replaced, even by a file the index had no
	// record of: its tags must not stick to the newcomer.
	if err := dropTree(tx, e, newPath); err != nil {
		return err
	}
	return moveItems(tx, e, recs, vecs, func(p string) string { return newPath + p[len(oldPath):] }, at)
}

// moveItems moves the given records and vectors to target(path). Moved tagged
// records are queued for re-embedding: their vectors' hashes name the old path.
func moveItems(tx txn, e *effects, recs, vecs []kv, target func(string) string, at time.Time) error {
	for _, r := range recs {
		p := r.key[len(recPrefix):]
		s, err := decodeStored(r.val)
		if err != nil {
			return fmt.Errorf("record %q: %w", p, err)
		}
		if at.After(s.UpdatedAt) {
			s.UpdatedAt = at
		}
		if err := e.deleteRecord(tx, p); err != nil {
			return err
		}
		if err := e.putRecord(tx, target(p), s, true); err != nil {
			return err
		}
		if s.tagged() {
			e.dirty = append(e.dirty, target(p))
		}
	}
	for _, v := range vecs {
		p, model, _ := splitVecKey(v.key)
		vv, err := decodeVector(v.val)
		if err != nil {
			return fmt.Errorf("vector %q: %w", v.key, err)
		}
		if err := e.deleteVectorKey(tx, v.key); err != nil {
			return err
		}
		if err := e.putVector(tx, target(p), model, vv.kind, vv.hash, vv.values); err != nil {
			return err
		}
	}
	return nil
}

// Remove drops the record of path and every record under path+"/", with their
// vectors. Removing what the index does not hold is not an error.
// Write guarantee: serialised with every other write, durable when it returns.
func (x *Index) Remove(path string) error {
	if err := checkPath("remove", path); err != nil {
		return err
	}
	return x.update("remove", path, func(tx txn, e *effects) error {
		return dropTree(tx, e, path)
	})
}

func dropTree(tx txn, e *effects, path string) error {
	recs, err := recordsUnder(tx.Tx, path)
	if err != nil {
		return err
	}
	vecs, err := vectorsUnder(tx.vec, path)
	if err != nil {
		return err
	}
	for _, r := range recs {
		if err := e.deleteRecord(tx, r.key[len(recPrefix):]); err != nil {
			return err
		}
	}
	for _, v := range vecs {
		if err := e.deleteVectorKey(tx, v.key); err != nil {
			return err
		}
	}
	return nil
}

// Tag replaces the tags of path (task and related apps; apps are kept in the order
// given, empty names dropped) and its tag embeddings: every vector stored for path
// is replaced by the in-process embedding of the new tag text (when an embedder is
// loaded and the file is tagged) and by v (when given). A v of the in-process
// model takes the place of the in-process embedding. The record is created if the
// index has none yet (the caller has checked the file exists), with an empty
// CreatedBy and CreatedAt = UpdatedAt = now. Tagging does not change UpdatedAt
// of an existing record: it tracks the file's content (Create, Touch, Rename,
// Reconcile), not its tags.
//
// Bad input (path, non-UTF-8 text, unknown model, wrong dims, NaN/Inf, zero
// vector) is a KindInvalid error and changes nothing. The embedding is computed
// before the write, outside the index lock; ctx bounds it.
// Write guarantee: serialised with every other write, durable when it returns.
func (x *Index) Tag(ctx context.Context, path, task string, relatedApps []string, v *Vector) (Record, error) {
	preps, err := x.prepareTags(ctx, "tag", []TagRequest{{Path: path, Task: task, RelatedApps: relatedApps, Vector: v}})
	if err != nil {
		return Record{}, err
	}
	// Concurrent Tag calls share their commits (tagqueue.go).
	rec, err := x.tags.commit(x, ctx, preps[0])
	if err != nil {
		return Record{}, err
	}
	if x.tagged != nil {
		x.tagged(ctx, []string{path})
	}
	return rec, nil
}

// TagRequest is one file's tags for TagMany; the fields mean what Tag's
// arguments mean.
type TagRequest struct {
	Path        string   `json:"path"`
	Task        string   `json:"task"`
	RelatedApps []string `json:"relatedApps"`
	Vector      *Vector  `json:"embedding,omitempty"`
}

// TagMany is Tag for many files at once: all tag texts are embedded in one
// batched Embed call and everything is written in one transaction, so tagging
// thousands of files costs a fraction of as many Tag calls. All or nothing: if
// any request is invalid (KindInvalid, naming it) or embedding fails, nothing
// changes. A path given twice gets the later request's tags. Returns the records
// in request order.
// Write guarantee: serialised with every other write, durable when it returns.
func (x *Index) TagMany(ctx context.Context, reqs []TagRequest) ([]Record, error) {
	return x.tagMany(ctx, "tag", reqs)
}

func (x *Index) tagMany(ctx context.Context, op string, reqs []TagRequest) ([]Record, error) {
	preps, err := x.prepareTags(ctx, op, reqs)
	if err != nil {
		return nil, err
	}
	ctxs := make([]context.Context, len(preps))
	for i := range ctxs {
		ctxs[i] = ctx
	}
	recs, err := x.commitTags(op, ctxs, preps)
	if err != nil {
		return nil, err
	}
	if x.tagged != nil {
		paths := make([]string, len(preps))
		for i, p := range preps {
			paths[i] = p.path
		}
		x.tagged(ctx, paths)
	}
	return recs, nil
}

// preparedTag is one request of Tag or TagMany, checked and embedded, ready
// for its write.
type preparedTag struct {
	path, task string
	apps       []string
	client     *Vector // copied
	own        []float32
	ownHash    uint64
}

// prepareTags checks reqs and embeds their tag texts: everything of a tag
// write that needs no index lock. Any invalid request (KindInvalid, naming it)
// or a failed embedding fails them all.
func (x *Index) prepareTags(ctx context.Context, op string, reqs []TagRequest) ([]preparedTag, error) {
	type prepared = preparedTag
	preps := make([]prepared, len(reqs))
	var texts []string
	var textOf []int // request index of each text
	for i, r := range reqs {
		if err := checkPath(op, r.Path); err != nil {
			return nil, err
		}
		if err := checkText(op, r.Path, r.Task); err != nil {
			return nil, err
		}
		if err := checkText(op, r.Path, r.RelatedApps...); err != nil {
			return nil, err
		}
		p := prepared{path: r.Path, task: r.Task, apps: make([]string, 0, len(r.RelatedApps))}
		for _, a := range r.RelatedApps {
			if a != "" {
				p.apps = append(p.apps, a)
			}
		}
		if r.Vector != nil {
			if err := x.checkClientVector(op, r.Path, r.Vector); err != nil {
				return nil, err
			}
			p.client = &Vector{Model: r.Vector.Model, Values: append([]float32(nil), r.Vector.Values...)}
		}
		tagged := p.task != "" || len(p.apps) > 0
		if x.emb != nil && tagged && (p.client == nil || p.client.Model != x.emb.Name()) {
			text := embed.TagText(p.task, p.apps, p.path)
			p.ownHash = textHash(text)
			texts = append(texts, text)
			textOf = append(textOf, i)
		}
		preps[i] = p
	}
	// The embedding of a large batch keeps every core busy; the update
	// below runs on one. A large Bleve backlog is sent beside the embedding
	// (the same batch, by the same function queries call) rather than after
	// the update, where it would compete with the next request's embedding.
	if len(texts) >= bleveOverlapTexts && x.bleveBacklog() >= bleveBatchMax/2 {
		flushed := make(chan struct{})
		go func() {
			defer close(flushed)
			x.flushBleve()
		}()
		defer func() { <-flushed }()
	}
	if len(texts) > 0 {
		vecs, err := x.embedMany(ctx, texts)
		if err != nil {
			return nil, ioErr(op, reqs[textOf[0]].Path, err)
		}
		for j, i := range textOf {
			preps[i].own = vecs[j]
		}
	}
	return preps, nil
}

// commitTags writes prepared tags in one transaction, durable when it
// returns; ctxs[i] is the call of preps[i], for its durable record. A path
// given twice gets the later one's tags.
func (x *Index) commitTags(op string, ctxs []context.Context, preps []preparedTag) ([]Record, error) {
	now := stamp(time.Now())
	recs := make([]Record, len(preps))
	path := ""
	if len(preps) == 1 {
		path = preps[0].path
	}
	err := x.update(op, path, func(tx txn, e *effects) error {
		for i, p := range preps {
			s, ok, err := getRecord(tx.Tx, p.path)
			if err != nil {
				return err
			}
			if !ok {
				s = &stored{CreatedAt: now, UpdatedAt: now}
			}
			s.Task, s.RelatedApps = p.task, p.apps
			if x.saver != nil {
				// Durable outside the index before the index commits. The
				// durable record's creator fills a gap in the index's (a tag that
				// overtook its file's create on the way to the index).
				saved, err := x.saver.SaveRecord(ctxs[i], p.path, func(cur Saved, curOK bool) Saved {
					d := savedOf(s, p.client)
					if curOK && (!ok || s.CreatedBy == "") && cur.CreatedBy != "" {
						d.CreatedBy, d.CreatedAt = cur.CreatedBy, cur.CreatedAt
					}
					if curOK && !ok && !cur.CreatedAt.IsZero() {
						d.CreatedAt = cur.CreatedAt
					}
					return d
				})
				if err != nil {
					return err
				}
				s.CreatedBy = saved.CreatedBy
				if !saved.CreatedAt.IsZero() {
					s.CreatedAt = stamp(saved.CreatedAt)
				}
			}
			if err := e.putRecord(tx, p.path, s, true); err != nil {
				return err
			}
			old, err := vectorsOf(tx.vec, p.path)
			if err != nil {
				return err
			}
			for _, o := range old {
				if err := e.deleteVectorKey(tx, o.key); err != nil {
					return err
				}
			}
			if p.own != nil {
				if err := e.putVector(tx, p.path, x.emb.Name(), vecInProcess, p.ownHash, p.own); err != nil {
					return err
				}
			}
			if p.client != nil {
				if err := e.putVector(tx, p.path, p.client.Model, vecClient, 0, p.client.Values); err != nil {
					return err
				}
			}
			recs[i] = s.record(p.path)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return recs, nil
}

// bleveOverlapTexts is the smallest batch of texts whose embedding tagMany
// overlaps with a pending Bleve batch: smaller ones end before it would.
const bleveOverlapTexts = 64

// bleveBacklog is how many committed changes wait for Bleve.
func (x *Index) bleveBacklog() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return len(x.pending)
}

func (x *Index) checkClientVector(op, path string, v *Vector) error {
	m, ok := x.models[v.Model]
	if !ok {
		return errorf(op, KindInvalid, path, fmt.Errorf("%w %q", ErrUnknownModel, v.Model))
	}
	if err := checkVector(v.Values, m.Dims); err != nil {
		return errorf(op, KindInvalid, path, fmt.Errorf("model %q: %w", v.Model, err))
	}
	return nil
}

// embedOne embeds one text with the in-process embedder and checks what it got
// back, so that a misbehaving model cannot store garbage.
func (x *Index) embedOne(ctx context.Context, text string) ([]float32, error) {
	out, err := x.embedMany(ctx, []string{text})
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

func (x *Index) embedMany(ctx context.Context, texts []string) ([][]float32, error) {
	out, err := x.emb.Embed(ctx, texts)
	if err != nil {
		return nil, fmt.Errorf("embed with %s: %w", x.emb.Name(), err)
	}
	if len(out) != len(texts) {
		return nil, fmt.Errorf("embed with %s: %d vectors for %d texts", x.emb.Name(), len(out), len(texts))
	}
	for _, v := range out {
		if err := checkVector(v, x.emb.Dims()); err != nil {
			return nil, fmt.Errorf("embed with %s: %w", x.emb.Name(), err)
		}
	}
	return out, nil
}
