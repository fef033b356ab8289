package index

import (
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/tidwall/buntdb"
)

// ReconcileReport says what Reconcile fixed; the daemon logs it.
type ReconcileReport struct {
	Created []string `json:"created"` // files the index had no record of (CreatedBy "")
	Renamed []Move   `json:"renamed"` // records that followed their inode to a new path
	Removed []string `json:"removed"` // records whose file is gone
	Updated []string `json:"updated"` // files changed behind the index's back: UpdatedAt refreshed
	// For the change feed, which tells apart what the fields above merge:
	// Shrunk are the Updated files now smaller than the index last saw them
	// (a truncate rather than a write; unknown, so not listed, when a write
	// through the server came since); Replaced are the Removed records whose
	// inode is now at another path that had a record of its own (a rename
	// over an existing file: that path's record stays, as for any file
	// still at its path).
	Shrunk   []string `json:"shrunk,omitempty"`
	Replaced []Move   `json:"replaced,omitempty"`
	// Resized are the Updated files whose size differs from the one the
	// index last saw, and Unsized those whose earlier size it did not know
	// (a write through the server came since): the rest kept their size,
	// which with an attribute change (a touch) the feed tells from a write.
	Resized []string `json:"resized,omitempty"`
	Unsized []string `json:"unsized,omitempty"`
	// Chmod are the files whose permission bits differ from the record's
	// (FileState.Mode; neither unknown).
	Chmod []string `json:"chmod,omitempty"`

	// From the files' durable records (FileState.Saved), which win over the
	// index: records whose creator (or creation time), tags, or client vector
	// the index did not hold as saved. After a damaged or lost index these are
	// what was recovered; in normal runs they are the writes a crash kept from
	// reaching the index (a create acknowledged, its batch not yet applied).
	RecoveredCreators []string `json:"recoveredCreators,omitempty"`
	RecoveredTags     []string `json:"recoveredTags,omitempty"`
	RecoveredVectors  []string `json:"recoveredVectors,omitempty"`
	// Unsaved are records holding a creator or tags whose file has no durable
	// record (files tagged by an older semfs, or a lost journal): the caller
	// saves them (Backfill) so that they are not in the index only.
	Unsaved []string `json:"unsaved,omitempty"`
}

// Move is one record that Reconcile moved.
type Move struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// Changed reports whether Reconcile changed anything visible.
func (r ReconcileReport) Changed() bool {
	return len(r.Created)+len(r.Renamed)+len(r.Removed)+len(r.Updated)+len(r.Chmod) > 0
}

func (r ReconcileReport) String() string {
	return fmt.Sprintf("%d created, %d renamed, %d removed, %d updated; from durable records: %d creators, %d tags, %d vectors; %d not yet saved",
		len(r.Created), len(r.Renamed), len(r.Removed), len(r.Updated),
		len(r.RecoveredCreators), len(r.RecoveredTags), len(r.RecoveredVectors), len(r.Unsaved))
}

// Reconcile brings the index in line with the backing directory as the daemon
// found it at start: files holds every regular file and symlink with its inode,
// size and mtime. In one transaction:
//
//   - a record whose path is gone but whose inode is now at a path the index has
//     no record of is moved there (tags, CreatedBy and vectors follow; in-process
//     vectors are re-embedded in the background). When several gone records share
//     an inode the first by path wins; when the inode is at several new paths
//     (hard links) the first by path gets the record;
//   - any other record whose path is gone is dropped;
//   - a file with no record gets one, CreatedBy "", CreatedAt = UpdatedAt = mtime;
//   - a file whose size or mtime differ from what the last Reconcile saw (or, if a
//     write came through the server since, whose mtime is after UpdatedAt) gets
//     UpdatedAt = its mtime, if later.
//
// Then every record takes the creator, creation time and tags of its file's
// durable record (FileState.Saved) where they differ, and its client vector
// where the index lacks it: the durable record is written before the index,
// so it is never older (see ReconcileReport for what is reported).
//
// Records of files that still exist at their path keep their tags whatever their
// inode now is (an editor that saves by rename-over keeps the file's tags). Inode
// reuse can make a new file inherit a deleted file's record; the rule cannot tell.
// An invalid path in files is KindInvalid and changes nothing.
// Write guarantee: serialised with every other write, durable when it returns.
func (x *Index) Reconcile(files []FileState) (ReconcileReport, error) {
	return x.reconcile(nil, files, nil)
}

