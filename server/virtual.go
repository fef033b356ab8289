package server

import (
	"context"
	"hash/fnv"
	"slices"
	"strings"
)

// Virtual is a tree of files the daemon makes up rather than stores (the
// .semfs namespace of server/meta), shown at one name in the root of the
// backing directory. The FS routes every call on a path at or under that name
// to it, so both front ends and every fast path of theirs serve the same tree
// through the same core calls they make for real files: a front end needs no
// code of its own for it. Paths given to a Virtual are whole core paths
// (Name() or Name()+"/…"); its errors are *Error like the core's.
//
// Everything in the tree is read-only except what OpenFile lets a caller write
// (tags files); namespace changes inside it (create, mkdir, symlink, link,
// mkfifo, remove, rename, chmod, chown, times) are refused by the FS with
// KindReadOnly before the Virtual is asked, and so is creating a real file of
// that name at the root: the name belongs to the tree.
type Virtual interface {
	Name() string
	Lstat(ctx context.Context, p string) (Attr, error)
	ReadDir(ctx context.Context, p string) ([]DirEntry, error)
	Readlink(ctx context.Context, p string) (string, error)
	// OpenFile opens a regular file of the tree; write asks for writing
	// (KindReadOnly where the tree has nothing writable).
	OpenFile(ctx context.Context, p string, write bool) (VirtualFile, error)
	// Truncate sets the size of a writable file by path (NFS SETATTR, 9P
	// Tsetattr): KindReadOnly elsewhere.
	Truncate(ctx context.Context, p string, size int64) error
}

// VirtualFile is an open file of a Virtual tree. Its reads see the tree as it
// is at each call (a cached NFS descriptor must not serve old tags).
type VirtualFile interface {
	ReadAt(b []byte, off int64) (int, error)
	WriteAt(b []byte, off int64) (int, error)
	Truncate(size int64) error
	Stat() (Attr, error)
	// Close ends the file; an incomplete write is reported here.
	Close() error
}

// VirtualIOChecker is what a VirtualFile may add: a check of the caller of
// each read or write made through a descriptor shared by every caller (NFS),
// as File.CheckIO makes for real files. Without it, the open decided.
type VirtualIOChecker interface {
	CheckIO(ctx context.Context, write bool) error
}

// VirtualAttributer is what a VirtualFile may add when its writes act for a
// caller (a tags file's write tags as its writer): File.Attribute passes it
// each caller of a descriptor shared by every caller (NFS), before that
// caller's write.
type VirtualAttributer interface {
	Attribute(ctx context.Context)
}

func (fl *File) checkVirtualIO(ctx context.Context, write bool) error {
	if c, ok := fl.v.(VirtualIOChecker); ok {
		return c.CheckIO(ctx, write)
	}
	return nil
}

// VirtualIno is the inode number of virtual path p: stable across restarts
// (NFS handles name inode numbers and must outlive the daemon) and outside the
// range real file systems hand out (the top bit is set), so that it is never
// taken for a real file's.
func VirtualIno(p string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(p))
	return 1<<63 | h.Sum64()>>1
}

// Inline reports whether the core answers calls on p with system calls alone,
// so that a front end may answer them in a connection's only reader (see
// LstatInline): not in the virtual tree, whose answers can run a query and so
// wait for the index while the connection reads nothing else.
func (f *FS) Inline(p string) bool { return !f.virtual(p) }

// virtual reports whether p is in the virtual tree.
func (f *FS) virtual(p string) bool {
	if f.virt == nil {
		return false
	}
	n := f.virt.Name()
	return p == n || (len(p) > len(n) && p[len(n)] == '/' && strings.HasPrefix(p, n))
}

// refuseVirtual is the answer to a namespace change inside the virtual tree.
func refuseVirtual(op, p string) error {
	return E(op, KindReadOnly, p, constError("the semfs namespace is read-only except its tags files"))
}

// refuseVirtualName is the answer to making name p inside the virtual tree
// (create, mkdir, symlink, mknod, a link's new name): KindExists when p is
// there (every name under query/ is a query directory, and the tree's own
// root), as Linux answers EEXIST before EROFS on a read-only mount (the
// lookup comes first); refuseVirtual's KindReadOnly otherwise.
func (f *FS) refuseVirtualName(ctx context.Context, op, p string) error {
	if _, err := f.virt.Lstat(ctx, p); err == nil {
		return E(op, KindExists, p, constError("the semfs namespace has this name already"))
	}
	return refuseVirtual(op, p)
}

// withVirtualRoot adds the tree's root to a listing of the backing root when
// Options.ListVirtual asks for it, in name order.
func (f *FS) withVirtualRoot(ctx context.Context, out []DirEntry) []DirEntry {
	if f.virt == nil || !f.listVirtual {
		return out
	}
	n := f.virt.Name()
	a, err := f.virt.Lstat(ctx, n)
	if err != nil {
		return out
	}
	i, found := slices.BinarySearchFunc(out, n, func(e DirEntry, n string) int { return strings.Compare(e.Name, n) })
	if found {
		out[i] = DirEntry{Name: n, Attr: a} // a real one is shadowed (refused at create, reported at start)
		return out
	}
	return slices.Insert(out, i, DirEntry{Name: n, Attr: a})
}

