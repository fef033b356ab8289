package nfs

// Existence answers. CREATE, MKDIR, SYMLINK and LINK look the new name up
// before they make it (go-nfs's handlers, and fastCreate after them) and answer
// NFS3ERR_EXIST when it is there. That lookup runs as the daemon, which sees
// every name, so by itself it would tell a caller who may not search the
// directory which names it holds. Linux's nfsd looks the name up as the caller
// (MAY_EXEC on the directory) and answers ACCES first, as ganesha does and as
// open(2) with O_CREAT|O_EXCL, mkdir(2), symlink(2) and link(2) do. The check
// runs only once the name is found, so a create that succeeds makes no extra
// system call.

import "github.com/semfs/semfs/server"

// searchBeforeExist refuses, with the caller's status recorded on r, when the
// caller may not search dir, the directory in which a name was just found.
func (h *connHandler) searchBeforeExist(r *request, b *billyFS, dir string) error {
	if err := h.s.fsys.CheckAccess(b.ctx(), "lookup", dir, server.MayExec); err != nil {
		r.override = 0
		return pathError(r, "lookup", dir, err)
	}
	return nil
}

// probesExistence says whether the billy Lstat of this call is go-nfs's
// existence check of the name MKDIR, SYMLINK or LINK makes: their handlers stat
// the new name first of all (FromHandle resolves the directory without a billy
// call), and the reply's own stats come after the change.
func (r *request) probesExistence() bool {
	if r == nil || r.prog != progNFS || r.probed {
		return false
	}
	switch r.proc {
	case procMkdir, procSymlink, procLink:
		r.probed = true
		return true
	}
	return false
}
