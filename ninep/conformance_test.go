package ninep_test

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hugelgupf/p9/linux"
	"github.com/hugelgupf/p9/p9"
	"github.com/semfs/semfs/server"
	"github.com/semfs/semfs/server/servertest"
)

// TestConformance runs the project's one conformance suite (server/servertest)
// through 9P: p9's client speaking plain 9P2000.L over loopback TCP, doing what
// Linux's v9fs does for each call.
func TestConformance(t *testing.T) {
	servertest.Run(t, func(t *testing.T) servertest.Env {
		e := newEnv(t)
		attach := func(uid uint32) p9.File {
			_, root := dial(t, "tcp", e.tcp, "/", uid, 256<<10)
			return root
		}
		// p9's client sends a mode's permission bits through a mask of
		// 01777: a mode with setuid or setgid goes as v9fs sends it, raw.
		rawChmod := func(uid uint32, p string, mode uint32) error {
			r := dialRaw(t, "tcp", e.tcp)
			defer r.c.Close()
			r.version(256 << 10)
			if err := r.attach(1, 1, "/", uid); err != nil {
				return fsErr(err)
			}
			var names []string
			if p != "" {
				names = strings.Split(p, "/")
			}
			if err := r.walk(1, 2, names...); err != nil {
				return fsErr(err)
			}
			_, err := r.call(msg(tSetattr, 12, uint32(2), uint32(0x1), mode, uint32(0), uint32(0), uint64(0),
				uint64(0), uint64(0), uint64(0), uint64(0)))
			return fsErr(err)
		}
		// A kernel mount's connection: root attaches, then each caller on it.
		vouching := kernelAttacher(t, e.tcp, 0)
		return servertest.Env{Client: &p9Client{root: attach(0), attach: attach, rawChmod: rawChmod}, Backing: e.export,
			Outside: e.outside, HostGroups: true,
			Vouching: &p9Client{root: vouching(0), attach: vouching, rawChmod: rawChmod}}
	})
}

// p9Client implements servertest.Client over a 9P attach.
type p9Client struct {
	root     p9.File
	uid      uint32
	attach   func(uid uint32) p9.File // a new connection attached as n_uname uid, for As
	rawChmod func(uid uint32, p string, mode uint32) error
}

// maxWalk is the most names one Twalk carries (MAXWELEM); v9fs walks longer
// paths in several.
const maxWalk = 16

// walkFrom walks names from f in Twalks of at most maxWalk names; the result
// is a new fid (names empty: a clone).
func walkFrom(f p9.File, names []string) (p9.File, error) {
	cur, first := f, true
	for first || len(names) > 0 {
		n := min(len(names), maxWalk)
		_, next, err := cur.Walk(names[:n])
		if !first {
			cur.Close()
		}
		if err != nil {
			return nil, err
		}
		cur, first, names = next, false, names[n:]
	}
	return cur, nil
}

// fsErr makes an errno from the wire satisfy errors.Is with io/fs's sentinels.
func fsErr(err error) error {
	var e linux.Errno
	if !errors.As(err, &e) {
		return err
	}
	switch e {
	case linux.ENOENT:
		return fmt.Errorf("%w (%w)", fs.ErrNotExist, err)
	case linux.EEXIST:
		return fmt.Errorf("%w (%w)", fs.ErrExist, err)
	case linux.EACCES:
		return fmt.Errorf("%w (%w)", fs.ErrPermission, err)
	case linux.EPERM:
		return fmt.Errorf("%w (%w)", syscall.EPERM, err)
	case linux.ELOOP:
		return fmt.Errorf("%w (%w)", syscall.ELOOP, err)
	case linux.ENOTEMPTY:
		return syscall.ENOTEMPTY
	case linux.EINVAL:
		return fmt.Errorf("%w (%w)", syscall.EINVAL, err)
	case linux.EXDEV:
		return fmt.Errorf("%w (%w)", syscall.EXDEV, err)
	case linux.ENAMETOOLONG:
		return fmt.Errorf("%w (%w)", syscall.ENAMETOOLONG, err)
	}
	return err
}

func split(p string) ([]string, string) {
	i := strings.LastIndexByte(p, '/')
	if i < 0 {
		return nil, p
	}
	return strings.Split(p[:i], "/"), p[i+1:]
}

func (c *p9Client) walk(p string) (p9.File, error) {
	var names []string
	if p != "" {
		names = strings.Split(p, "/")
	}
	f, err := walkFrom(c.root, names)
	return f, fsErr(err)
}

