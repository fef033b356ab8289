package ninep

import "github.com/semfs/semfs/server"

// Vouched groups (server/vouch.go). Linux's v9fs, mounted by root with its
// default access=client, attaches once per caller's uid on its one
// connection, root's included (n_uname 0, at root's first access after the
// mount's own attach as n_uname -1), and checks every caller's permissions
// itself with the caller's real groups before it sends: the group of a chgrp
// (Tsetattr) and of a create (Tlcreate, Tmkdir, Tsymlink, Tmknod's gid) are
// ones the caller holds. diod decides the same way: on a connection where uid
// 0 attached it lifts its own permission checks for every later request
// (libnpfs np_setfsid, SRV_FLAGS_DAC_BYPASS); semfs takes only the group the
// request names (Identity.VouchedGroups) and keeps every other check.
//
// A client that attaches as root needs no one's word: semfs in root mode does
// not squash uid 0, so what it vouches for a caller it could do itself.

// vouches records a Tattach (the shim's reader, one message at a time) and
// reports whether the connection vouches for its callers' groups: once uid 0
// has attached with an aname the server accepts, every later attach on it
// does. Attaches made before root's keep the databases' groups only.
func (c *conn) vouches(aname string, nuname uint32) bool {
	if nuname == 0 {
		if _, ok := server.AppFromMount(aname); ok {
			c.root = true
		}
	}
	return c.root
}
