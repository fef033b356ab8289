package server_test

import (
	"context"
	"io"
	"io/fs"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/semfs/semfs/server"
	"github.com/semfs/semfs/server/servertest"
)

// coreClient runs the conformance suite against the core directly, the
// reference every protocol is compared with.
type coreClient struct {
	fs  *server.FS
	ctx context.Context
}

// sysErr turns a core error into the errno it stands for, so errors.Is with the
// io/fs sentinels works as it does for the protocol clients.
func sysErr(err error) error {
	if err == nil {
		return nil
	}
	switch server.KindOf(err) {
	case server.KindNotFound:
		return syscall.ENOENT
	case server.KindExists:
		return syscall.EEXIST
	case server.KindNotEmpty:
		return syscall.ENOTEMPTY
	case server.KindPermission:
		return syscall.EACCES
	case server.KindInvalid:
		return syscall.EINVAL
	case server.KindCrossDevice:
		return syscall.EXDEV
	case server.KindNotPermitted:
		return syscall.EPERM
	case server.KindLoop:
		return syscall.ELOOP
	case server.KindNameTooLong:
		return syscall.ENAMETOOLONG
	}
	return err
}

func (c coreClient) WriteFile(p string, data []byte, perm fs.FileMode) error {
	f, _, err := c.fs.Create(c.ctx, p, perm, false)
	if err != nil {
		return sysErr(err)
	}
	defer f.Close()
	if err := f.Truncate(0); err != nil {
		return sysErr(err)
	}
	_, err = f.WriteAt(data, 0)
	return sysErr(err)
}

func (c coreClient) ReadFile(p string) ([]byte, error) {
	f, err := c.fs.Open(c.ctx, p, os.O_RDONLY)
	if err != nil {
		return nil, sysErr(err)
	}
	defer f.Close()
	a, err := f.Stat()
	if err != nil {
		return nil, sysErr(err)
	}
	b := make([]byte, a.Size)
	n, err := f.ReadAt(b, 0)
	if err == io.EOF {
		err = nil
	}
	return b[:n], sysErr(err)
}

func (c coreClient) Mkdir(p string, perm fs.FileMode) error {
	_, err := c.fs.Mkdir(c.ctx, p, perm)
	return sysErr(err)
}
func (c coreClient) Remove(p string) error { return sysErr(c.fs.Remove(c.ctx, p, false)) }
func (c coreClient) Rmdir(p string) error  { return sysErr(c.fs.Remove(c.ctx, p, true)) }
func (c coreClient) Rename(o, n string) error {
	return sysErr(c.fs.Rename(c.ctx, o, n))
}
func (c coreClient) Symlink(target, p string) error {
	_, err := c.fs.Symlink(c.ctx, target, p)
	return sysErr(err)
}
func (c coreClient) Readlink(p string) (string, error) {
	s, err := c.fs.Readlink(c.ctx, p)
	return s, sysErr(err)
}
func (c coreClient) Link(o, n string) error {
	_, err := c.fs.Link(c.ctx, o, n)
	return sysErr(err)
}
func (c coreClient) Lstat(p string) (servertest.Info, error) {
	a, err := c.fs.Lstat(c.ctx, p)
	if err != nil {
		return servertest.Info{}, sysErr(err)
	}
	return servertest.Info{Size: a.Size, Mode: a.Mode, Nlink: a.Nlink, Mtime: a.Mtime, Atime: a.Atime,
		UID: a.UID, GID: a.GID}, nil
}
func (c coreClient) ReadDir(p string) ([]string, error) {
	ents, err := c.fs.ReadDir(c.ctx, p)
	if err != nil {
		return nil, sysErr(err)
	}
	names := make([]string, len(ents))
	for i, e := range ents {
		names[i] = e.Name
	}
	return names, nil
}
func (c coreClient) Truncate(p string, size int64) error {
	_, err := c.fs.SetAttr(c.ctx, p, server.SetAttr{Size: &size})
	return sysErr(err)
}
func (c coreClient) Chmod(p string, perm fs.FileMode) error {
	_, err := c.fs.SetAttr(c.ctx, p, server.SetAttr{Mode: &perm})
	return sysErr(err)
}
func (c coreClient) Chtimes(p string, mtime time.Time) error {
	_, err := c.fs.SetAttr(c.ctx, p, server.SetAttr{Mtime: &mtime})
	return sysErr(err)
}

func (c coreClient) Chown(p string, uid, gid int) error {
	var s server.SetAttr
	if uid >= 0 {
		u := uint32(uid)
		s.UID = &u
	}
	if gid >= 0 {
		g := uint32(gid)
		s.GID = &g
	}
	_, err := c.fs.SetAttr(c.ctx, p, s)
	return sysErr(err)
}
func (c coreClient) Mknod(p string, mode fs.FileMode) error {
	_, err := c.fs.Mknod(c.ctx, p, mode)
	return sysErr(err)
}
func (c coreClient) SetTimes(p string, atime, mtime servertest.TimeSet) error {
	var s server.SetAttr
	set := func(ts servertest.TimeSet, t **time.Time, now *bool) {
		switch {
		case ts.Omit:
		case ts.Now:
			*now = true
		default:
			*t = &ts.T
		}
	}
	set(atime, &s.Atime, &s.AtimeNow)
	set(mtime, &s.Mtime, &s.MtimeNow)
	_, err := c.fs.SetAttr(c.ctx, p, s)
	return sysErr(err)
}
func (c coreClient) As(uid, gid uint32, groups []uint32) servertest.Client {
	id := server.Identity{MountApp: "conformance", UID: uid, HasUID: true, GID: gid, HasGID: true, Groups: groups}
	return coreClient{fs: c.fs, ctx: server.WithIdentity(context.Background(), id)}
}

func TestConformance(t *testing.T) {
	servertest.Run(t, func(t *testing.T) servertest.Env {
		backing, outside := servertest.NewDirs(t)
		fsys, err := server.New(backing, server.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { fsys.Close() })
		return servertest.Env{Client: coreClient{fs: fsys, ctx: as("conformance")}, Backing: backing, Outside: outside}
	})
}
