package server

import (
	"context"
	"time"
)

// ChangeOp says what a Change did to the namespace.
type ChangeOp uint8

const (
	ChangeCreate ChangeOp = iota + 1 // a regular file, symlink, FIFO or hard link appeared at Path
	ChangeWrite                      // Path's contents or size changed (coalesced, see FS)
	ChangeRename                     // Path (a file or a whole directory) moved to NewPath
	ChangeRemove                     // Path (a file or an empty directory) was removed
	// Appended for the change feed (server/feed); the index keeps no record
	// of either, so its consumer skips them.
	ChangeMkdir   // directory Path was made
	ChangeSetMode // Path's permission bits were changed (SetAttr with a mode)
	// ChangeSetTimes: a regular file's or symlink's times were set (SetAttr
	// with times only: a touch), which the change feed reports as a
	// setattr, as it does a host's touch. Not for directories, whose times
	// every entry made in them moves too: a host's touch of one cannot be
	// told from that, so neither door reports it.
	ChangeSetTimes
)

func (op ChangeOp) String() string {
	switch op {
	case ChangeCreate:
		return "create"
	case ChangeWrite:
		return "write"
	case ChangeRename:
		return "rename"
	case ChangeRemove:
		return "remove"
	case ChangeMkdir:
		return "mkdir"
	case ChangeSetMode:
		return "setmode"
	case ChangeSetTimes:
		return "settimes"
	}
	return "unknown"
}

// Change is one event of the change stream that feeds the index.
type Change struct {
	Op      ChangeOp
	Path    string
	NewPath string // ChangeRename only
	App     string // the acting app ("" = unattributed); on ChangeCreate it becomes created_by
	Ino     uint64 // the created file's or directory's identity, Attr.FileID (ChangeCreate, ChangeMkdir)
	IsDir   bool   // the renamed or removed entry is a directory
	Time    time.Time

	// What the change feed (server/feed) tells apart beyond Op; the index
	// needs none of it. Constant strings and plain values, so filling them
	// costs the reply path nothing.
	Type  string // "file", "dir", "symlink" or "fifo" where the core knows it ("" otherwise)
	Link  bool   // ChangeCreate of a hard link (Link)
	Trunc bool   // ChangeWrite of a burst that truncated the file (O_TRUNC, a size set)
	Size  int64  // the entry's size where the core knows it (ChangeCreate, ChangeMkdir, ChangeSetTimes; ChangeWrite when Sized)
	// Mtime is, for ChangeSetTimes, the file's mtime as the touch left it
	// (with Size: the state the index compares a host's next change with).
	Mtime time.Time
	// Sized: a ChangeWrite's Size is the file's size as the close after the
	// burst's last write found it (the stat it makes for the Watcher), so the
	// change feed need not stat the file again. Bursts with no close (NFS)
	// or whose close found no size leave the feed to look.
	Sized bool
	// Mode is the permission bits (UnixPerm) of a file created or whose
	// mode was set (ChangeCreate, ChangeSetMode), or of a directory made
	// (ChangeMkdir): the index keeps a file's, the change feed's list of
	// directories a directory's, so that a host's chmod is told from the
	// core's.
	Mode uint32
}

// Entry types of Change.Type.
const (
	TypeFile    = "file"
	TypeDir     = "dir"
	TypeSymlink = "symlink"
	TypeFIFO    = "fifo"
)

// Sink receives the change stream. Apply is called synchronously, in namespace
// order (the FS serialises namespace changes), after the change reached the disk; an
// error is logged and left for the next start's reconcile to repair, because the
// filesystem operation itself has already happened.
//
// Apply runs holding the FS's namespace lock, so it must not wait for
// anything that takes it: no namespace change through the FS and no
// File.Close or File.Sync of a file written through (each sends the file's
// pending ChangeWrite, which takes the lock); such a call waits for itself,
// and every later change and the FS's Close wait with it. Hand that work to
// another goroutine (nfs.Server.Apply closes evicted files so).
type Sink interface {
	Apply(ctx context.Context, c Change) error
}

// ReadySink is a Sink that can tell, without waiting, whether an Apply made now
// would wait (a queue with no room). The core asks before a change a caller must
// not wait for (FS.TryCreate, File.TryClose): a protocol front end answering in
// its connection's only reader. A Sink that does not implement it is taken never
// to wait, as a SinkFunc that records or discards does not.
type ReadySink interface {
	Sink
	Ready() bool
}

// SinkFunc adapts a function to Sink.
type SinkFunc func(ctx context.Context, c Change) error

// Apply calls f.
func (f SinkFunc) Apply(ctx context.Context, c Change) error { return f(ctx, c) }
