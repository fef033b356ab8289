package nfs

import (
	"io/fs"
	"time"

	"github.com/semfs/semfs/server"
	"github.com/willscott/go-nfs/file"
	"golang.org/x/sys/unix"
)

// fileInfo presents a server.Attr to go-nfs, which builds fattr3 from Mode, Size,
// ModTime and the file.FileInfo in Sys (nlink, owner, device numbers, fileid).
type fileInfo struct {
	name string
	a    server.Attr
	sys  file.FileInfo
}

func newFileInfo(name string, a server.Attr) *fileInfo {
	nlink := a.Nlink
	if a.IsDir() && nlink < 2 {
		nlink = 2 // macOS clients need it, and some filesystems report 1
	}
	return &fileInfo{name: name, a: a, sys: file.FileInfo{
		Nlink:  nlink,
		UID:    a.UID,
		GID:    a.GID,
		Major:  unix.Major(a.Rdev),
		Minor:  unix.Minor(a.Rdev),
		Fileid: a.Ino,
	}}
}

func (fi *fileInfo) Name() string { return fi.name }
func (fi *fileInfo) Size() int64  { return fi.a.Size }

// Mode keeps Go's type bits (go-nfs derives the NFS file type from them) and adds
// setuid, setgid and sticky as their POSIX bits: go-nfs copies the FileMode into
// fattr3.mode, and Go's own bits for them are outside the 12 bits NFS carries.
func (fi *fileInfo) Mode() fs.FileMode {
	special := fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky
	return fi.a.Mode&^special | fs.FileMode(server.UnixPerm(fi.a.Mode))
}
func (fi *fileInfo) ModTime() time.Time { return fi.a.Mtime }
func (fi *fileInfo) IsDir() bool        { return fi.a.IsDir() }
func (fi *fileInfo) Sys() any           { return &fi.sys }
