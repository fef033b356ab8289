package server

import (
	"io/fs"
	"syscall"
	"time"
)

// Attr is what the core knows about a file, taken from lstat(2): it describes the
// file itself, never a symlink's target.
type Attr struct {
	Mode   fs.FileMode // type bits and permissions (including setuid/setgid/sticky)
	Size   int64
	Ino    uint64
	Dev    uint64
	Nlink  uint32
	UID    uint32
	GID    uint32
	Rdev   uint64
	Blocks int64 // 512-byte blocks actually allocated
	Atime  time.Time
	Mtime  time.Time
	Ctime  time.Time
	Btime  time.Time // birth time; zero where the filesystem does not report one
}

// FileID identifies the file itself across renames, also while the daemon is
// down: the inode alone is not enough, because a deleted file's inode is soon
// reused by a new one; the birth time tells the two apart. Zero birth times
// (filesystems without them) fall back to the inode.
func (a Attr) FileID() uint64 {
	if a.Btime.IsZero() {
		return a.Ino
	}
	// splitmix64 finaliser over inode and birth time: cheap and well mixed.
	x := a.Ino ^ uint64(a.Btime.UnixNano())*0x9e3779b97f4a7c15
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	if x == 0 {
		x = 1
	}
	return x
}

// IsDir reports whether the attributes describe a directory.
func (a Attr) IsDir() bool { return a.Mode.IsDir() }

// IsSymlink reports whether the attributes describe a symbolic link.
func (a Attr) IsSymlink() bool { return a.Mode&fs.ModeSymlink != 0 }

// modeOf converts st_mode to an fs.FileMode the way the os package does.
func modeOf(m uint32) fs.FileMode {
	mode := fs.FileMode(m & 0o777)
	switch m & syscall.S_IFMT {
	case syscall.S_IFBLK:
		mode |= fs.ModeDevice
	case syscall.S_IFCHR:
		mode |= fs.ModeDevice | fs.ModeCharDevice
	case syscall.S_IFDIR:
		mode |= fs.ModeDir
	case syscall.S_IFIFO:
		mode |= fs.ModeNamedPipe
	case syscall.S_IFLNK:
		mode |= fs.ModeSymlink
	case syscall.S_IFSOCK:
		mode |= fs.ModeSocket
	}
	return mode | PermOf(m)&^fs.ModePerm
}

// PermOf is the twelve permission bits of st_mode (or an NFS or 9P mode) m
// as an fs.FileMode: rwx bits, and setuid, setgid and sticky as Go's flags.
// UnixPerm is its inverse. Every door converts through these two.
func PermOf(m uint32) fs.FileMode {
	p := fs.FileMode(m & 0o777)
	if m&syscall.S_ISUID != 0 {
		p |= fs.ModeSetuid
	}
	if m&syscall.S_ISGID != 0 {
		p |= fs.ModeSetgid
	}
	if m&syscall.S_ISVTX != 0 {
		p |= fs.ModeSticky
	}
	return p
}

// UnixPerm converts the permission part of an fs.FileMode to st_mode bits
// (setuid, setgid and sticky as their POSIX bits); type bits are dropped.
func UnixPerm(m fs.FileMode) uint32 {
	p := uint32(m.Perm())
	if m&fs.ModeSetuid != 0 {
		p |= syscall.S_ISUID
	}
	if m&fs.ModeSetgid != 0 {
		p |= syscall.S_ISGID
	}
	if m&fs.ModeSticky != 0 {
		p |= syscall.S_ISVTX
	}
	return p
}

// SetAttr says which attributes to change; nil fields are left alone.
type SetAttr struct {
	Mode     *fs.FileMode // permission bits, setuid, setgid, sticky; type bits are ignored
	UID      *uint32
	GID      *uint32
	Size     *int64
	Atime    *time.Time
	Mtime    *time.Time
	AtimeNow bool // set atime to the server's clock (NFS SET_TO_SERVER_TIME, 9P "now")
	MtimeNow bool
	// OfCreate marks times that complete the caller's create of the file
	// (an NFS CREATE's attributes, an EXCLUSIVE create's verifier): part
	// of that create, not a touch of its own (no ChangeSetTimes).
	OfCreate bool
}

// StatFS describes the filesystem holding the backing directory.
type StatFS struct {
	BlockSize   uint32
	Blocks      uint64
	BlocksFree  uint64
	BlocksAvail uint64
	Files       uint64
	FilesFree   uint64
	NameLen     uint32
}

// DirEntry is one directory entry with its lstat attributes.
type DirEntry struct {
	Name string
	Attr Attr
}
