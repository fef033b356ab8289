// Package nfs serves a server.FS over NFSv3 (MOUNT and NFS on one TCP port),
// answering every NFS procedure itself and leaving MOUNT to
// github.com/willscott/go-nfs v0.0.4, translating every call into the core's
// path-based, identity-carrying operations.
//
// Invariants:
//
//   - Identity. Each accepted connection gets its own go-nfs server and handler.
//     The mount's app ("/@APP") is carried inside every file handle (an app id
//     from a persistent table, MAC'd so a client cannot forge it), because MOUNT
//     and the data calls arrive on different connections. The caller's AUTH_UNIX
//     uid is read from the RPC record stream at the net.Conn (rpcConn), with
//     each call: a call answered on one of the connection's workers
//     (workers.go) carries its own request to the worker's handler. Every core
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
//     names the core refuses (request.badName: every handle lookup of the call
//     fails with it), and reaches the backing directory only through server.FS.
//   - Stability. A WRITE is acknowledged FILE_SYNC only after fsync; an UNSTABLE
//     WRITE is answered UNSTABLE and COMMIT fsyncs. The write verifier changes on every start.
//     An UNSTABLE WRITE that ends a file of at most 64 KiB (a file being
//     created) has its writeback started once it is answered (writeback.go):
//     a hint to the kernel, which changes no reply and no durability (COMMIT
//     still fsyncs) but lets the COMMIT that follows find the data written.
//   - Errors. Core errors reach the client with the exact nfsstat3 from toNFS,
//     the one mapping of every Kind (status, pathError). Panics in the adapter
//     are recovered and answered with NFS3ERR_SERVERFAULT.
//   - Hostile input. No byte reaches go-nfs, the adapter's answers or the
//     MOUNT answers before rpcConn has read the call record whole (fragments joined,
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
// One route per procedure. The adapter answers every NFSv3 procedure itself,
// in the record stream (dispatch.go; fastpath.go, setattr.go, make.go,
// namespace.go, info.go, readdir.go), with one reply encoder (encode.go) and one error mapping
// (errors.go: the core's Kind to nfsstat3); go-nfs v0.0.4 answers only the
// MOUNT program (MNT, UMNT, NULL: Mount and ToHandle in handler.go), and
// answerMount the MOUNT procedures it lacks (EXPORT, DUMP, UMNTALL). Calls
// that change the tree are one core call each, made as the caller (Create,
// Mkdir, Symlink, Mknod, Link, Remove, Rename, SetAttr), so the kernel
// decides what the caller may do and in which order it learns why not: a
// caller who may not search a directory gets ACCES before it learns that a
// name exists there (EXIST), as on Linux's nfsd. LOOKUP asks the core for
// search permission on the directory (CheckAccess), as nfsd does. No library
// code is copied, and no reply is rewritten. Until issue 30 go-nfs answered
// every procedure the adapter did not, its replies patched to agree, and a
// switch (--fast-path=nfs-off) sent every call its way; both are gone, and
// the proof against an independent server is integration/differential
// (generated sequences compared with nfs-ganesha) with the kernel and
// pjdfstest suites, while TestAnswers holds the adapter's answers to the
// cases those never make (forged and empty handles, truncated arguments,
// renames by another connection, pipelining).
//
// Threads. Small calls are answered on the connection's reading goroutine.
// GETATTR, LOOKUP, ACCESS and READs served from the page cache make raw
// system calls only there (socket I/O through server/sockio, the core's
// inline stat and page-cache read), which keeps the Go runtime's monitor
// thread asleep between a lone client's calls (answerInline). Large WRITEs,
// READDIRPLUS, large READs the page cache cannot serve whole or that arrive
// while other calls of the connection are in progress, and small READs,
// WRITEs and CREATEs while other calls are in progress are answered on up to
// four worker goroutines per connection (workers.go), COMMIT on a goroutine of
// its own (commitlater.go; inline on a connection that has sent each of its
// last 256 calls after the reply to the one before, commitInline): replies may
// leave in another order than the calls came, which RPC allows (the client
// matches them by xid), and calls a client has in flight at once may take
// effect in any order, as on Linux's nfsd.
//
// Attributes. Every fattr3 carries the file system's own atime, ctime, space
// used (blocks*512) and the backing directory's device as fsid (appendFattr).
// CREATE applies its sattr3 as the caller, to a new file only; an UNCHECKED
// create of an existing file applies only the size, as nfsd does.
//
// sendfile. A READ of 16 KiB or more whose pages are all in the page cache
// (cachestat) goes out by sendfile behind its header, on either goroutine,
// without the copies into and out of a reply buffer (rpcConn.replyFile). Its
// bytes are the same as a copy's, with two differences only a write or
// truncate racing the READ can show: the data is the file's as the socket
// takes it, so a WRITE answered just after the READ's reply may show in it
// (the reply's attributes are from before); and a truncation between the
// count's choice and the send fills the missing tail with zeros (logged)
// where a copy would have answered a shorter count.
//
// Files: server.go (listener, one go-nfs server per connection for MOUNT),
// limits.go, the record stream: rpcconn.go (the connection), framing.go
// (reading call records), callcheck.go (bounds of every call), request.go
// (what a call's header says), dispatch.go (which code answers a call),
// send.go (writing replies), encode.go (building replies); handler.go
// (go-nfs Handler: MOUNT, handles), call.go (one call's state while it is
// answered: the call value every answer is a method of), billyfs.go (the
// mount app MOUNT hands go-nfs; CREATE's create), fastpath.go (GETATTR, LOOKUP,
// ACCESS, READ, WRITE, READDIRPLUS, COMMIT, CREATE),
// readdir.go, setattr.go (SETATTR, MKNOD), make.go (MKDIR, SYMLINK, LINK),
// namespace.go (REMOVE, RMDIR, RENAME), info.go (NULL, READLINK, FSSTAT,
// FSINFO, PATHCONF), workers.go, commitlater.go, writeback.go, handle.go and
// handlemap.go (persistent handles), resolve.go, fdcache.go, dircache.go,
// errors.go (the Kind mapping), fileinfo.go, identify.go, view.go, xdr.go.
package nfs