// Guard lets a Reconcile run beside other writers. The caller takes it before
// it starts listing the backing directory; from then on, every record path a
// committed write changes (a create, rename, remove or tag through the server,
// arriving while the list is made) is noted, and Guard.Reconcile leaves those
// paths alone, both as records and as listed files: the write saw the path
// after the list did, so its record is the newer. Without it, a file created
// after the walk passed its directory would lose its record (not in the list)
// and a file renamed would be renamed back (its inode is at the old path in the
// list). Writes that change only vectors (background re-embedding) are not
// noted: they say nothing about the file on disk.
type Guard struct {
	x       *Index
	touched map[string]struct{} // guarded by x.mu
	done    bool
}

// Guard starts noting written paths for a Reconcile to come; see Guard. The
// caller must end it with Reconcile or Close.
func (x *Index) Guard() *Guard {
	g := &Guard{x: x, touched: map[string]struct{}{}}
	x.mu.Lock()
	x.guards = append(x.guards, g)
	x.mu.Unlock()
	return g
}

// Reconcile is Index.Reconcile for files listed after g was taken, leaving
// alone every path written since (see Guard); it ends g. It returns in
// Skipped how many paths it left alone.
// Write guarantee: serialised with every other write, durable when it returns.
func (g *Guard) Reconcile(files []FileState) (rep ReconcileReport, skipped int, err error) {
	defer g.Close()
	return g.x.reconcileGuarded(files, g)
}

// Close stops noting paths. Safe to call more than once.
func (g *Guard) Close() {
	g.x.mu.Lock()
	defer g.x.mu.Unlock()
	g.dropLocked()
}

// dropLocked removes g from the index's guards. Precondition: x.mu held for writing.
func (g *Guard) dropLocked() {
	if g.done {
		return
	}
	g.done = true
	g.x.guards = slices.DeleteFunc(g.x.guards, func(o *Guard) bool { return o == g })
}

func (x *Index) reconcileGuarded(files []FileState, g *Guard) (ReconcileReport, int, error) {
	skipped := 0
	rep, err := x.reconcile(nil, files, func() map[string]struct{} {
		// Inside the transaction, under x.mu: no write can slip in between
		// taking the set and committing, and the reconcile's own writes are
		// not noted.
		g.dropLocked()
		skipped = len(g.touched)
		return g.touched
	})
	return rep, skipped, err
}

// ReconcileIn is Reconcile limited to scopes: each scope is a path, standing
// for its record and every record below it ("" is the whole index), and files
// must hold every regular file and symlink inside the scopes as they are now.
// Records outside the scopes are not looked at, so a rename is followed when
// both its old and its new path are in scope. The daemon calls it for the
// paths a host process changed behind the server's back (server.Watcher).
// An invalid path is KindInvalid and changes nothing.
// Write guarantee: serialised with every other write, durable when it returns.
func (x *Index) ReconcileIn(scopes []string, files []FileState) (ReconcileReport, error) {
	for _, s := range scopes {
		if s == "" {
			return x.reconcile(nil, files, nil)
		}
		if err := checkPath("reconcile", s); err != nil {
			return ReconcileReport{}, err
		}
	}
	if len(scopes) == 0 {
		return ReconcileReport{}, nil
	}
	return x.reconcile(scopes, files, nil)
}

// recordsIn returns the records in scopes (nil: all), in path order, each once.
func recordsIn(tx *buntdb.Tx, scopes []string) ([]kv, error) {
	if scopes == nil {
		return scanRange(tx, recPrefix, "r;")
	}
	seen := map[string]bool{}
	var out []kv
	for _, s := range scopes {
		recs, err := recordsUnder(tx, s)
		if err != nil {
			return nil, err
		}
		for _, r := range recs {
			if !seen[r.key] {
				seen[r.key] = true
				out = append(out, r)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].key < out[j].key })
	return out, nil
}

