package nfs_test

import (
	"fmt"
	"io/fs"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/semfs/semfs/server"
	"github.com/semfs/semfs/server/servertest"
)

// TestConformance runs the core's conformance suite through NFSv3: every
// operation goes over a real socket as the NFS calls a kernel client makes
// (LOOKUP walks, CREATE, WRITE UNSTABLE + COMMIT, SETATTR, LINK...).
func TestConformance(t *testing.T) {
	servertest.Run(t, func(t *testing.T) servertest.Env {
		backing, outside := servertest.NewDirs(t)
		e := newEnvAt(t, backing)
		c, root := e.client("/@conformance")
		dial := func() *rawClient { return dialRaw(t, e.addr) }
		return servertest.Env{Client: &nfsClient{c: c, root: root, dial: dial}, Backing: backing, Outside: outside,
			Seconds32: true}
	})
}

// nfsClient is servertest.Client over rawClient.
type nfsClient struct {
	c    *rawClient
	root []byte
	dial func() *rawClient // a new connection, for As
}

type nfsError uint32

func (e nfsError) Error() string { return fmt.Sprintf("nfs status %d", uint32(e)) }

func (e nfsError) Is(target error) bool {
	switch uint32(e) {
	case sNoEnt, sStale:
		return target == fs.ErrNotExist
	case sExist:
		return target == fs.ErrExist
	case sAcces:
		return target == fs.ErrPermission
	case 1: // NFS3ERR_PERM
		return target == fs.ErrPermission || target == syscall.EPERM
	case sNotEmpty:
		return target == syscall.ENOTEMPTY
	case 22: // NFS3ERR_INVAL
		return target == syscall.EINVAL
	case 18: // NFS3ERR_XDEV
		return target == syscall.EXDEV
	case 63: // NFS3ERR_NAMETOOLONG
		return target == syscall.ENAMETOOLONG
	}
	return false
}

func status(st uint32) error {
	if st == sOK {
		return nil
	}
	return nfsError(st)
}

// walk resolves a slash path with LOOKUPs, never following symlinks (as the
// kernel would not for the final component).
func (n *nfsClient) walk(p string) ([]byte, fattr3, error) {
	fh := n.root
	var a fattr3
	if p == "" {
		st, at := n.c.getattr(fh)
		return fh, at, status(st)
	}
	for _, comp := range strings.Split(p, "/") {
		st, next, at := n.c.lookup(fh, comp)
		if st != sOK {
			return nil, a, status(st)
		}
		fh, a = next, at
	}
	return fh, a, nil
}

func (n *nfsClient) parent(p string) ([]byte, string, error) {
	i := strings.LastIndexByte(p, '/')
	if len(p)-i-1 > 255 {
		// Linux's client refuses a name past PATHCONF's name_max itself;
		// the server answers one on the wire GARBAGE_ARGS, as knfsd does
		// (TestHostileCalls).
		return nil, "", syscall.ENAMETOOLONG
	}
	if i < 0 {
		return n.root, p, nil
	}
	dir, _, err := n.walk(p[:i])
	return dir, p[i+1:], err
}

func (n *nfsClient) WriteFile(p string, data []byte, perm fs.FileMode) error {
	dir, name, err := n.parent(p)
	if err != nil {
		return err
	}
	// CREATE UNCHECKED with mode and size 0: create or truncate.
	args := (&enc{}).dirop(dir, name).u32(0).u32(1).u32(server.UnixPerm(perm)).u32(0).u32(0).u32(1).u64(0).u32(0).u32(0)
	st, d := n.c.call(pCreate, args)
	if st != sOK {
		return status(st)
	}
	d.u32()
	fh := d.opaque()
	for off := 0; off < len(data); off += 1 << 20 {
		end := min(off+1<<20, len(data))
		if st, _, _, _ := n.c.write(fh, uint64(off), data[off:end], 0); st != sOK {
			return status(st)
		}
	}
	st, _ = n.c.commit(fh)
	return status(st)
}

func (n *nfsClient) ReadFile(p string) ([]byte, error) {
	fh, _, err := n.walk(p)
	if err != nil {
		return nil, err
	}
	var out []byte
	for {
		st, data, eof := n.c.read(fh, uint64(len(out)), 1<<20)
		if st != sOK {
			return nil, status(st)
		}
		out = append(out, data...)
		if eof || len(data) == 0 {
			return out, nil
		}
	}
}

func (n *nfsClient) Mkdir(p string, perm fs.FileMode) error {
	dir, name, err := n.parent(p)
	if err != nil {
		return err
	}
	st, _ := n.c.call(pMkdir, (&enc{}).dirop(dir, name).sattr(int(server.UnixPerm(perm))))
	return status(st)
}

func (n *nfsClient) removeProc(proc uint32, p string) error {
	dir, name, err := n.parent(p)
	if err != nil {
		return err
	}
	st, _ := n.c.call(proc, (&enc{}).dirop(dir, name))
	return status(st)
}

func (n *nfsClient) Remove(p string) error { return n.removeProc(pRemove, p) }
func (n *nfsClient) Rmdir(p string) error  { return n.removeProc(pRmdir, p) }

func (n *nfsClient) Rename(oldPath, newPath string) error {
	od, on, err := n.parent(oldPath)
	if err != nil {
		return err
	}
	nd, nn, err := n.parent(newPath)
	if err != nil {
		return err
	}
	st, _ := n.c.call(pRename, (&enc{}).dirop(od, on).dirop(nd, nn))
	return status(st)
}

