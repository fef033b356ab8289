package index

import (
	"fmt"
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
}

// Move is one record that Reconcile moved.
type Move struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// Changed reports whether Reconcile changed anything visible.
func (r ReconcileReport) Changed() bool {
	return len(r.Created)+len(r.Renamed)+len(r.Removed)+len(r.Updated) > 0
}

func (r ReconcileReport) String() string {
	return fmt.Sprintf("%d created, %d renamed, %d removed, %d updated",
		len(r.Created), len(r.Renamed), len(r.Removed), len(r.Updated))
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
// Records of files that still exist at their path keep their tags whatever their
// inode now is (an editor that saves by rename-over keeps the file's tags). Inode
// reuse can make a new file inherit a deleted file's record; the rule cannot tell.
// An invalid path in files is KindInvalid and changes nothing.
// Write guarantee: serialised with every other write, durable when it returns.
func (x *Index) Reconcile(files []FileState) (ReconcileReport, error) {
	var rep ReconcileReport
	byPath := make(map[string]FileState, len(files))
	for _, f := range files {
		if err := checkPath("reconcile", f.Path); err != nil {
			return rep, err
		}
		byPath[f.Path] = f
	}
	err := x.update("reconcile", "", func(tx *buntdb.Tx, e *effects) error {
		rep = ReconcileReport{}
		recs, err := scanRange(tx, recPrefix, "r;")
		if err != nil {
			return err
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
		for _, r := range gone { // recs, hence gone, are in path order
			p := r.key[len(recPrefix):]
			s, err := decodeStored(r.val)
			if err != nil {
				return fmt.Errorf("record %q: %w", p, err)
			}
			vecs, err := vectorsOf(tx, p)
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
			s := &stored{RelatedApps: []string{}, CreatedAt: mt, UpdatedAt: mt, Ino: f.Ino, Seen: &seen{Size: f.Size, ModTime: mt}}
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
			if changed {
				if mt.After(s.UpdatedAt) {
					s.UpdatedAt = mt
				}
				rep.Updated = append(rep.Updated, k.path)
			}
			if dirty {
				s.Ino = f.Ino
				s.Seen = &seen{Size: f.Size, ModTime: mt}
				if err := e.putRecord(tx, k.path, s, false); err != nil {
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
