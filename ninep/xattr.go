package ninep

import (
	"errors"
	"syscall"

	"github.com/hugelgupf/p9/linux"
	"github.com/hugelgupf/p9/p9"
)

// Extended attributes are the core's virtual ones (server.FS.GetXattr: the
// user.semfs.* fields of a file's record, server/meta); every other name keeps
// the clean EOPNOTSUPP. p9 carries the Txattrwalk/Txattrcreate exchange
// (reads, writes and the clunk that sets); the methods here are its calls.

// xattrErrno is toErrno, except for the two causes the attributes carry that
// no core kind names: EPERM (a read-only attribute) and ENODATA (a field that
// is empty), which getfattr and setfattr report as Linux does.
func xattrErrno(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, syscall.EPERM):
		return linux.EPERM
	case errors.Is(err, syscall.ENODATA):
		return linux.ENODATA
	}
	return toErrno(err)
}

// SetXattr implements p9.File.SetXattr.
func (f *file) SetXattr(name string, data []byte, _ p9.XattrFlags) (err error) {
	defer f.guard("setxattr", &err)
	return xattrErrno(f.srv.fs.SetXattr(f.ctx, f.p(), name, data))
}

// GetXattr implements p9.File.GetXattr.
func (f *file) GetXattr(name string) (b []byte, err error) {
	defer f.guard("getxattr", &err)
	b, err = f.srv.fs.GetXattr(f.ctx, f.p(), name)
	return b, xattrErrno(err)
}

// ListXattrs implements p9.File.ListXattrs.
func (f *file) ListXattrs() (names []string, err error) {
	defer f.guard("listxattr", &err)
	names, err = f.srv.fs.ListXattrs(f.ctx, f.p())
	return names, xattrErrno(err)
}

// RemoveXattr implements p9.File.RemoveXattr: removing task or related apps
// empties it.
func (f *file) RemoveXattr(name string) (err error) {
	defer f.guard("removexattr", &err)
	return xattrErrno(f.srv.fs.SetXattr(f.ctx, f.p(), name, nil))
}

// xattrFids keeps the shim's fid table true across the attribute requests it
// hands to p9 (called from intercept, the request's fids already classified,
// so a ghost was made known to p9 first). Txattrcreate turns fid into an
// attribute fid whose Twrites p9 collects and whose Tclunk sets the attribute:
// the shim must no longer answer for it. Txattrwalk makes newfid an attribute
// fid in p9's table, replacing any stale reference there under that number
// whose clunk the shim had answered.
func (c *conn) xattrFids(typ uint8, size int) {
	if typ == msgTxattrcreate {
		if fid, ok := c.peekFid(size, headerLen); ok {
			c.forget(fid)
		}
		return
	}
	if newfid, ok := c.peekFid(size, headerLen+4); ok {
		c.fmu.Lock()
		delete(c.fs.deferred, newfid)
		delete(c.fs.fids, newfid)
		c.fmu.Unlock()
	}
}
