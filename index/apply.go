package index

import (
	"errors"
	"os"
	"path/filepath"
	"time"

	"github.com/tidwall/buntdb"
)

// ChangeOp names one file event for Apply.
type ChangeOp uint8

const (
	OpCreate ChangeOp = iota + 1 // Create(Path, CreatedBy, Ino, At)
	OpTouch                      // Touch(Path, At); a path without a record is skipped
	OpRename                     // Rename(Path, NewPath, At)
	OpRemove                     // Remove(Path)
	OpMode                       // Path's permission bits are now Mode; a path without a record is skipped
)

// Change is one file event of the core's change stream.
type Change struct {
	Op        ChangeOp
	Path      string
	NewPath   string
	CreatedBy string
	Ino       uint64
	Mode      uint32 // permission bits (OpCreate, OpMode; 0 unknown)
	At        time.Time
	// Left is, for OpTouch, the file's size and mtime as the change left
	// them, where the core knows them (a touch's setattr reads them back):
	// the next Reconcile compares the file with them instead of its mtime
	// with At, so that a host's write within the same tick of the kernel's
	// clock as the touch (an mtime no later than At) is still seen. Nil:
	// compare with At.
	Left *Left
}

// Left is a file's size and mtime as a change of the core's left them.
type Left struct {
	Size    int64
	ModTime time.Time
}

// Apply applies changes in order, as Create, Touch, Rename and Remove would one by
// one, but in one transaction and so with one sync to disk: a burst of creates
// (an untar, 2,000 files over NFS) costs one fsync per batch instead of one per
// file. A change that is invalid, or a Touch of a path the index holds nothing
// of, is skipped and counted; it does not fail the others. The error is for
// storage failures only, and then nothing of the batch was applied.
// Write guarantee: serialised with every other write, and visible to every
// read that starts after it returns; on disk within the page cache only (see
// noSync): a SIGKILL keeps it, a power cut may not.
func (x *Index) Apply(changes []Change) (skipped int, err error) {
	if len(changes) == 0 {
		return 0, nil
	}
	err = x.write("apply", changes[0].Path, noSync, func(tx txn, e *effects) error {
		skipped = 0
		for _, c := range changes {
			err := applyOne(tx, e, c)
			if err == nil {
				continue
			}
			var ie *Error
			if errors.As(err, &ie) && (ie.Kind == KindInvalid || ie.Kind == KindNotFound) {
				skipped++
				continue
			}
			return err
		}
		return nil
	})
	return skipped, err
}

func applyOne(tx txn, e *effects, c Change) error {
	switch c.Op {
	case OpCreate:
		if err := checkPath("create", c.Path); err != nil {
			return err
		}
		if err := checkText("create", c.Path, c.CreatedBy); err != nil {
			return err
		}
		return createTx(tx, e, c.Path, c.CreatedBy, c.Ino, c.Mode, stamp(c.At))
	case OpTouch:
		if err := checkPath("touch", c.Path); err != nil {
			return err
		}
		return touchTx(tx, e, c.Path, stamp(c.At), c.Left)
	case OpRename:
		if err := checkPath("rename", c.Path); err != nil {
			return err
		}
		if err := checkPath("rename", c.NewPath); err != nil {
			return err
		}
		if c.Path == c.NewPath {
			return nil
		}
		if err := checkMove(c.Path, c.NewPath); err != nil {
			return err
		}
		return moveTree(tx, e, c.Path, c.NewPath, stamp(c.At))
	case OpRemove:
		if err := checkPath("remove", c.Path); err != nil {
			return err
		}
		return dropTree(tx, e, c.Path)
	case OpMode:
		if err := checkPath("mode", c.Path); err != nil {
			return err
		}
		return modeTx(tx, e, c.Path, c.Mode)
	}
	return errorf("apply", KindInvalid, c.Path, errors.New("unknown change"))
}

// noSync: Apply's transaction is written to records.db but not synced. Every
// change Apply takes is recoverable without it: a created file's creator and
// time are durable in the file's own record (server.MetaXattr or the journal),
// written before the create was acknowledged and flushed by the file's fsync,
// and the daemon's start-up reconcile takes them back; updatedAt is rebuilt from
// mtime; renames and removals are what the walk finds. A sync per batch was a
// second fsync per NFS COMMIT beside the file's own (libnfs creating 4 KiB
// files: a third of the index's CPU per create). Tags and every other write
// stay synced.
//
// What stays exact: Bleve is told a generation only after records.db holds it
// on disk (syncRecordsFile, before each Bleve batch and at Close), so Open's
// "records.db behind Bleve" still means records.db lost synced commits, and a
// power cut after unsynced applies is seen as Bleve out of step (rebuilt), not
// as damage.
const noSync = false

// syncPolicy sets the sync policy of records.db and vectors.db. Precondition:
// x.mu held (every write holds it, so no other transaction commits under the
// changed policy).
func (x *Index) syncPolicy(p buntdb.SyncPolicy) error {
	return errors.Join(setSync(x.db, p), setSync(x.vdb, p))
}

// syncRecordsLocked makes records.db durable if an Apply left it unsynced
// (Close). Precondition: x.mu and blMu held.
func (x *Index) syncRecordsLocked() error {
	if !x.unsynced {
		return nil
	}
	if err := x.syncRecordsFile(); err != nil {
		return err
	}
	x.unsynced = false
	return nil
}

// syncRecordsFile makes records.db durable with an fsync of a descriptor of
// its own (recFile), which needs neither x.mu nor buntdb's lock: a Bleve batch
// syncs records.db first (Bleve must not learn a generation the disk may not
// hold), and as a synced buntdb write under x.mu that sync held up every
// index write and query for its duration. An NFS COMMIT's apply waited
// behind it at every 1,024th file of a burst of creates (3-25 ms, where a
// COMMIT takes 0.3 ms). An fsync flushes the file whichever descriptor asks,
// so it covers every commit written before it.
//
// buntdb's shrink writes a new file and renames it over records.db; then the
// descriptor names the old one, and the new one is opened and synced instead.
// Precondition: blMu held (recFile is blMu's), x.mu may or may not be held.
func (x *Index) syncRecordsFile() error {
	p := filepath.Join(x.dir, recordsFile)
	for range 4 {
		if x.recFile == nil {
			f, err := os.Open(p)
			if err != nil {
				return ioErr("sync", x.dir, err)
			}
			x.recFile = f
		}
		if err := x.recFile.Sync(); err != nil {
			return ioErr("sync", x.dir, err)
		}
		if x.onRecordsSync != nil {
			x.onRecordsSync()
		}
		have, err1 := x.recFile.Stat()
		cur, err2 := os.Stat(p)
		if err1 == nil && err2 == nil && os.SameFile(have, cur) {
			x.syncs.Add(1)
			return nil
		}
		_ = x.recFile.Close() // replaced meanwhile: sync the file there now
		x.recFile = nil
	}
	return ioErr("sync", x.dir, errors.New("records.db was replaced during every try to sync it"))
}
