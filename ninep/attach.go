package ninep

import (
	"strconv"
	"strings"

	"github.com/hugelgupf/p9/linux"
	"github.com/hugelgupf/p9/p9"
	"github.com/semfs/semfs/server"
)

// Identity travels from Tattach to the attach's root in the aname itself.
//
// p9's server drops Tattach's uname and n_uname and calls Attacher.Attach()
// without arguments, then walks the aname from the file Attach returned. The
// connection shim (conn.go) therefore rewrites every Tattach's aname into an
// attach token that states what the shim decided from the real aname and
// n_uname, and the root returned by Attach resolves that token in its Walk. The
// decision travels inside the very message it belongs to, so concurrent attaches
// on one connection can never be confused, and nothing needs to be remembered
// or cleaned up between the two steps. Tokens are only honoured by the
// transient attach root (never by a fid a client holds), and carry a per-server
// random nonce, so a client cannot forge one: its own aname never reaches p9
// unrewritten.
const attachPrefix = "semfs-attach:"

func isAttachToken(name string) bool { return strings.HasPrefix(name, attachPrefix) }

// attachToken encodes the shim's decision for one Tattach: the uid, whether
// the connection vouches for its callers' groups (vouch.go), the app.
func attachToken(nonce, aname string, nuname uint32, vouched bool) string {
	app, ok := server.AppFromMount(aname)
	if !ok {
		return attachPrefix + nonce + ":refused"
	}
	uid := "-"
	if nuname != noUID {
		uid = strconv.FormatUint(uint64(nuname), 10)
	}
	v := "-"
	if vouched {
		v = "v"
	}
	return attachPrefix + nonce + ":" + uid + ":" + v + ":" + app
}

// parseAttachToken decodes a token; ok is false for a refused or foreign one.
func parseAttachToken(nonce, tok string) (server.Identity, bool) {
	rest, found := strings.CutPrefix(tok, attachPrefix+nonce+":")
	if !found {
		return server.Identity{}, false
	}
	uid, rest, found := strings.Cut(rest, ":")
	if !found {
		return server.Identity{}, false
	}
	v, app, found := strings.Cut(rest, ":")
	if !found || (v != "v" && v != "-") {
		return server.Identity{}, false
	}
	id := server.Identity{MountApp: app, Proto: "9p", VouchedGroups: v == "v"}
	if uid != "-" {
		n, err := strconv.ParseUint(uid, 10, 32)
		if err != nil {
			return server.Identity{}, false
		}
		id.UID, id.HasUID = uint32(n), true
		// n_uname is all Tattach says: the groups are the user database's
		// (a root daemon checks the caller's access with them).
		if gid, groups, ok := server.UserGroups(id.UID); ok {
			id.GID, id.HasGID, id.Groups = gid, true, groups
		}
	}
	return id, true
}

// attachRoot is the walk from the transient attach root by a token: the root of
// the whole tree, carrying the attach's identity from here on.
func (f *file) attachRoot(tok string) ([]p9.QID, *file, server.Attr, error) {
	id, ok := parseAttachToken(f.attachNonce, tok)
	if !ok {
		return nil, nil, server.Attr{}, linux.EACCES // logged by the shim with the aname
	}
	a, err := f.srv.fs.Lstat(f.ctx, "")
	if err != nil {
		return nil, nil, a, toErrno(err)
	}
	root := &file{srv: f.srv, conn: f.conn, ctx: server.WithIdentity(f.ctx, id), kind: p9.ModeDirectory}
	if f.conn != nil {
		f.conn.made(root)
	}
	f.srv.log.Debug("ninep: attach", "app", id.MountApp, "uid", id.UID, "hasUID", id.HasUID, "vouchedGroups", id.VouchedGroups)
	return []p9.QID{qidOf(a)}, root, a, nil
}

// attacher gives p9's server the transient attach root of one connection.
type attacher struct {
	srv  *Server
	conn *conn // nil when used directly (Server.Attacher)
}

// Attach implements p9.Attacher. Over the wire the file returned is only walked by
// an attach token; used directly (p9's conformance suite) it is the anonymous
// root of the whole tree.
func (a attacher) Attach() (p9.File, error) {
	return a.srv.newRoot(a.conn), nil
}
