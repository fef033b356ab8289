package server

import (
	"context"
	"os/user"
	"strconv"
)

// Identity is what a front end learned about the caller from its connection. It
// never comes from a request body: the mount path or aname gives MountApp, the
// RPC credentials or Tattach give UID.
type Identity struct {
	MountApp string // app named by the mount ("/@notes" over NFS, aname "@notes" over 9P)
	UID      uint32 // the caller's uid (AUTH_UNIX, 9P n_uname, SO_PEERCRED)
	HasUID   bool   // UID is meaningful
	GID      uint32 // the caller's primary gid, when the protocol sends one
	HasGID   bool
	// Groups are the caller's supplementary gids: AUTH_UNIX's gids over NFS, the
	// group database's entries for the attached uid over 9P. Only a daemon
	// running as root uses them, to check permissions as the kernel would.
	Groups []uint32
	// CreateGID is the group a create asks for its new file (9P's Tlcreate,
	// Tmkdir, Tsymlink and Tmknod carry the gid the client computed, setgid
	// directories included). In root mode the core gives it to the file only
	// where the caller may (chown(2)'s rules for that caller).
	CreateGID    uint32
	HasCreateGID bool
	// VouchedGroups says the client checked the caller's membership of the
	// group a request names (a chown's new group, CreateGID) before sending it:
	// a root daemon then adds that group to Groups for the chown that gives
	// it (see vouch.go). Set by the 9P door on a connection where root attached.
	VouchedGroups bool
	Proto         string // "nfs", "9p", "control": for logs only
}

type identityKey struct{}

// WithIdentity returns a context carrying id for every FS call made with it.
func WithIdentity(ctx context.Context, id Identity) context.Context {
	return context.WithValue(ctx, identityKey{}, id)
}

// IdentityFrom returns the identity in ctx, the zero Identity (unattributed) if none.
func IdentityFrom(ctx context.Context) Identity {
	id, _ := ctx.Value(identityKey{}).(Identity)
	return id
}

// identityOf is IdentityFrom; ok is false for a context that carries none,
// which is the daemon's own work rather than a door's caller (see cred.go).
func identityOf(ctx context.Context) (Identity, bool) {
	id, ok := ctx.Value(identityKey{}).(Identity)
	return id, ok
}

// UserGroups looks uid up in the user and group databases (/etc/passwd and
// /etc/group; os/user without cgo reads them directly): its primary gid and the
// gids of every group listing it. ok is false for a uid with no entry. 9P's
// Tattach names only a uid; a daemon in root mode checks its callers' group
// access with these, as a login would have set them.
func UserGroups(uid uint32) (gid uint32, groups []uint32, ok bool) {
	u, err := user.LookupId(strconv.FormatUint(uint64(uid), 10))
	if err != nil {
		return 0, nil, false
	}
	g, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return 0, nil, false
	}
	ids, _ := u.GroupIds() // none readable: the primary group alone
	for _, s := range ids {
		if n, err := strconv.ParseUint(s, 10, 32); err == nil {
			groups = append(groups, uint32(n))
		}
	}
	return uint32(g), groups, true
}

// AppFromMount parses an NFS export path or 9P aname: "/", "" and "." mount the
// whole tree anonymously; "/@APP" or "@APP" mount the whole tree as APP. ok is false
// for anything else, which the front end refuses.
func AppFromMount(p string) (app string, ok bool) {
	for len(p) > 0 && p[0] == '/' {
		p = p[1:]
	}
	for len(p) > 0 && p[len(p)-1] == '/' {
		p = p[:len(p)-1]
	}
	switch {
	case p == "" || p == ".":
		return "", true
	case p[0] == '@':
		if CheckApp(p[1:]) != nil {
			return "", false
		}
		return p[1:], true
	}
	return "", false
}