func (c *p9Client) parent(p string) (p9.File, string, error) {
	dir, name := split(p)
	if len(name) > 255 {
		// Linux's v9fs refuses a name past NAME_MAX itself (the VFS does),
		// as the server does one on the wire.
		return nil, "", syscall.ENAMETOOLONG
	}
	d, err := walkFrom(c.root, dir)
	return d, name, fsErr(err)
}

// WriteFile opens an existing file with O_TRUNC or creates a new one, as
// open(O_CREAT|O_TRUNC) through v9fs does.
func (c *p9Client) WriteFile(p string, data []byte, perm fs.FileMode) error {
	d, name, err := c.parent(p)
	if err != nil {
		return err
	}
	defer d.Close()
	var f p9.File
	if _, g, err := d.Walk([]string{name}); err == nil {
		if _, _, err := g.Open(p9.WriteOnly | 0o1000); err != nil {
			g.Close()
			return fsErr(err)
		}
		f = g
	} else {
		_, dd, err := d.Walk(nil)
		if err != nil {
			return fsErr(err)
		}
		if f, _, _, err = dd.Create(name, p9.WriteOnly, p9.FileMode(perm.Perm()), p9.NoUID, p9.NoGID); err != nil {
			dd.Close()
			return fsErr(err)
		}
	}
	defer f.Close()
	for off := 0; off < len(data); {
		n, err := f.WriteAt(data[off:], int64(off))
		if err != nil {
			return fsErr(err)
		}
		off += n
	}
	return nil
}

