// Package feed is the daemon's change feed: a numbered, bounded, persisted
// history of every change to the backing directory, which clients read from a
// cursor (GET /v1/changes, `semfs changes`, .semfs/changes) instead of
// listing the tree again and again.
//
// Words used here:
//
//   - event: one committed change (create, write, truncate, mkdir, remove,
//     rename, symlink, link, setattr, tag), with the app it is attributed to
//     ("" unattributed, "host" for the backing directory's own changes).
//   - rev: an event's number; it grows by one per event of the daemon's
//     history, so a reader sees a gap as such.
//   - epoch: a random number naming one unbroken history. A history is
//     broken when events a client may have read cannot be given again: the
//     bound dropped them, the index was rebuilt, or a restart could not keep
//     the log. A new epoch then starts at rev 1.
//   - cursor: an epoch and the rev of the last event a client has (0: none),
//     written as an opaque string. A cursor of another epoch, from before the
//     oldest kept event, or after the newest one answers reset: the client
//     lists the tree again and goes on from the fresh cursor it is given.
//     Never a gap without a reset.
//
// Invariants:
//
//   - Events are appended in the order the daemon committed the changes:
//     the core's change stream (in namespace order, applied in batches by the
//     daemon's Batcher, off every reply path), tags after the index committed
//     them, and the watcher's and start-up reconcile's host changes after the
//     index took them.
//   - An event is written to the log file (a write(2), no fsync) before any
//     reader can see it. Recording happens after the change committed (off
//     every reply path), so a crash can fall between a change and its event;
//     the log therefore continues only after a clean close, which syncs it
//     and marks its header. A log found not closed cleanly (a crash, SIGKILL,
//     a power cut) starts a new epoch: every cursor resets, none skips a
//     change.
//   - Host changes are what the index made of a look at the backing
//     directory (files), plus what HostDirs, the daemon's list of
//     directories, makes of the directories there: the index keeps no
//     directory.
//   - Host changes to files are what the index reported, told apart with
//     what the watcher knows of the batch (server.AttribOf: an attribute
//     change with the size kept is a touch, a setattr) and with Sizes, the
//     size each file had at a client's last change of it, where the index
//     had none (a host's truncate after a client's write).
//   - History is bounded by count and age (Options.Keep, KeepFor); what the
//     bound drops turns old cursors into resets.
//   - Recording (Enqueue) costs an append to a queue under a short lock; the
//     log's own goroutine fills, numbers, encodes and writes each batch with
//     one write(2), then publishes it. Readers copy nothing under the lock,
//     and call Settle first to see everything recorded before they asked.
//
// Per-caller view: a reader sees only events on paths it may see (View). In
// root mode that is every path whose directories the caller could search
// (SearchView); a future policy supplies its own View. A rename seen from
// one side only is shown as a create (moved into view) or a remove (moved
// out of view).
package feed
