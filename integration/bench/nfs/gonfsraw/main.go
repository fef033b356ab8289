// Command gonfsraw serves a directory with the stock go-nfs v0.0.4 stack, as its
// osnfs example does (billy osfs, null auth, CachingHandler with 1024 handles),
// but on 127.0.0.1 only. It is the "raw go-nfs" column of the NFS benchmarks:
// the library semfs's nfs/ package wraps, without semfs's adapter.
//
//	gonfsraw DIR PORT
package main

import (
	"fmt"
	"net"
	"os"
	"time"

	billy "github.com/go-git/go-billy/v5"
	"github.com/go-git/go-billy/v5/osfs"
	gonfs "github.com/willscott/go-nfs"
	"github.com/willscott/go-nfs/helpers"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: gonfsraw DIR PORT")
		os.Exit(2)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:"+os.Args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	h := helpers.NewNullAuthHandler(changeFS{osfs.New(os.Args[1])})
	fmt.Fprintln(os.Stderr, gonfs.Serve(ln, helpers.NewCachingHandler(h, 1024)))
}

// changeFS adds billy.Change (chmod, chown, times) on the host paths, as the
// example's ChangeOSFS does, so SETATTR works.
type changeFS struct{ billy.Filesystem }

func (c changeFS) path(name string) string { return c.Join(c.Root(), name) }

func (c changeFS) Chmod(name string, mode os.FileMode) error { return os.Chmod(c.path(name), mode) }
func (c changeFS) Lchown(name string, uid, gid int) error {
	return os.Lchown(c.path(name), uid, gid)
}
func (c changeFS) Chown(name string, uid, gid int) error { return os.Chown(c.path(name), uid, gid) }
func (c changeFS) Chtimes(name string, atime, mtime time.Time) error {
	return os.Chtimes(c.path(name), atime, mtime)
}
