package nfs

import (
	"syscall"

	"github.com/semfs/semfs/server"
	"github.com/semfs/semfs/server/policy"
)

// The --policy file over NFS (issue 26). The core decides every call made
// with the caller's identity (server/view.go); the adapter also reaches
// paths as the daemon (handle resolution, the per-call attribute cache), and
// there the call's view is applied
// here: a path hidden from the call's app is missing from lookups (ENOENT),
// and its handle is STALE. Listings are read with the identity, so the core
// leaves hidden names out of them.

// callView is the policy view of one call: set when the call's first
// handle is resolved (resolveHandle), for the app that handle was mounted
// as and the caller's uid.
type callView struct {
	r     *request
	rules *policy.App // nil: nothing hidden from this call
}

// setView computes the view of call r for mount app.
func (h *connHandler) setView(r *request, app string) {
	h.view = callView{r: r, rules: h.s.fsys.RulesFor(identity(r, app))}
}

// hidden says whether p is hidden from the current call. The virtual tree
// (.semfs) is not the policy's: it filters itself, as the core leaves it to
// (server.FS.Inline is false for its paths).
func (h *connHandler) hidden(p string) bool {
	v := h.view
	return v.rules != nil && v.r == h.current() && v.rules.Hidden(p) && h.s.fsys.Inline(p)
}

// errHidden is a hidden path's answer: that of a missing one.
func errHidden(op, p string) error { return server.E(op, server.KindNotFound, p, syscall.ENOENT) }