func (c *p9Client) ReadFile(p string) ([]byte, error) {
	f, err := c.walk(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if _, _, err := f.Open(p9.ReadOnly); err != nil {
		return nil, fsErr(err)
	}
	var out []byte
	buf := make([]byte, 256<<10)
	for {
		n, err := f.ReadAt(buf, int64(len(out)))
		out = append(out, buf[:n]...)
		if errors.Is(err, io.EOF) || (err == nil && n == 0) {
			return out, nil
		}
		if err != nil {
			return nil, fsErr(err)
		}
	}
}

func (c *p9Client) Mkdir(p string, perm fs.FileMode) error {
	d, name, err := c.parent(p)
	if err != nil {
		return err
	}
	defer d.Close()
	_, err = d.Mkdir(name, p9.FileMode(server.UnixPerm(perm)), p9.NoUID, p9.NoGID)
	return fsErr(err)
}

func (c *p9Client) unlink(p string, flags uint32) error {
	d, name, err := c.parent(p)
	if err != nil {
		return err
	}
	defer d.Close()
	return fsErr(d.UnlinkAt(name, flags))
}

func (c *p9Client) Remove(p string) error { return c.unlink(p, 0) }
func (c *p9Client) Rmdir(p string) error  { return c.unlink(p, 0x200) }

func (c *p9Client) Rename(oldPath, newPath string) error {
	od, oname, err := c.parent(oldPath)
	if err != nil {
		return err
	}
	defer od.Close()
	nd, nname, err := c.parent(newPath)
	if err != nil {
		return err
	}
	defer nd.Close()
	return fsErr(od.RenameAt(oname, nd, nname))
}

func (c *p9Client) Symlink(target, p string) error {
	d, name, err := c.parent(p)
	if err != nil {
		return err
	}
	defer d.Close()
	_, err = d.Symlink(target, name, p9.NoUID, p9.NoGID)
	return fsErr(err)
}

func (c *p9Client) Readlink(p string) (string, error) {
	f, err := c.walk(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	s, err := f.Readlink()
	return s, fsErr(err)
}

func (c *p9Client) Link(oldPath, newPath string) error {
	t, err := c.walk(oldPath)
	if err != nil {
		return err
	}
	defer t.Close()
	d, name, err := c.parent(newPath)
	if err != nil {
		return err
	}
	defer d.Close()
	return fsErr(d.Link(t, name))
}

func (c *p9Client) Lstat(p string) (servertest.Info, error) {
	f, err := c.walk(p)
	if err != nil {
		return servertest.Info{}, err
	}
	defer f.Close()
	_, _, a, err := f.GetAttr(p9.AttrMaskAll)
	if err != nil {
		return servertest.Info{}, fsErr(err)
	}
	return servertest.Info{
		Size: int64(a.Size), Mode: a.Mode.OSMode().Type() | server.PermOf(uint32(a.Mode)), Nlink: uint32(a.NLink),
		Mtime: time.Unix(int64(a.MTimeSeconds), int64(a.MTimeNanoSeconds)),
		Atime: time.Unix(int64(a.ATimeSeconds), int64(a.ATimeNanoSeconds)),
		UID:   uint32(a.UID), GID: uint32(a.GID),
	}, nil
}

func (c *p9Client) ReadDir(p string) ([]string, error) {
	d, err := c.walk(p)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	if _, _, err := d.Open(p9.ReadOnly); err != nil {
		return nil, fsErr(err)
	}
	var names []string
	var off uint64
	for i := 0; i < 100000; i++ {
		ents, err := d.Readdir(off, 64<<10)
		if err != nil {
			return nil, fsErr(err)
		}
		if len(ents) == 0 {
			return names, nil
		}
		for _, e := range ents {
			if e.Name != "." && e.Name != ".." {
				names = append(names, e.Name)
			}
		}
		off = ents[len(ents)-1].Offset
	}
	return nil, errors.New("readdir did not end")
}

func (c *p9Client) setattr(p string, m p9.SetAttrMask, a p9.SetAttr) error {
	f, err := c.walk(p)
	if err != nil {
		return err
	}
	defer f.Close()
	return fsErr(f.SetAttr(m, a))
}

func (c *p9Client) Truncate(p string, size int64) error {
	return c.setattr(p, p9.SetAttrMask{Size: true}, p9.SetAttr{Size: uint64(size)})
}

func (c *p9Client) Chmod(p string, perm fs.FileMode) error {
	if m := server.UnixPerm(perm); m&0o6000 != 0 {
		return c.rawChmod(c.uid, p, m)
	}
	return c.setattr(p, p9.SetAttrMask{Permissions: true}, p9.SetAttr{Permissions: p9.FileMode(server.UnixPerm(perm))})
}

func (c *p9Client) Chtimes(p string, mtime time.Time) error {
	return c.setattr(p, p9.SetAttrMask{MTime: true, MTimeNotSystemTime: true},
		p9.SetAttr{MTimeSeconds: uint64(mtime.Unix()), MTimeNanoSeconds: uint64(mtime.Nanosecond())})
}

func (c *p9Client) Chown(p string, uid, gid int) error {
	var m p9.SetAttrMask
	a := p9.SetAttr{UID: p9.NoUID, GID: p9.NoGID}
	if uid >= 0 {
		m.UID, a.UID = true, p9.UID(uid)
	}
	if gid >= 0 {
		m.GID, a.GID = true, p9.GID(gid)
	}
	return c.setattr(p, m, a)
}

// Mknod sends Tmknod as v9fs does for mknod(2) and bind(2) (a device's numbers
// are 1,3: /dev/null's).
func (c *p9Client) Mknod(p string, mode fs.FileMode) error {
	d, name, err := c.parent(p)
	if err != nil {
		return err
	}
	defer d.Close()
	typ := map[fs.FileMode]p9.FileMode{
		fs.ModeNamedPipe: p9.ModeNamedPipe, fs.ModeSocket: p9.ModeSocket,
		fs.ModeDevice: p9.ModeBlockDevice, fs.ModeDevice | fs.ModeCharDevice: p9.ModeCharacterDevice,
	}[mode.Type()]
	_, err = d.Mknod(name, typ|p9.FileMode(server.UnixPerm(mode)), 1, 3, p9.NoUID, p9.NoGID)
	return fsErr(err)
}

// SetTimes sends Tsetattr as v9fs does for utimensat: P9_ATTR_ATIME alone is
// UTIME_NOW, with P9_ATTR_ATIME_SET an explicit time; UTIME_OMIT sends neither.
func (c *p9Client) SetTimes(p string, atime, mtime servertest.TimeSet) error {
	var m p9.SetAttrMask
	var a p9.SetAttr
	if !atime.Omit {
		m.ATime = true
		if !atime.Now {
			m.ATimeNotSystemTime = true
			a.ATimeSeconds, a.ATimeNanoSeconds = uint64(atime.T.Unix()), uint64(atime.T.Nanosecond())
		}
	}
	if !mtime.Omit {
		m.MTime = true
		if !mtime.Now {
			m.MTimeNotSystemTime = true
			a.MTimeSeconds, a.MTimeNanoSeconds = uint64(mtime.T.Unix()), uint64(mtime.T.Nanosecond())
		}
	}
	return c.setattr(p, m, a)
}

// As is a new connection attached as n_uname uid: 9P carries no groups, the
// server takes them from the host's databases (Env.HostGroups).
func (c *p9Client) As(uid, _ uint32, _ []uint32) servertest.Client {
	return &p9Client{root: c.attach(uid), uid: uid, attach: c.attach, rawChmod: c.rawChmod}
}