// reconcile: see ReconcileIn. skip, when set, is called once inside the
// transaction and returns the paths to leave alone (Guard).
func (x *Index) reconcile(scopes []string, files []FileState, skip func() map[string]struct{}) (ReconcileReport, error) {
	var rep ReconcileReport
	byPath := make(map[string]FileState, len(files))
	for _, f := range files {
		if err := checkPath("reconcile", f.Path); err != nil {
			return rep, err
		}
		byPath[f.Path] = f
	}
	err := x.update("reconcile", "", func(tx txn, e *effects) error {
		rep = ReconcileReport{}
		recs, err := recordsIn(tx.Tx, scopes)
		if err != nil {
			return err
		}
		if skip != nil {
			if s := skip(); len(s) > 0 {
				for p := range s {
					delete(byPath, p)
				}
				recs = slices.DeleteFunc(recs, func(r kv) bool {
					_, ok := s[r.key[len(recPrefix):]]
					return ok
				})
			}
		}
		have := make(map[string]bool, len(recs))
		var gone []kv
		type existing struct {
			path string
			s    *stored
		}
		var keep []existing
		for _, r := range recs {
			p := r.key[len(recPrefix):]
			have[p] = true
			if _, ok := byPath[p]; !ok {
				gone = append(gone, r)
				continue
			}
			s, err := decodeStored(r.val)
			if err != nil {
				return fmt.Errorf("record %q: %w", p, err)
			}
			keep = append(keep, existing{p, s})
		}
		// Unrecorded files by inode, each list in path order.
		var unrecorded []string
		byIno := map[uint64][]string{}
		for p := range byPath {
			if !have[p] {
				unrecorded = append(unrecorded, p)
			}
		}
		sort.Strings(unrecorded)
		for _, p := range unrecorded {
			if ino := byPath[p].Ino; ino != 0 {
				byIno[ino] = append(byIno[ino], p)
			}
		}
		claimed := map[string]bool{}
		// The kept paths by their inode now, for Replaced: built only when a
		// record is gone (most batches have none).
		var keptIno map[uint64]string
		if len(gone) > 0 {
			keptIno = make(map[uint64]string, len(keep))
			for _, k := range keep {
				if f := byPath[k.path]; f.Ino != 0 && f.Ino != k.s.Ino {
					keptIno[f.Ino] = k.path
				}
			}
		}
		for _, r := range gone { // recs, hence gone, are in path order
			p := r.key[len(recPrefix):]
			s, err := decodeStored(r.val)
			if err != nil {
				return fmt.Errorf("record %q: %w", p, err)
			}
			vecs, err := vectorsOf(tx.vec, p)
			if err != nil {
				return err
			}
			to := ""
			if s.Ino != 0 {
				for _, c := range byIno[s.Ino] {
					if !claimed[c] {
						to = c
						break
					}
				}
			}
			if to == "" {
				if err := e.deleteRecord(tx, p); err != nil {
					return err
				}
				for _, v := range vecs {
					if err := e.deleteVectorKey(tx, v.key); err != nil {
						return err
					}
				}
				rep.Removed = append(rep.Removed, p)
				if over, ok := keptIno[s.Ino]; ok && s.Ino != 0 {
					rep.Replaced = append(rep.Replaced, Move{From: p, To: over})
				}
				continue
			}
			claimed[to] = true
			if err := moveItems(tx, e, []kv{r}, vecs, func(string) string { return to }, time.Time{}); err != nil {
				return err
			}
			rep.Renamed = append(rep.Renamed, Move{From: p, To: to})
			// Now it is an existing record at its new path.
			keep = append(keep, existing{to, s})
		}
		for _, p := range unrecorded {
			if claimed[p] {
				continue
			}
			f := byPath[p]
			mt := stamp(f.ModTime)
			s := &stored{RelatedApps: []string{}, CreatedAt: mt, UpdatedAt: mt, Ino: f.Ino, Mode: f.Mode, Seen: &seen{Size: f.Size, ModTime: mt}}
			if err := x.mergeSaved(tx, e, p, s, f.Saved, &rep); err != nil {
				return err
			}
			if err := e.putRecord(tx, p, s, true); err != nil {
				return err
			}
			rep.Created = append(rep.Created, p)
		}
		sort.Slice(keep, func(i, j int) bool { return keep[i].path < keep[j].path })
		for _, k := range keep {
			f := byPath[k.path]
			s := k.s
			mt := stamp(f.ModTime)
			var changed bool
			if s.Seen != nil {
				changed = s.Seen.Size != f.Size || !s.Seen.ModTime.Equal(mt)
			} else {
				changed = mt.After(s.UpdatedAt)
			}
			dirty := changed || s.Ino != f.Ino || s.Seen == nil || s.Seen.Size != f.Size || !s.Seen.ModTime.Equal(mt)
			if f.Mode != 0 && s.Mode != f.Mode {
				// Only of the same file: not another one moved over the
				// path (a rename over it), nor a record that followed its
				// inode here, whose mode may be a hard link's other
				// name's, chmodded since (a chmod in the same batch as the
				// move is missed).
				if s.Mode != 0 && s.Ino == f.Ino && !claimed[k.path] {
					rep.Chmod = append(rep.Chmod, k.path)
				}
				s.Mode = f.Mode
				dirty = true
			}
			before := len(rep.RecoveredCreators) + len(rep.RecoveredTags)
			if err := x.mergeSaved(tx, e, k.path, s, f.Saved, &rep); err != nil {
				return err
			}
			reindex := len(rep.RecoveredCreators)+len(rep.RecoveredTags) > before
			dirty = dirty || reindex
			if x.saver != nil && f.Saved == nil && (s.CreatedBy != "" || s.tagged()) {
				rep.Unsaved = append(rep.Unsaved, k.path)
			}
			if changed {
				if mt.After(s.UpdatedAt) {
					s.UpdatedAt = mt
				}
				rep.Updated = append(rep.Updated, k.path)
				switch {
				case s.Seen == nil:
					rep.Unsized = append(rep.Unsized, k.path)
				case f.Size != s.Seen.Size:
					rep.Resized = append(rep.Resized, k.path)
					if f.Size < s.Seen.Size {
						rep.Shrunk = append(rep.Shrunk, k.path)
					}
				}
			}
			if dirty {
				s.Ino = f.Ino
				s.Seen = &seen{Size: f.Size, ModTime: mt}
				if err := e.putRecord(tx, k.path, s, reindex); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return ReconcileReport{}, err
	}
	return rep, nil
}

// mergeSaved makes record s of path say what its durable record d says (nil:
// nothing to merge), noting what it changed in rep. Precondition: inside
// Reconcile's transaction.
func (x *Index) mergeSaved(tx txn, e *effects, path string, s *stored, d *Saved, rep *ReconcileReport) error {
	if d == nil {
		return nil
	}
	if d.CreatedBy != s.CreatedBy || !d.CreatedAt.IsZero() && !stamp(d.CreatedAt).Equal(s.CreatedAt) {
		s.CreatedBy = d.CreatedBy
		if !d.CreatedAt.IsZero() {
			s.CreatedAt = stamp(d.CreatedAt)
			if s.CreatedAt.After(s.UpdatedAt) {
				s.UpdatedAt = s.CreatedAt
			}
		}
		rep.RecoveredCreators = append(rep.RecoveredCreators, path)
	}
	vecs, err := vectorsOf(tx.vec, path)
	if err != nil {
		return err
	}
	if !sameTags(s, d) {
		s.Task, s.RelatedApps = d.Task, nonNil(d.RelatedApps)
		rep.RecoveredTags = append(rep.RecoveredTags, path)
		// As Tag does: the old vectors described the old tags.
		for _, v := range vecs {
			if err := e.deleteVectorKey(tx, v.key); err != nil {
				return err
			}
		}
		vecs = nil
		if s.tagged() {
			e.dirty = append(e.dirty, path) // the in-process vector, re-embedded in the background
		}
	}
	if d.Vector == nil {
		return nil
	}
	m, known := x.models[d.Vector.Model]
	if !known || checkVector(d.Vector.Values, m.Dims) != nil {
		return nil // a model this index does not take: the record keeps it
	}
	key := vecKey(path, d.Vector.Model)
	for _, v := range vecs {
		if v.key != key {
			continue
		}
		if vv, err := decodeVector(v.val); err == nil && vv.kind == vecClient && slices.Equal(vv.values, d.Vector.Values) {
			return nil
		}
	}
	rep.RecoveredVectors = append(rep.RecoveredVectors, path)
	return e.putVector(tx, path, d.Vector.Model, vecClient, 0, append([]float32(nil), d.Vector.Values...))
}
