// Package server is the protocol-neutral core of semfs: every file operation that
// the NFSv3 and 9P front ends perform goes through an *FS, which owns three
// invariants.
//
//   - Containment. The backing directory is opened once with os.OpenRoot; every
//     path is resolved beneath it by the kernel (openat2 with RESOLVE_BENEATH and
//     RESOLVE_NO_SYMLINKS, or os.Root where openat2 is missing; see resolve.go).
//     A directory one level below the root is resolved through a descriptor
//     kept from an earlier openat2 only after a statx of its name in the root
//     (not followed) shows that very directory (dirfds.go).
//     Paths are slash-separated, relative to that directory and made of
//     validated components (no "", ".", "..", "/" or NUL inside a component). The
//     last component of a path is never followed when it is a symlink: symlinks are
//     stored and returned, and operations that would act on a symlink's target
//     either act on the link itself (Lstat, Lchown, times, remove, rename) or fail
//     with KindInvalid / KindNotSupported.
//   - Identity. Front ends put what they learned from the connection (the mount's
//     app, the caller's uid) into the context with WithIdentity; the FS decides the
//     acting app (mount app, then a registered uid, then nobody). Requests never
//     name their own app. A daemon running as root runs each door's call with
//     the caller's fsuid, fsgid and groups (cred.go), so the kernel checks it as
//     it would check that user; a context without an Identity is the daemon's
//     own work and is not checked. A door may vouch for the one group a chgrp
//     or a create names (Identity.VouchedGroups, vouch.go).
//   - Errors. Every error returned is a *Error carrying Op, Kind and Path. Front
//     ends map Kind to their status codes in one exhaustive switch each.
//
// Policy. With Options.Policy (server/policy), every call made with a caller's
// Identity first asks the acting app's rules (view.go): a hidden path does not
// exist (KindNotFound; creating onto its name is KindPermission, never
// KindExists), and outside the app's read or write rights the call is
// KindPermission, or KindReadOnly for an app that may write nothing. Both
// front ends and the virtual tree go through these calls, so they agree.
//
// Durable records. With Options.Journal set, every file created through the FS
// has its creator and creation time on record before the create returns (and so
// before any front end acknowledges it): in the file's MetaXattr user extended
// attribute, or, for what cannot carry one (symlinks, FIFOs, read-only files of
// an unprivileged daemon, records too large, file systems without user
// attributes), in the journal beside the index, keyed by file identity. SaveMeta
// adds the tags. Records follow renames (an attribute moves with its inode; the
// journal is keyed by inode), hard links share one, and removing a file removes
// its record. They are written through the same containment-safe descriptors
// as everything else, never by path from the root.
//
// Virtual tree. With Options.Virtual set (the daemon's .semfs namespace,
// server/meta), every call on a path at or below its name in the root goes to
// it (virtual.go): both front ends, their fast paths included, serve it
// through the calls they make for real files. Its paths have stable inode
// numbers outside the real range (VirtualIno), it is read-only but for what
// it lets be written, a real file of its name is neither created nor walked,
// and Walk (reconcile, snapshots) never enters it.
//
// Every namespace mutation is reported, in order, to the Sink before the call
// returns; the daemon's Sink is a Batcher that applies them to the index in
// batches, and FS.Freeze and File.Sync flush it. Data writes are coalesced into one
// ChangeWrite per path per quiet period because NFSv3 has no close. The Sink
// is called holding the namespace lock, which a written File's Close and Sync
// take to send that ChangeWrite: a Sink must not close or sync one (see Sink).
package server
