package server

import (
	"context"
	"runtime"
	"slices"
)

// Vouched groups. 9P2000.L carries a caller's uid (Tattach's n_uname) and no
// groups, so a root daemon takes a 9P caller's groups from the host's user and
// group databases (UserGroups). A Linux kernel that mounted the export (v9fs
// with access=client, its default for 9P2000.L) knows the caller's real
// groups and checks them before it sends anything: a chown(2) that changes
// the group is sent (Tsetattr) only if the caller owns the file and holds the
// new group, or is privileged; a create's gid (Tlcreate, Tmkdir, Tsymlink,
// Tmknod) is the caller's fsgid, or a setgid directory's group. Its callers'
// groups exist in the guest, usually in no database on this host.
//
// A door whose client vouches for its callers that way sets
// Identity.VouchedGroups, and the core then adds the one group such a request
// names to the caller's groups for the one chown that gives a file that
// group (asMemberOf). The kernel of this host still decides, for the caller's
// uid holding that group: only the file's owner may chgrp, nobody gives a
// file away, setuid and setgid are cleared. Nothing else is taken on the
// client's word: opens, truncates, searches and modes, in the same request
// too, are decided with the database's groups.
//
// The ninep door vouches only on a connection where uid 0 has attached
// (a kernel mount attaches as root on root's first access), as diod trusts a
// connection root attached on; with no authentication, such a client can
// already act as root itself, so its word on a group grants it nothing new.

// asMemberOf runs fn, one chown made inside f.as for ctx, with gid added to
// the thread's groups when ctx's door vouches for the groups its requests
// name and the caller does not hold gid already (see Vouched groups above);
// otherwise fn runs as it is. Only that one system call sees the group: the
// caller's groups are restored before asMemberOf returns.
// Precondition: inside f.as for ctx (the thread is locked and holds the
// caller's credentials when callerCred says so).
func (f *FS) asMemberOf(ctx context.Context, gid uint32, fn func() error) error {
	c, ok := f.callerCred(ctx)
	id, _ := identityOf(ctx)
	if !ok || !id.VouchedGroups || gid == ^uint32(0) || gid == c.gid || slices.Contains(c.groups, gid) {
		return fn()
	}
	if err := setThreadCred(c.uid, c.gid, append(slices.Clip(c.groups), gid), true); err != nil {
		return err
	}
	defer func() {
		if err := setThreadCred(c.uid, c.gid, c.groups, true); err != nil {
			// It cannot fail (setgroups by a root process). If it did, the
			// thread must never serve anyone else: lock it once more, so
			// f.leave's unlock leaves it locked and it ends with the goroutine.
			runtime.LockOSThread()
			f.log.Error("could not restore a caller's groups on a thread; it is retired", "err", err)
		}
	}()
	return fn()
}
