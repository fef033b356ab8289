package server

import "context"

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
	Proto  string // "nfs", "9p", "control": for logs only
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
