package nfs

import (
	"syscall"

	"github.com/semfs/semfs/server"
)

// The --policy file over NFS (issue 26). The core decides every call made
// with the caller's identity (server/view.go); the adapter also reaches
// paths as the daemon (handle resolution, the per-call attribute cache), and
// there the call's view is applied
// here: a path hidden from the call's app is missing from lookups (ENOENT),
// and its handle is STALE. Listings are read with the identity, so the core
// leaves hidden names out of them.

// hidden says whether p is hidden from the call (its rules, set by
// resolveHandle). The virtual tree (.semfs) is not the policy's: it filters
// itself, as the core leaves it to (server.FS.Inline is false for its paths).
func (h *call) hidden(p string) bool {
	return h.rules != nil && h.rules.Hidden(p) && h.s.fsys.Inline(p)
}

// errHidden is a hidden path's answer: that of a missing one.
func errHidden(op, p string) error { return server.E(op, server.KindNotFound, p, syscall.ENOENT) }
