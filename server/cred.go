package server

import (
	"context"
	"io/fs"
	"runtime"
	"slices"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Root mode. A daemon running as root can read and change every file, so it
// must decide for its callers what they may do, or a client claiming uid 1000
// reads root's 0600 files. It lets the kernel decide: each call a door makes for
// a caller other than root runs its system calls on a locked OS thread whose
// file-system credentials (fsuid, fsgid, supplementary groups) are the
// caller's, set and restored per call with raw system calls that act on that
// thread alone. With an fsuid other than 0 the kernel drops CAP_DAC_OVERRIDE,
// CAP_CHOWN, CAP_FOWNER and the other file capabilities from the thread, so
// opens, directory search, sticky directories, chown, chmod, utimes and the
// owner and group of new files (setgid directories included) all follow the
// caller's uid, gid and groups, ACLs included. Callers:
//
//   - a context with no Identity is the daemon's own work (reconcile, snapshots,
//     the NFS handle bookkeeping) and runs as the daemon;
//   - uid 0 keeps full access (no root squash: the doors listen on loopback,
//     and root on this host already owns the backing directory);
//   - a door's caller with no uid (NFS AUTH_NULL, 9P n_uname NoUID) and an uid
//     the kernel cannot take (-1) act as nobody (65534:65534), as knfsd's
//     anonuid does for unknown callers: leaving out the uid grants nothing.
//
// A daemon that is not root changes nothing: its callers get what it can do.

// Nobody is the uid and gid that anonymous callers act as in root mode.
const (
	NobodyUID = 65534
	NobodyGID = 65534
)

// maxGroups bounds a caller's supplementary groups (AUTH_UNIX carries 16;
// NGROUPS_MAX is 65536): the kernel copies them on every switch.
const maxGroups = 256

// cred is the file-system identity a call runs with in root mode.
type cred struct {
	uid, gid uint32
	groups   []uint32
}

// daemonCred is what a thread of a root daemon holds when it acts as itself,
// read once at New: the credentials every switch restores.
type daemonCred struct {
	gid    uint32
	groups []uint32
}

func readDaemonCred() (daemonCred, error) {
	gs, err := unix.Getgroups()
	if err != nil {
		return daemonCred{}, err
	}
	d := daemonCred{gid: uint32(unix.Getegid()), groups: make([]uint32, len(gs))}
	for i, g := range gs {
		d.groups[i] = uint32(g)
	}
	return d, nil
}

// callerCred returns the credentials ctx's calls run with, ok=false to run them
// as the daemon (see Root mode above).
func (f *FS) callerCred(ctx context.Context) (cred, bool) {
	if !f.root {
		return cred{}, false
	}
	id, ok := identityOf(ctx)
	switch {
	case !ok:
		return cred{}, false
	case !id.HasUID || id.UID == ^uint32(0):
		return cred{uid: NobodyUID, gid: NobodyGID}, true
	case id.UID == 0:
		return cred{}, false
	}
	c := cred{uid: id.UID, gid: NobodyGID, groups: id.Groups}
	if id.HasGID && id.GID != ^uint32(0) {
		c.gid = id.GID
	}
	if len(c.groups) > maxGroups {
		c.groups = c.groups[:maxGroups]
	}
	return c, true
}

// ChecksPermissions reports whether calls made with ctx are checked against the
// caller's permissions (root mode, a caller other than root). Front ends ask it
// where their protocol answers from state shared between callers.
func (f *FS) ChecksPermissions(ctx context.Context) bool {
	_, ok := f.callerCred(ctx)
	return ok
}

// as runs fn with the file-system credentials of ctx's caller on this thread
// (see Root mode above); fn's system calls are then checked as the caller's.
// fn must not block on anything but its system calls and must not emit
// changes: the sink may write files of its own, as the daemon.
func (f *FS) as(ctx context.Context, op, p string, fn func() error) error {
	c, ok := f.callerCred(ctx)
	if !ok {
		return fn()
	}
	// Credentials are per thread: keep this goroutine on this one until they
	// are restored, and keep every other goroutine off it meanwhile.
	runtime.LockOSThread()
	// The daemon's groups stay where the caller has the same (setgroups is a
	// third of a switch's cost).
	groups := !slices.Equal(c.groups, f.dcred.groups)
	if err := setThreadCred(c.uid, c.gid, c.groups, groups); err != nil {
		f.leave(true)
		return E(op, KindPermission, p, err)
	}
	defer f.leave(groups)
	return fn()
}

// leave restores the daemon's credentials on this thread and unlocks it. If the
// restore fails (it cannot, for a root process: setfsuid(0) is always allowed),
// the thread stays locked to the goroutine, so nothing else ever runs on it,
// and the runtime ends it with the goroutine; until then it only has less
// access than the daemon.
func (f *FS) leave(groups bool) {
	if err := setThreadCred(0, f.dcred.gid, f.dcred.groups, groups); err != nil {
		f.log.Error("could not restore the daemon's credentials on a thread; it is retired", "err", err)
		return
	}
	runtime.UnlockOSThread()
}

// setThreadCred sets the calling thread's supplementary groups (unless
// !setGroups), fsgid and fsuid. The raw system calls act on this thread only (syscall.Setgroups
// would change every thread of the process) and do not enter the scheduler.
// setfsuid and setfsgid report no errors, so each is read back.
// Precondition: the thread is locked to the calling goroutine.
func setThreadCred(uid, gid uint32, groups []uint32, setGroups bool) error {
	if setGroups {
		var list unsafe.Pointer
		if len(groups) > 0 {
			list = unsafe.Pointer(&groups[0])
		}
		// SYS_SETGROUPS takes 32-bit gids on every 64-bit Linux.
		if _, _, e := unix.RawSyscall(unix.SYS_SETGROUPS, uintptr(len(groups)), uintptr(list), 0); e != 0 {
			return e
		}
	}
	unix.RawSyscall(unix.SYS_SETFSGID, uintptr(gid), 0, 0)
	unix.RawSyscall(unix.SYS_SETFSUID, uintptr(uid), 0, 0)
	// (uid_t)-1 changes nothing and returns the current value.
	if got, _, _ := unix.RawSyscall(unix.SYS_SETFSGID, uintptr(^uint32(0)), 0, 0); uint32(got) != gid {
		return unix.EPERM
	}
	if got, _, _ := unix.RawSyscall(unix.SYS_SETFSUID, uintptr(^uint32(0)), 0, 0); uint32(got) != uid {
		return unix.EPERM
	}
	return nil
}

// Access is a set of permissions, as access(2)'s mode bits.
type Access uint32

const (
	MayExec  Access = unix.X_OK // search, for a directory
	MayWrite Access = unix.W_OK
	MayRead  Access = unix.R_OK
)

// CheckAccess is Access for a front end that must refuse a request unless the
// caller has every bit of want on p (listing a directory needs read, looking a
// name up in it needs search): nil when it has them or is not checked, else a
// KindPermission error of op. The decision and its error live here, once, for
// both protocols.
func (f *FS) CheckAccess(ctx context.Context, op, p string, want Access) error {
	got, err := f.Access(ctx, p, want)
	return needAll(op, p, got, want, err)
}

// needAll is CheckAccess's decision: err, or a KindPermission error of op
// unless got holds every bit of want.
func needAll(op, p string, got, want Access, err error) error {
	if err != nil {
		return err
	}
	if got&want != want {
		return E(op, KindPermission, p, nil)
	}
	return nil
}

// Access reports which of want ctx's caller has on p itself, as the kernel
// decides them for that caller (mode bits, owner, groups, ACLs); p's last
// component is never followed. The file is reached as the daemon, the way an
// NFS handle reaches it: the directories above it are not checked (every
// path-based call checks them itself). Outside root mode, and for uid 0, all of
// want is granted without a look (front ends ask only where ChecksPermissions).
func (f *FS) Access(ctx context.Context, p string, want Access) (Access, error) {
	if f.virtual(p) {
		return f.accessVirtual(ctx, p, want)
	}
	if err := f.viewSee(ctx, "access", p); err != nil {
		return 0, err
	}
	c, ok := f.callerCred(ctx)
	if !ok {
		return f.viewAccess(ctx, p, want), nil
	}
	var fd int
	if p == "" {
		fd = f.res.rootFd
	} else {
		d, name, err := f.parent("access", p)
		if err != nil {
			return 0, err
		}
		fd, err = unix.Openat(d.fd, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		d.close()
		if err != nil {
			return 0, wrap("access", p, err)
		}
		defer unix.Close(fd)
	}
	got, _, err := f.accessFd(ctx, c, fd)
	if err != nil {
		if se, ok := err.(*Error); ok {
			se.Path = p
		}
		return 0, err
	}
	return f.viewAccess(ctx, p, got) & want, nil
}

// AccessOf is Access for p whose attributes a the request has just read
// (its Lstat, or the stat that resolved its handle): where the kernel's
// answer for the caller and the file as a describes it (owner, group, mode,
// inode) is remembered (accessFd's grants), it decides without opening p,
// so an NFS LOOKUP or ACCESS of a caller other than root costs no open of
// the file and its directory; otherwise Access asks the kernel. A chmod or
// chown between the stat and the check is as if it came after the check,
// which Access's own fstat allows too.
func (f *FS) AccessOf(ctx context.Context, p string, a Attr, want Access) (Access, error) {
	if c, ok := f.callerCred(ctx); ok && !f.virtual(p) {
		if got, known := f.grants.get(keyOf(c, a.Dev, a.Ino, a.Mode, a.UID, a.GID)); known {
			if err := f.viewSee(ctx, "access", p); err != nil {
				return 0, err
			}
			return f.viewAccess(ctx, p, got) & want, nil
		}
	}
	return f.Access(ctx, p, want)
}

// CheckAccessOf is CheckAccess through AccessOf.
func (f *FS) CheckAccessOf(ctx context.Context, op, p string, a Attr, want Access) error {
	got, err := f.AccessOf(ctx, p, a, want)
	return needAll(op, p, got, want, err)
}

// accessFd returns every permission (read, write, execute) c has on the file
// fd refers to, and the file's owner. The kernel's answer for a caller and a
// file's owner, group and mode is remembered for grantTTL, so a repeated
// question (every NFS READ and WRITE asks one) costs one fstat instead of a
// credential switch there and back: chmod and chown are seen at once, a change
// of the file's ACL that leaves its mode alone within grantTTL. (ctime would
// see ACL changes too, but every write moves it.)
func (f *FS) accessFd(ctx context.Context, c cred, fd int) (got Access, owner uint32, err error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return 0, 0, wrap("access", "", err)
	}
	k := keyOf(c, st.Dev, st.Ino, modeOf(st.Mode), st.Uid, st.Gid)
	if got, ok := f.grants.get(k); ok {
		return got, st.Uid, nil
	}
	err = f.as(ctx, "access", "", func() error {
		// faccessat2 with AT_EACCESS checks the thread's fsuid and fsgid, not
		// the real ids.
		for _, bit := range [...]Access{MayRead, MayWrite, MayExec} {
			if unix.Faccessat2(fd, "", uint32(bit), unix.AT_EMPTY_PATH|unix.AT_EACCESS) == nil {
				got |= bit
			}
		}
		return nil
	})
	if err != nil {
		return 0, 0, err
	}
	f.grants.put(k, got)
	return got, st.Uid, nil
}

// accessKey is a caller and the state of a file that decide what the kernel
// grants the caller on it.
type accessKey struct {
	uid, gid   uint32
	groups     uint64 // hashGroups of the caller's groups
	dev, ino   uint64
	mode       fs.FileMode
	fuid, fgid uint32
}

// keyOf is the accessKey of caller c and a file (dev as st_dev and statx's
// major and minor through unix.Mkdev both encode it: the same bits).
func keyOf(c cred, dev, ino uint64, mode fs.FileMode, uid, gid uint32) accessKey {
	return accessKey{uid: c.uid, gid: c.gid, groups: hashGroups(c.groups), dev: dev, ino: ino, mode: mode, fuid: uid, fgid: gid}
}

// LstatReadable is LstatMany as the caller of ctx, with errs[i] a
// KindPermission error where that caller may not read paths[i] itself, as
// Access decides it. A content query checks every candidate file so: the
// kernel's answer remembered for the caller and the file as stat'ed
// (accessFd's grants) decides without opening the file, so a query asked
// again, or one sharing files with the last, costs one statx a file, not
// five. The directories above each file are searched as the caller (the
// statx's lookup), not checked for reading.
func (f *FS) LstatReadable(ctx context.Context, paths []string) (attrs []Attr, errs []error) {
	attrs, errs = f.LstatMany(ctx, paths)
	for i, p := range paths {
		if errs[i] != nil {
			continue
		}
		// What Access would answer, without its open where it can (AccessOf).
		got, err := f.AccessOf(ctx, p, attrs[i], MayRead)
		if err != nil {
			errs[i] = err
			continue
		}
		if got&MayRead == 0 {
			errs[i] = E("lstat", KindPermission, p, nil)
		}
	}
	return attrs, errs
}

// hashGroups identifies a list of groups (FNV-1a over the gids, in order: the
// same caller sends them in the same order every time). A caller able to make
// a colliding list could claim those groups outright (AUTH_UNIX sends them).
func hashGroups(gs []uint32) uint64 {
	h := uint64(14695981039346656037)
	for _, g := range gs {
		for i := 0; i < 4; i++ {
			h ^= uint64(byte(g >> (8 * i)))
			h *= 1099511628211
		}
	}
	return h ^ uint64(len(gs))
}

// grantTTL is how long the kernel's answer to an access question is used again.
const grantTTL = time.Second

// grantCache remembers the kernel's answers (FS.accessFd), at most max of them
// for grantTTL each: when full it starts again empty, which costs one switch
// per caller and file.
type grantCache struct {
	epoch time.Time // monotonic clock origin for the entries' ages
	max   int

	mu sync.Mutex
	m  map[accessKey]grant
}

type grant struct {
	a  Access
	at time.Duration // since epoch
}

func newGrantCache(max int) grantCache { return grantCache{epoch: time.Now(), max: max} }

func (g *grantCache) get(k accessKey) (Access, bool) {
	now := time.Since(g.epoch)
	g.mu.Lock()
	defer g.mu.Unlock()
	e, ok := g.m[k]
	if !ok || now-e.at >= grantTTL {
		return 0, false
	}
	return e.a, true
}

func (g *grantCache) put(k accessKey, a Access) {
	now := time.Since(g.epoch)
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.m == nil || len(g.m) >= g.max {
		g.m = make(map[accessKey]grant)
	}
	g.m[k] = grant{a: a, at: now}
}

// CheckIO decides a read or a write of the open file by ctx's caller, for a
// front end whose protocol has no open (NFSv3: the descriptor is shared by every
// caller, so the check is made per request), the way Linux's nfsd decides READ
// and WRITE: the kernel's access check for the caller, except that the file's
// owner may always read and write it (a client that created a file 0444, or
// fchmod'ed an open one, goes on writing through its open), and a file the
// caller may execute may be read (to load it). nil when allowed, KindPermission
// otherwise; always nil outside root mode and for uid 0.
func (fl *File) CheckIO(ctx context.Context, write bool) error {
	f := fl.fs
	if fl.v != nil {
		return fl.checkVirtualIO(ctx, write)
	}
	if err := f.viewIO(ctx, fl.Path(), write); err != nil {
		return err
	}
	c, ok := f.callerCred(ctx)
	if !ok {
		return nil
	}
	rc, err := fl.f.SyscallConn()
	if err != nil {
		return wrap("access", fl.Path(), err)
	}
	var got Access
	var owner uint32
	var aerr error
	// Control holds the descriptor open for the call (a concurrent Close waits).
	cerr := rc.Control(func(fd uintptr) { got, owner, aerr = f.accessFd(ctx, c, int(fd)) })
	op := "read"
	if write {
		op = "write"
	}
	switch {
	case cerr != nil:
		return wrap(op, fl.Path(), cerr)
	case aerr != nil:
		if se, ok := aerr.(*Error); ok {
			se.Path = fl.Path()
		}
		return aerr
	case owner == c.uid,
		write && got&MayWrite != 0,
		!write && got&(MayRead|MayExec) != 0:
		return nil
	}
	return E(op, KindPermission, fl.Path(), unix.EACCES)
}
