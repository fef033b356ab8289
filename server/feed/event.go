package feed

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/semfs/semfs/server"
)

// Event is one change of the history, as the API shows it.
type Event struct {
	Rev  uint64    `json:"rev"`
	Op   string    `json:"op"`
	Path string    `json:"path"`           // the new path of a rename
	From string    `json:"from,omitempty"` // rename only: the old path
	Type string    `json:"type"`           // file, dir, symlink, fifo; "" when unknown (a non-directory removed)
	App  string    `json:"app"`            // the attributed caller; "" unattributed; AppHost
	Size int64     `json:"size"`           // the entry's size when the event was recorded, where known
	At   time.Time `json:"at"`
	// Sized: Size is already the file's (a write whose close told it,
	// server.Change.Sized), so the log's Fill need not look. Not shown.
	Sized bool `json:"-"`
}

// Event ops.
const (
	OpCreate   = "create"
	OpWrite    = "write"    // one per settled write burst
	OpTruncate = "truncate" // a settled write burst that truncated the file
	OpMkdir    = "mkdir"
	OpRemove   = "remove"
	OpRename   = "rename"
	OpSymlink  = "symlink"
	OpLink     = "link"
	OpSetattr  = "setattr" // the mode changed, or a file's times were set (a touch)
	OpTag      = "tag"     // tagged or retagged
)

// AppHost is the app of changes made in the backing directory by host
// processes (the watcher, the start-up reconcile).
const AppHost = "host"

// FromChange is the event of a change of the core's stream (without Rev).
func FromChange(c server.Change) Event {
	e := Event{Path: c.Path, Type: c.Type, App: c.App, Size: c.Size, At: c.Time}
	switch c.Op {
	case server.ChangeCreate:
		switch {
		case c.Link:
			e.Op = OpLink
		case c.Type == server.TypeSymlink:
			e.Op = OpSymlink
		default:
			e.Op = OpCreate
		}
	case server.ChangeWrite:
		e.Op, e.Sized = OpWrite, c.Sized
		if c.Trunc {
			e.Op = OpTruncate
		}
	case server.ChangeRename:
		e.Op, e.Path, e.From = OpRename, c.NewPath, c.Path
	case server.ChangeRemove:
		e.Op = OpRemove
	case server.ChangeMkdir:
		e.Op = OpMkdir
	case server.ChangeSetMode, server.ChangeSetTimes:
		e.Op = OpSetattr
	default:
		e.Op = c.Op.String()
	}
	if e.Type == "" && c.IsDir {
		e.Type = server.TypeDir
	}
	return e
}

// Cursor is a position in the history: after event Rev of epoch Epoch.
type Cursor struct {
	Epoch uint64
	Rev   uint64
}

// cursorPrefix marks the cursor's format, so that a later one can be told
// apart (and answered with a reset rather than misread).
const cursorPrefix = "c1."

// String is the opaque form clients hold.
func (c Cursor) String() string {
	return cursorPrefix + strconv.FormatUint(c.Epoch, 16) + "." + strconv.FormatUint(c.Rev, 10)
}

// ErrBadCursor is a cursor string this daemon never gave out.
var ErrBadCursor = errors.New("not a change cursor (give back a cursor the daemon answered, or none to start)")

// ParseCursor reads a cursor's opaque form.
func ParseCursor(s string) (Cursor, error) {
	rest, ok := strings.CutPrefix(s, cursorPrefix)
	if !ok {
		return Cursor{}, fmt.Errorf("%q: %w", s, ErrBadCursor)
	}
	ep, rv, ok := strings.Cut(rest, ".")
	if !ok {
		return Cursor{}, fmt.Errorf("%q: %w", s, ErrBadCursor)
	}
	e, err1 := strconv.ParseUint(ep, 16, 64)
	r, err2 := strconv.ParseUint(rv, 10, 64)
	if err1 != nil || err2 != nil || e == 0 {
		return Cursor{}, fmt.Errorf("%q: %w", s, ErrBadCursor)
	}
	return Cursor{Epoch: e, Rev: r}, nil
}
