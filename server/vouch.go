package server

import (
	"context"
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
// Identity.VouchedGroups, and the core then counts the one group such a
// request names among the caller's groups, for that call only. The kernel of
// this host still decides, for the caller's uid holding that group: only the
// file's owner may chgrp, nobody gives a file away, setuid and setgid are
// cleared. Nothing else is taken on the client's word: read, write and search
// through group bits are decided with the database's groups.
//
// The ninep door vouches only on a connection where uid 0 has attached
// (a kernel mount attaches as root on root's first access), as diod trusts a
// connection root attached on; with no authentication, such a client can
// already act as root itself, so its word on a group grants it nothing new.

// withVouchedGroup returns ctx with gid among its caller's groups when the
// door vouches for the groups its requests name (see Vouched groups above),
// else ctx unchanged.
func withVouchedGroup(ctx context.Context, gid uint32) context.Context {
	id, ok := identityOf(ctx)
	if !ok || !id.VouchedGroups || gid == ^uint32(0) || slices.Contains(id.Groups, gid) {
		return ctx
	}
	id.Groups = append(slices.Clip(id.Groups), gid)
	return WithIdentity(ctx, id)
}

// vouchedCreateGroups is groups with id's CreateGID added when the door
// vouches for it: the group a create asked for is then one the new file may
// be given (own in mutate.go chowns to it with the caller's rights).
func vouchedCreateGroups(id Identity, groups []uint32) []uint32 {
	if !id.VouchedGroups || !id.HasCreateGID || id.CreateGID == ^uint32(0) || slices.Contains(groups, id.CreateGID) {
		return groups
	}
	return append(slices.Clip(groups), id.CreateGID)
}
