package ninep

import (
	"errors"
	"syscall"

	"github.com/hugelgupf/p9/linux"
	"github.com/hugelgupf/p9/p9"

	"github.com/semfs/semfs/server"
)

// Extended attributes are the core's virtual ones (server.FS.GetXattr: the
// user.semfs.* fields of a file's record, server/meta); every other name keeps
// the clean EOPNOTSUPP. p9 carries the Txattrwalk/Txattrcreate exchange
// (reads, writes and the clunk that sets); the methods here are its calls.

// xattrErrno is toErrno, except for the one cause the attributes carry that no
// core kind names: ENODATA (a field that is empty, KindNotFound), which
// getfattr reports as Linux does.
func xattrErrno(err error) error {
	if errors.Is(err, syscall.ENODATA) {
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

// xattr decides a buffered Txattrwalk or Txattrcreate (conn.control): it
// answers what p9 would get wrong and returns what p9 should receive (nil:
// answered). p9 answers any failure of GetXattr or ListXattrs with EINVAL, so
// a Txattrwalk goes to p9 only once the shim has seen the call succeed for the
// fid's file; a name outside user.semfs. is EOPNOTSUPP, as it always was.
func (c *conn) xattr(msg []byte, tag uint16) ([]byte, error) {
	r := wireReader{b: msg[headerLen:]}
	refuse := func(e linux.Errno) ([]byte, error) { return nil, c.reply(rlerror(tag, uint32(e))) }
	if msg[4] == msgTxattrcreate {
		// size[4] Txattrcreate tag[2] fid[4] name[s] attr_size[8] flags[4]
		fid, name := r.u32(), r.str()
		if r.bad {
			return nil, c.malformed("Txattrcreate overruns its size")
		}
		if err := c.srv.fs.CheckXattr(name); err != nil {
			e, _ := xattrErrno(err).(linux.Errno)
			return refuse(e)
		}
		// fid becomes an attribute fid whose Twrites p9 collects and whose
		// Tclunk sets the attribute: the shim no longer answers for it.
		c.forget(fid)
		return msg, nil
	}
	// size[4] Txattrwalk tag[2] fid[4] newfid[4] name[s]
	fid, newfid, name := r.u32(), r.u32(), r.str()
	if r.bad {
		return nil, c.malformed("Txattrwalk overruns its size")
	}
	if name != "" {
		if err := c.srv.fs.CheckXattr(name); err != nil && server.KindOf(err) == server.KindNotSupported {
			return refuse(linux.EOPNOTSUPP)
		}
	}
	if f := c.lookup(fid); f != nil {
		var err error
		if name == "" {
			var names []string
			if names, err = f.ListXattrs(); err == nil && len(names) == 0 {
				// None: p9 would send a list of one empty name; today's
				// answer for a file without attributes instead.
				err = linux.EOPNOTSUPP
			}
		} else {
			_, err = f.GetXattr(name)
		}
		if err != nil {
			e, _ := err.(linux.Errno)
			if e == 0 || e == linux.EINVAL {
				e = linux.EOPNOTSUPP
			}
			return refuse(e)
		}
	}
	// p9 makes newfid an attribute fid in its table, replacing any stale
	// reference there under that number whose clunk the shim had answered.
	c.fmu.Lock()
	gone, err := c.fids.p9Took(newfid)
	c.discardLocked(gone)
	c.fmu.Unlock()
	c.tableErr(err)
	return msg, nil
}
