package index

import (
	"errors"
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
)

// Change is one file event of the core's change stream.
type Change struct {
	Op        ChangeOp
	Path      string
	NewPath   string
	CreatedBy string
	Ino       uint64
	At        time.Time
}

// Apply applies changes in order, as Create, Touch, Rename and Remove would one by
// one, but in one transaction and so with one sync to disk: a burst of creates
// (an untar, 2,000 files over NFS) costs one fsync per batch instead of one per
// file. A change that is invalid, or a Touch of a path the index holds nothing
// of, is skipped and counted; it does not fail the others. The error is for
// storage failures only, and then nothing of the batch was applied.
// Write guarantee: serialised with every other write, durable when it returns.
func (x *Index) Apply(changes []Change) (skipped int, err error) {
	if len(changes) == 0 {
		return 0, nil
	}
	err = x.update("apply", changes[0].Path, func(tx *buntdb.Tx, e *effects) error {
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

func applyOne(tx *buntdb.Tx, e *effects, c Change) error {
	switch c.Op {
	case OpCreate:
		if err := checkPath("create", c.Path); err != nil {
			return err
		}
		if err := checkText("create", c.Path, c.CreatedBy); err != nil {
			return err
		}
		return createTx(tx, e, c.Path, c.CreatedBy, c.Ino, stamp(c.At))
	case OpTouch:
		if err := checkPath("touch", c.Path); err != nil {
			return err
		}
		return touchTx(tx, e, c.Path, stamp(c.At))
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
	}
	return errorf("apply", KindInvalid, c.Path, errors.New("unknown change"))
}
