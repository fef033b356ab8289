package index

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/tidwall/buntdb"
)

// Saved is a file's durable record, kept outside the index (by the daemon: with
// the file, as an extended attribute, or in a journal beside the index): what
// the index holds for the file that the file system cannot tell it. The index is
// a cache of these; Reconcile rebuilds it from them.
type Saved struct {
	CreatedBy   string
	CreatedAt   time.Time // zero when unknown
	Task        string
	RelatedApps []string
	Vector      *Vector // the client-supplied vector, if any
}

// Saver keeps durable records. The index calls SaveRecord inside a tag write,
// under its write lock, before the commit: a tag the index acknowledges is
// already durable outside it. update gets the current durable record (ok=false
// if none) and returns the new one; SaveRecord returns what it stored. An error
// fails the tag.
type Saver interface {
	SaveRecord(ctx context.Context, path string, update func(cur Saved, ok bool) Saved) (Saved, error)
}

// Damage is what Open found wrong with the index's own files (and repaired as
// far as it can: the caller recovers the rest with Reconcile from the durable
// records). The zero value means nothing was wrong.
type Damage struct {
	// Records describes damage to records.db: "missing", "empty", "behind
	// Bleve (truncated?)", "unreadable, moved aside to …". "" when sound.
	Records string `json:"records,omitempty"`
	// Bleve describes damage to bleve/ ("missing", "unreadable", "out of
	// step"); Bleve is rebuilt from records.db, so this alone loses nothing.
	Bleve string `json:"bleve,omitempty"`
	// New is true when records.db did not exist and nothing says it ever
	// did: a first start, or a whole index directory lost (which only the
	// caller can tell, from the durable records it finds).
	New bool `json:"new,omitempty"`
}

// RecordsDamaged reports damage that may have lost records.
func (d Damage) RecordsDamaged() bool { return d.Records != "" }

func (d Damage) String() string {
	var s []string
	if d.Records != "" {
		s = append(s, "records.db "+d.Records)
	}
	if d.Bleve != "" {
		s = append(s, "bleve/ "+d.Bleve)
	}
	if len(s) == 0 {
		return "none"
	}
	return fmt.Sprint(s)
}

// Damage returns what Open found wrong with the index's files, including damage
// an earlier Open found that was never cleared. Safe for concurrent use.
func (x *Index) Damage() Damage {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.damage
}

// MarkDamaged records that the index lost records (what) until ClearDamage:
// every Open until then reports it in Damage().Records. The daemon marks what
// only it can tell (a whole index directory lost) before it may refuse to start,
// so that the next start refuses too instead of finding a sound, emptier index.
// Write guarantee: serialised with every other write, durable when it returns.
func (x *Index) MarkDamaged(what string) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.markDamagedLocked(what)
}

// markDamagedLocked is MarkDamaged. Precondition: x.mu held, or x not shared.
func (x *Index) markDamagedLocked(what string) error {
	x.damage.Records, x.damage.New = what, false
	return x.setDamage(what)
}

// ClearDamage forgets recorded damage, once the records were recovered.
// Write guarantee: serialised with every other write, durable when it returns.
func (x *Index) ClearDamage() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if err := x.setDamage(""); err != nil {
		return err
	}
	x.damage.Records, x.prevDamage = "", ""
	return nil
}

func (x *Index) setDamage(what string) error {
	err := x.db.Update(func(tx *buntdb.Tx) error {
		if what == "" {
			_, err := tx.Delete(damageKey)
			if err == buntdb.ErrNotFound {
				return nil
			}
			return err
		}
		_, _, err := tx.Set(damageKey, what, nil)
		return err
	})
	return ioErr("mark damage", x.dir, err)
}

// MoveAside renames the index's stores (records.db, vectors.db and bleve/) in dir to
// <name>.<why>-<time>, so that the next Open starts them empty; the daemon's
// --rebuild-index. Missing stores are skipped. The index at dir must not be open.
func MoveAside(dir, why string) ([]string, error) {
	var moved []string
	stamp := time.Now().UTC().Format("20060102T150405Z")
	for _, n := range []string{recordsFile, vectorsFile, bleveDir} {
		p := filepath.Join(dir, n)
		if _, err := os.Lstat(p); err != nil {
			continue
		}
		to := p + "." + why + "-" + stamp
		if err := os.Rename(p, to); err != nil {
			return moved, ioErr("move aside", dir, err)
		}
		moved = append(moved, to)
	}
	return moved, nil
}

// saved is the durable record equivalent of s and its client vector.
func savedOf(s *stored, v *Vector) Saved {
	return Saved{CreatedBy: s.CreatedBy, CreatedAt: s.CreatedAt, Task: s.Task, RelatedApps: s.RelatedApps, Vector: v}
}

// sameTags reports whether the record already says what d says about tags.
func sameTags(s *stored, d *Saved) bool {
	return s.Task == d.Task && slices.Equal(nonNil(s.RelatedApps), nonNil(d.RelatedApps))
}

func nonNil(a []string) []string {
	if a == nil {
		return []string{}
	}
	return a
}

// Backfill saves, with the Saver, the records of paths (a ReconcileReport's
// Unsaved: records only the index holds) and returns how many it saved. A path
// without a record is skipped; a path the Saver refuses is reported in the error
// and the others are still saved.
// Write guarantee: serialised with every other write.
func (x *Index) Backfill(ctx context.Context, paths []string) (int, error) {
	if x.saver == nil {
		return 0, nil
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return 0, errorf("backfill", KindClosed, "", ErrClosed)
	}
	n := 0
	var errs []error
	for _, p := range paths {
		var s *stored
		var client *Vector
		err := viewBoth(x.db, x.vdb, func(tx txn) error {
			var ok bool
			var err error
			if s, ok, err = getRecord(tx.Tx, p); err != nil || !ok {
				return err
			}
			vecs, err := vectorsOf(tx.vec, p)
			if err != nil {
				return err
			}
			for _, v := range vecs {
				vv, err := decodeVector(v.val)
				if err == nil && vv.kind == vecClient {
					_, model, _ := splitVecKey(v.key)
					client = &Vector{Model: model, Values: vv.values}
				}
			}
			return nil
		})
		if err == nil && s != nil {
			_, err = x.saver.SaveRecord(ctx, p, func(Saved, bool) Saved { return savedOf(s, client) })
			if err == nil {
				n++
			}
		}
		if err != nil && len(errs) < 10 {
			errs = append(errs, fmt.Errorf("%s: %w", p, err))
		}
	}
	if len(errs) > 0 {
		return n, ioErr("backfill", "", errors.Join(errs...))
	}
	return n, nil
}
