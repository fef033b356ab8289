package nfs

import (
	"io/fs"
	"syscall"

	"github.com/semfs/semfs/server"
	"github.com/semfs/semfs/server/policy"
)

// The --policy file over NFS (issue 26). The core decides every call made
// with the caller's identity (server/view.go); the adapter also reaches
// paths as the daemon (handle resolution, the per-call attribute cache, a
// listing read again for a verifier), and there the call's view is applied
// here: a path hidden from the call's app is missing from lookups (ENOENT),
// its handle is STALE, and listings leave it out.

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

// viewInfos leaves out of directory p's listing what the current call may
// not see (a listing read as the daemon: DataForVerifier).
func (h *connHandler) viewInfos(p string, infos []fs.FileInfo) []fs.FileInfo {
	v := h.view
	if v.rules == nil || v.r != h.current() || !v.rules.HidesAny() {
		return infos
	}
	out := make([]fs.FileInfo, 0, len(infos))
	for _, fi := range infos {
		if cp := server.Join(p, fi.Name()); !v.rules.Hidden(cp) || !h.s.fsys.Inline(cp) {
			out = append(out, fi)
		}
	}
	return out
}