// openVirtual opens file p of the virtual tree as a *File.
func (f *FS) openVirtual(ctx context.Context, p string, write, trunc bool) (*File, error) {
	vf, err := f.virt.OpenFile(ctx, p, write)
	if err != nil {
		return nil, err
	}
	if trunc {
		if err := vf.Truncate(0); err != nil {
			vf.Close()
			return nil, err
		}
	}
	return &File{fs: f, v: vf, path: p, write: write}, nil
}

// VirtualShadowed reports whether a real file in the backing root bears the
// virtual tree's name (it is hidden by the tree; the daemon reports it at start).
func (f *FS) VirtualShadowed() bool {
	if f.virt == nil {
		return false
	}
	_, err := statx(f.res.rootFd, f.virt.Name(), "lstat", f.virt.Name())
	return err == nil
}

// setAttrVirtual is SetAttr inside the virtual tree: a size change of a
// writable file (what O_TRUNC becomes over NFS and 9P). Times are accepted
// and dropped, the tree's times being its own: a client sends them with the
// size of an O_TRUNC (go-nfs applies them as a call of their own), and touch
// of an existing entry changes nothing. chmod and chown are refused.
func (f *FS) setAttrVirtual(ctx context.Context, p string, s SetAttr) (Attr, error) {
	if s.Mode != nil || s.UID != nil || s.GID != nil {
		return Attr{}, refuseVirtual("setattr", p)
	}
	if s.Size != nil {
		if err := f.virt.Truncate(ctx, p, *s.Size); err != nil {
			return Attr{}, err
		}
	}
	return f.virt.Lstat(ctx, p)
}

// accessVirtual answers Access inside the virtual tree from its modes, as the
// tree shows them to every caller: read and search everywhere, write on the
// tags files.
func (f *FS) accessVirtual(ctx context.Context, p string, want Access) (Access, error) {
	a, err := f.virt.Lstat(ctx, p)
	if err != nil {
		return 0, err
	}
	var got Access
	m := a.Mode.Perm()
	if m&0o444 != 0 {
		got |= MayRead
	}
	if m&0o222 != 0 {
		got |= MayWrite
	}
	if m&0o111 != 0 {
		got |= MayExec
	}
	return got & want, nil
}

// VirtualXattrs is what a Virtual may add: extended attributes shown on the
// real files of the tree (user.semfs.task, …), each a field of the file's
// record. Names it does not know are KindNotSupported.
type VirtualXattrs interface {
	// CheckXattr says what name is, before any file is looked at: nil for
	// an attribute a client may set, KindNotPermitted for one it may only
	// read, KindNotSupported for a name that is none of them.
	CheckXattr(name string) error
	GetXattr(ctx context.Context, p, name string) ([]byte, error)
	SetXattr(ctx context.Context, p, name string, value []byte) error
	ListXattrs(ctx context.Context, p string) ([]string, error)
}

// xattrs is the Virtual's VirtualXattrs, for real path p (nil: none).
func (f *FS) xattrs(p string) VirtualXattrs {
	if f.virtual(p) {
		return nil
	}
	x, _ := f.virt.(VirtualXattrs)
	return x
}

func noXattrs(op, p string) error {
	return E(op, KindNotSupported, p, constError("extended attributes are not supported"))
}

// CheckXattr says whether name is an extended attribute a client may set (nil),
// only read (KindNotPermitted) or not one at all (KindNotSupported), so a front
// end that must answer before it has a file (9P's Txattrcreate, or a
// Txattrwalk p9 would answer wrongly) asks here instead of keeping a list.
func (f *FS) CheckXattr(name string) error {
	x, _ := f.virt.(VirtualXattrs)
	if x == nil {
		return noXattrs("xattr", "")
	}
	return x.CheckXattr(name)
}

// GetXattr reads the virtual extended attribute name of p.
func (f *FS) GetXattr(ctx context.Context, p, name string) ([]byte, error) {
	x := f.xattrs(p)
	if x == nil {
		return nil, noXattrs("getxattr", p)
	}
	return x.GetXattr(ctx, p, name)
}

// SetXattr sets the virtual extended attribute name of p.
func (f *FS) SetXattr(ctx context.Context, p, name string, value []byte) error {
	x := f.xattrs(p)
	if x == nil {
		return noXattrs("setxattr", p)
	}
	return x.SetXattr(ctx, p, name, value)
}

// ListXattrs lists the virtual extended attributes of p.
func (f *FS) ListXattrs(ctx context.Context, p string) ([]string, error) {
	x := f.xattrs(p)
	if x == nil {
		return nil, noXattrs("listxattr", p)
	}
	return x.ListXattrs(ctx, p)
}