func (n *nfsClient) Symlink(target, p string) error {
	dir, name, err := n.parent(p)
	if err != nil {
		return err
	}
	st, _ := n.c.call(pSymlink, (&enc{}).dirop(dir, name).sattr(-1).str(target))
	return status(st)
}

func (n *nfsClient) Readlink(p string) (string, error) {
	fh, _, err := n.walk(p)
	if err != nil {
		return "", err
	}
	st, d := n.c.call(pReadlink, (&enc{}).opaque(fh))
	if st != sOK {
		return "", status(st)
	}
	d.postOp()
	return string(d.opaque()), nil
}

func (n *nfsClient) Link(oldPath, newPath string) error {
	fh, _, err := n.walk(oldPath)
	if err != nil {
		return err
	}
	dir, name, err := n.parent(newPath)
	if err != nil {
		return err
	}
	st, _ := n.c.call(pLink, (&enc{}).opaque(fh).dirop(dir, name))
	return status(st)
}

func (n *nfsClient) Lstat(p string) (servertest.Info, error) {
	fh, _, err := n.walk(p)
	if err != nil {
		return servertest.Info{}, err
	}
	st, a := n.c.getattr(fh)
	if st != sOK {
		return servertest.Info{}, status(st)
	}
	mode := server.PermOf(a.mode)
	switch a.typ {
	case 2:
		mode |= fs.ModeDir
	case 5:
		mode |= fs.ModeSymlink
	case 6:
		mode |= fs.ModeSocket
	case 7:
		mode |= fs.ModeNamedPipe
	}
	return servertest.Info{Size: int64(a.size), Mode: mode, Nlink: a.nlink,
		Mtime: time.Unix(int64(a.mtime>>32), int64(a.mtime&0xffffffff)),
		Atime: time.Unix(int64(a.atime>>32), int64(a.atime&0xffffffff)), UID: a.uid, GID: a.gid}, nil
}

func (n *nfsClient) ReadDir(p string) ([]string, error) {
	fh, _, err := n.walk(p)
	if err != nil {
		return nil, err
	}
	names, _ := n.c.readdirplus(fh, 32768)
	var out []string
	for _, nm := range names {
		if nm != "." && nm != ".." {
			out = append(out, nm)
		}
	}
	return out, nil
}

func (n *nfsClient) setattr(p string, sattr *enc) error {
	fh, _, err := n.walk(p)
	if err != nil {
		return err
	}
	st, _ := n.c.call(pSetattr, (&enc{b: append((&enc{}).opaque(fh).b, sattr.b...)}).u32(0))
	return status(st)
}

func (n *nfsClient) Truncate(p string, size int64) error {
	return n.setattr(p, (&enc{}).u32(0).u32(0).u32(0).u32(1).u64(uint64(size)).u32(0).u32(0))
}

func (n *nfsClient) Chmod(p string, perm fs.FileMode) error {
	return n.setattr(p, (&enc{}).u32(1).u32(server.UnixPerm(perm)).u32(0).u32(0).u32(0).u32(0).u32(0))
}

func (n *nfsClient) Chtimes(p string, mtime time.Time) error {
	return n.setattr(p, (&enc{}).u32(0).u32(0).u32(0).u32(0).u32(0).u32(2).u32(uint32(mtime.Unix())).u32(uint32(mtime.Nanosecond())))
}

// opt encodes one of sattr3's optional uint32s (-1: not set).
func (e *enc) opt(v int) *enc {
	if v < 0 {
		return e.u32(0)
	}
	return e.u32(1).u32(uint32(v))
}

func (n *nfsClient) Chown(p string, uid, gid int) error {
	return n.setattr(p, (&enc{}).u32(0).opt(uid).opt(gid).u32(0).u32(0).u32(0))
}

// Mknod sends MKNOD with the type's mknoddata3 (a device's specdata3 is
// 1,3: /dev/null's numbers).
func (n *nfsClient) Mknod(p string, mode fs.FileMode) error {
	dir, name, err := n.parent(p)
	if err != nil {
		return err
	}
	args := (&enc{}).dirop(dir, name)
	sattr := func() { args.u32(1).u32(server.UnixPerm(mode)).u32(0).u32(0).u32(0).u32(0).u32(0) }
	switch mode.Type() {
	case fs.ModeNamedPipe:
		args.u32(7)
		sattr()
	case fs.ModeSocket:
		args.u32(6)
		sattr()
	case fs.ModeDevice:
		args.u32(3)
		sattr()
		args.u32(1).u32(3)
	default:
		args.u32(4)
		sattr()
		args.u32(1).u32(3)
	}
	st, _ := n.c.call(pMknod, args)
	return status(st)
}

// SetTimes sends SETATTR's set_atime and set_mtime: DONT_CHANGE (0),
// SET_TO_SERVER_TIME (1), SET_TO_CLIENT_TIME (2) with an nfstime3.
func (n *nfsClient) SetTimes(p string, atime, mtime servertest.TimeSet) error {
	e := (&enc{}).u32(0).u32(0).u32(0).u32(0)
	for _, ts := range []servertest.TimeSet{atime, mtime} {
		switch {
		case ts.Omit:
			e.u32(0)
		case ts.Now:
			e.u32(1)
		default:
			e.u32(2).u32(uint32(ts.T.Unix())).u32(uint32(ts.T.Nanosecond()))
		}
	}
	return n.setattr(p, e)
}

// As is a new connection whose calls carry AUTH_UNIX uid, gid and groups.
func (n *nfsClient) As(uid, gid uint32, groups []uint32) servertest.Client {
	c := n.dial().as(uid, gid)
	if groups != nil {
		c.gids = groups
	}
	return &nfsClient{c: c, root: n.root, dial: n.dial}
}
