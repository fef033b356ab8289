// Package ninep serves the core's tree (server.FS) over 9P2000.L with
// github.com/hugelgupf/p9's server, as a thin adapter. Its invariants:
//
//   - Every file operation is a core call by path, made with the identity of the
//     attach the fid descends from; the package never touches the backing
//     directory itself, so containment is the core's (os.Root, no symlink
//     followed as a last component). Names from the wire are checked with
//     server.CheckName; "." and ".." never reach the core.
//   - Identity is decided once per Tattach from the aname ("/" or "" = whole tree,
//     "@APP" = whole tree as APP, anything else refused with EACCES) and n_uname
//     (resolved by the core's Registry on each call), and is carried by every fid
//     walked from that attach, with the uid's groups from the user database: a
//     root daemon checks every core call against them (server/cred.go), the
//     shim's inline ones included; an opened fid keeps the access its open got.
//     On a connection where uid 0 attached (a kernel mount), later attaches
//     also vouch for the group a chgrp or a create names (vouch.go,
//     server/vouch.go). p9 drops both fields, so a per-connection shim
//     (conn.go) rewrites the aname into an attach token (attach.go).
//   - A fid names a file, not a path: it remembers the identity (inode and
//     birth time) of the file it was walked to or created as, and every use of
//     it by path (Tgetattr, Tlopen, Tsetattr, Treadlink, listing) checks it, so
//     a fid whose file another client replaced under its name answers ESTALE,
//     never the other file's data; an opened fid keeps its descriptor, and so
//     its own file, as a local open file does. A walk from a directory fid
//     checks the directory too (server.FS.LstatIn: one statx on the descriptor
//     the lookup opens anyway), and a fid the shim walked and p9 walks again
//     later keeps the identity the client was told of (fidtable.go, taught).
//   - Errors reach clients as errnos from one exhaustive mapping of server.Kind
//     (ErrnoOf); a panic in a request is answered EIO and logged, never kills a
//     connection or the daemon.
//   - Data a client got an Rwrite for is in the backing file; clunking a written
//     fid closes its server.File, which sends the file's updatedAt to the index.
//   - POSIX record locks are held in one table shared by all connections and
//     released when a connection ends (lock.go); they coordinate 9P clients only.
//   - The hot requests of a mount (Twalk, Tgetattr, Tread, Twrite, Tclunk, and
//     Tlcreate and Tlopen on a fresh fid) are answered by the shim itself
//     through the same p9.File methods, byte for byte as p9 would (fast.go,
//     shimfids.go): p9's per-message goroutine hand-off and per-Twrite buffer
//     were most of the server's cost. There is one route, with no switch: the
//     shim answers what it can without waiting and leaves p9 the rest (a read
//     from the disk, a write a snapshot holds, the index, anything in .semfs
//     that may run a query, and whatever p9 must decide), so no request type is
//     answered by two implementations chosen by a setting.
//     Its socket I/O and stats are raw system calls (server/sockio), which keep the
//     Go runtime's monitor thread asleep between a client's requests.
//   - What the shim knows of each fid is one entry with one state in the fid
//     table (fidtable.go, whose glossary defines the words shim-only, stale,
//     clunked here, teach, hand-over, background reply and giving up); every
//     change is a transition method that refuses, with a logged error, what
//     the state does not allow. A fid-making request waits for the one in
//     flight, however long (a snapshot holding a create): p9 answers every
//     request the shim hands it, since the shim drops one reusing a tag p9
//     has in flight, as p9 would (tags.go). Only on a connection that sent a
//     malformed request (p9's NOTAG reply loses the shim its tags) is the wait
//     bounded: there, when the shim can no longer tell which *file p9 holds
//     for a fid (a client's fid-making request unanswered for makeWait), it
//     gives up on the connection with a log line and a count
//     (Server.FastPathGiveUps, semfs_fast_path_given_up_total{protocol="9p"}),
//     never silently, and never while its own request is in flight (whose
//     reply only it may see; TestFastPathGivesUpWithoutLosingReplies).
//     TestFastPathAnswersAsP9 (one connection, step by step) and
//     TestFastPathAnswersAsP9AcrossConnections (two connections, pipelined,
//     with renames and removals by the host in between) hold the shim's replies
//     to p9's own (a test-only mode, export_test.go) byte for byte, with two
//     deliberate differences. Where p9 refuses or skips a request without
//     asking any file of ours, the shim answers as Linux and diod do
//     (TestAnswersAsLinux): ENOTDIR for a Twalk through a file and for a
//     create, mkdir, symlink, mknod, link, rename or unlink in an
//     unopened fid that is not a directory (p9: EINVAL), and the core's
//     answer to a Trenameat of a name onto itself (p9: OK, even for a missing
//     name; rename(2): ENOENT). And a Tread the shim
//     answers from the page cache (preadv2 RWF_NOWAIT, which never waits)
//     does not move the file's atime, where p9's pread does, so atime in a
//     later Rgetattr may differ (relatime would move it at most once a day).
//     The test ignores atime and nothing else.
//   - Unsupported operations fail cleanly: extended attributes other than the
//     core's user.semfs.* (server.FS.GetXattr: a file's tags, see
//     server/meta) with EOPNOTSUPP, decided by the shim before p9, which
//     would answer EINVAL (xattr.go); device and socket nodes with EPERM
//     (Tmknod of a character or block device creates nothing; a fifo is made).
//   - The .semfs namespace (server/meta) needs nothing here: the core routes
//     its paths, and the shim's inline answers reach it through the same core
//     calls.
//   - Every size and count from the wire is bounded before anything is sized by
//     it, in the shim and in p9 behind it (bounds.go): a message whose framing
//     cannot be trusted (size below the header or above the msize, a request
//     before Tversion or a second one, a string running past a message the shim
//     decodes) closes the connection with a rate-limited log line; one whose framing is
//     intact is answered (Rlerror EINVAL for a Twalk of more than 16 names,
//     p9's own Rlerror for what it refuses), and a Tread or Treaddir count is
//     shortened to fit the msize.
//   - Options.Limits hold on every listener (timeouts.go, server.go): a message
//     whose first byte arrived must arrive whole within BodyTimeout; a
//     connection is closed after IdleTimeout without a request only until its
//     first successful Tattach (a mount cannot reconnect); one connection over
//     MaxConns on a listener is accepted and closed at once, with a
//     rate-limited log line. Any read error ends the connection.
package ninep
