// Package nfs serves a server.FS over NFSv3 (MOUNT and NFS on one TCP port),
// using github.com/willscott/go-nfs v0.0.4 for the protocol and translating
// every call into the core's path-based, identity-carrying operations.
//
// Invariants:
//
//   - Identity. Each accepted connection gets its own go-nfs server and handler.
//     The mount's app ("/@APP") is carried inside every file handle (an app id
//     from a persistent table, MAC'd so a client cannot forge it), because MOUNT
//     and the data calls arrive on different connections. The caller's AUTH_UNIX
//     uid is read from the RPC record stream at the net.Conn (rpcConn): go-nfs
//     serves one call per connection at a time and rpcConn never lets it read
//     ahead, so the credentials seen belong to the call being served; a call
//     answered on one of the connection's workers (workers.go) carries its own
//     request to the worker's handler. Every core
//     call carries both (uid, gid and gids) through server.WithIdentity. A root
//     daemon checks the caller on every call (server/cred.go): path-based calls
//     run with its credentials; READ and WRITE through the shared descriptor
//     cache (opened as the daemon) are decided per request as nfsd decides them
//     (server.File.CheckIO), LOOKUP needs search on the directory, and ACCESS
//     answers the kernel's bits. Under a --policy file the core decides
//     every call made with the identity (server/view.go); where the adapter
//     reaches paths as the daemon (handle resolution, its per-call attribute
//     cache, a listing read again), it applies the call's view (view.go): a
//     hidden path's handle is STALE and its name is missing.
//   - Handles. A handle is 32 bytes: app id, inode, generation (birth time), MAC.
//     It resolves in O(depth) through a persistent inode -> (parent, name) map in
//     the state directory and is verified by a stat of the path (same inode and
//     generation) before use; it survives renames and daemon restarts and is STALE
//     only when its file is really gone.
//   - Containment. The adapter never follows a symlink (Stat is Lstat), refuses
//     names the core refuses (seen in the record stream before go-nfs joins them
//     into paths), and reaches the backing directory only through server.FS.
//   - Stability. A WRITE is acknowledged FILE_SYNC only after fsync; an UNSTABLE
//     WRITE is answered UNSTABLE (rpcConn rewrites go-nfs's unconditional
//     FILE_SYNC) and COMMIT fsyncs. The write verifier changes on every start.
//     An UNSTABLE WRITE that ends a file of at most 64 KiB (a file being
//     created) has its writeback started once it is answered (writeback.go):
//     a hint to the kernel, which changes no reply and no durability (COMMIT
//     still fsyncs) but lets the COMMIT that follows find the data written.
//   - Errors. Core errors reach go-nfs as *fs.PathError{Err: syscall.Errno} and
//     reach the client with the exact nfsstat3 from toNFS (rpcConn replaces the
//     status go-nfs guessed). Panics in the adapter are recovered and answered
//     with NFS3ERR_SERVERFAULT.
//   - Hostile input. No byte reaches go-nfs, the fast path or the MOUNT
//     answers before rpcConn has read the call record whole (fragments joined,
//     at most 4 MiB, buffered only as bytes arrive) and checkCall has bounded
//     every length in it: credentials (RFC 5531), and each NFSv3 and MOUNT
//     procedure's handles, names, paths and data (RFC 1813). A call out of
//     bounds is answered GARBAGE_ARGS (or PROG_UNAVAIL, PROG_MISMATCH,
//     PROC_UNAVAIL, AUTH_BADCRED, RPC_MISMATCH) and goes no further; a stream
//     that is not RPC, a read error or a failed write closes the connection.
//     server.Limits bound each connection: the idle timeout while no call is in
//     progress, the body timeout for a record once its first byte arrived and
//     for each reply write, and MaxConns per listener.
//   - Locks. The server is the core's change-stream sink too (Apply), called
//     inside the core's namespace lock: it evicts cached descriptors there
//     but closes them on another goroutine (fdCache.evictLater), since a
//     close of a file written through takes that lock (server.Sink).
//   - The handle map is a cache: a damaged one is set aside and rebuilt (old
//     handles answer STALE), never a reason not to start.
//
// Where go-nfs v0.0.4 is wrong on the wire (LINK arguments, EXCLUSIVE create,
// RPC error codes, padding after handles, the MOUNT procedures it lacks, and the
// attributes it fakes: atime = ctime = mtime, used = size, fsid 0), rpcConn
// translates the call or the reply (SETATTR and MKNOD it answers itself,
// setattr.go: go-nfs skipped changes that changed nothing, so a non-owner's
// chown answered OK, dropped setuid, setgid and sticky, and made MKNOD's
// handle before the node) (attrs.go puts the file system's atime,
// ctime, blocks*512 and the backing directory's device as fsid into every
// fattr3 of its replies, as the fast path encodes them); no library code is
// copied. The calls that
// dominate a busy client (GETATTR, LOOKUP, ACCESS, READ, WRITE, READDIRPLUS,
// COMMIT, and CREATE setting at most the mode) are answered by the adapter
// itself in the record stream (fastpath.go) with the same handles, identity,
// errors and stability; everything else goes through go-nfs. CREATE runs
// go-nfs's own sequence of billy and handler calls, so its checks and statuses
// are go-nfs's by construction, but for one shortcut: an UNCHECKED or GUARDED
// create in a directory first tries to make the name, and only when that fails
// takes go-nfs's steps from the start (its lookup of the new name would have
// found nothing otherwise); and UNCHECKED over an existing file applies only
// a size, as Linux's nfsd does (billyFS.existingCreated). Large WRITEs, READDIRPLUS, large READs the page
// cache cannot serve whole or that arrive while other calls of the connection
// are in progress, and small READs, WRITEs and CREATEs while other calls are in
// progress are answered on up to four worker goroutines per connection
// (workers.go), COMMIT on a goroutine of its own (commitlater.go; inline on a
// connection that has sent each of its last 256 calls after the reply to the
// one before, commitInline): replies may
// leave in another order than the calls came, which RPC allows (the client
// matches them by xid), and calls a client has in flight at once may take
// effect in any order, as on Linux's nfsd. GETATTR, LOOKUP, ACCESS and READs
// served from the page cache on the connection's reading goroutine make raw
// system calls only (socket I/O through server/sockio, the core's inline stat
// and page-cache read), which keeps the Go runtime's monitor thread asleep
// between a lone client's calls; a large READ the page cache cannot serve
// goes to a worker, a small one is read there with a plain pread as before.
// A READ of 16 KiB or more whose pages are all in the page cache (cachestat)
// goes out by sendfile behind its header, on either goroutine, without the
// copies into and out of a reply buffer (rpcConn.replyFile). Its bytes are
// the same as a copy's, with two differences only a write or truncate racing
// the READ can show: the data is the file's as the socket takes it, so a
// WRITE answered just after the READ's reply may show in it (the reply's
// attributes are from before); and a truncation between the count's choice
// and the send fills the missing tail with zeros (logged) where a copy would
// have answered a shorter count.
//
// Options.NoFastPath (semfs serve --fast-path=off or nfs-off) leaves those calls
// to go-nfs too. TestFastPathAnswersAsGoNFS serves one tree both ways and
// holds the two to the same reply, byte for byte, for every procedure the fast
// path answers (good and bad arguments, pipelined on two connections, with
// renames and removals from a third in between; CREATEs, beside a READ that
// sends them to the workers, in one directory per side; 1 MiB READs from the
// page cache and from the disk). Where go-nfs was wrong the
// go-nfs path is corrected in front of it, so both answer as Linux's nfsd: an
// empty handle is BADHANDLE (go-nfs: INVAL), WRITE to a directory is ISDIR
// (go-nfs: INVAL), LOOKUP needs search permission on the directory (go-nfs
// asks none), READDIRPLUS below go-nfs's minimum counts is TOOSMALL, READDIR
// is the adapter's on both (readdir.go: go-nfs refuses counts below 1024), and a
// failed call carries no attributes on either path. The deliberate
// differences, each normalised by the test and nothing else:
//
//   - ACCESS of a root daemon is answered by the adapter on both paths (go-nfs
//     grants every bit asked), so the test checks it against itself.
//   - A new listing's cookie verifier is a random id on both paths (dircache.go),
//     so it is compared by position, not value.
//   - READDIRPLUS pages are filled by real encoded sizes on the fast path and by
//     go-nfs's 512 bytes an entry on its own, so a small page ends earlier
//     through go-nfs; the test compares pages that hold the whole rest of a
//     listing, from cookie 0 and from a later cookie.
//   - Times in the replies of a batch that writes (each path's WRITE happens at
//     its own moment), and atime everywhere (a READ moves it, so the path asked
//     second sees the first one's read).
//   - A CREATE's new handle and the fileids in its reply: each side creates in
//     a directory of its own (c0, c1), so the inodes differ; the rest (status,
//     attributes, the directory's post-op attributes) is compared.
//
// Files: server.go (listener, one go-nfs server per connection), limits.go,
// rpcconn.go (the record stream), callcheck.go (bounds of every call),
// request.go (what a call's header and arguments say),
// handler.go (go-nfs Handler: mount, handles, listings), billyfs.go and file.go
// (the billy filesystem over server.FS), fastpath.go, workers.go, commitlater.go, attrs.go, handle.go and handlemap.go
// (persistent handles), resolve.go, fdcache.go, dircache.go, writeback.go,
// errors.go (the Kind mapping), fileinfo.go, identify.go, xdr.go.
package nfs
