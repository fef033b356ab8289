package differential

import (
	"errors"
	"fmt"
	"io"
	"path"

	"github.com/hugelgupf/p9/linux"
	"github.com/hugelgupf/p9/p9"
)

// NinePTarget runs steps through github.com/hugelgupf/p9's client below one
// base directory, walking one name per Twalk from the base for every step
// (so the first name that fails is the answer) and clunking every fid it
// made before the step returns. A step of User's walks from the base as
// reached through User's own attach.
type NinePTarget struct {
	base, ubase p9.File
}

// Linux's O_EXCL and AT_REMOVEDIR as 9P2000.L carries them.
const (
	oExcl       = 0o200
	atRemoveDir = 0x200
)

// NewNinePTarget makes a directory named base, mode 0777, in root (attached
// as uid 0) and acts below it; user is the same export attached as User.
func NewNinePTarget(root, user p9.File, base string) (*NinePTarget, error) {
	if _, err := root.Mkdir(base, 0o777, 0, 0); err != nil {
		return nil, fmt.Errorf("mkdir %s: %w", base, err)
	}
	_, f, err := root.Walk([]string{base})
	if err != nil {
		return nil, fmt.Errorf("walk %s: %w", base, err)
	}
	// Set the mode again: a server may apply a umask to Tmkdir's.
	if err := f.SetAttr(p9.SetAttrMask{Permissions: true}, p9.SetAttr{Permissions: 0o777}); err != nil {
		return nil, fmt.Errorf("chmod %s: %w", base, err)
	}
	_, u, err := user.Walk([]string{base})
	if err != nil {
		return nil, fmt.Errorf("walk %s as %d: %w", base, User, err)
	}
	return &NinePTarget{base: f, ubase: u}, nil
}

// errnoOf names err's errno, or says it is not one (a transport failure).
func errnoOf(err error) (string, bool) {
	var e linux.Errno
	if errors.As(err, &e) {
		return linuxErrnoName(e), true
	}
	return "", false
}

func linuxErrnoName(e linux.Errno) string {
	names := map[linux.Errno]string{
		linux.EPERM: "EPERM", linux.ENOENT: "ENOENT", linux.EIO: "EIO", linux.EBADF: "EBADF",
		linux.EACCES: "EACCES", linux.EEXIST: "EEXIST", linux.EXDEV: "EXDEV", linux.ENOTDIR: "ENOTDIR",
		linux.EISDIR: "EISDIR", linux.EINVAL: "EINVAL", linux.EFBIG: "EFBIG", linux.ENOSPC: "ENOSPC",
		linux.EROFS: "EROFS", linux.EMLINK: "EMLINK", linux.ENAMETOOLONG: "ENAMETOOLONG",
		linux.ENOTEMPTY: "ENOTEMPTY", linux.ELOOP: "ELOOP", linux.ENOSYS: "ENOSYS",
		linux.EOPNOTSUPP: "EOPNOTSUPP", linux.EBUSY: "EBUSY", linux.ENXIO: "ENXIO", linux.ENODATA: "ENODATA",
	}
	if n, ok := names[e]; ok {
		return n
	}
	return fmt.Sprintf("errno%d", int(e))
}

// answer turns a call's error into the step's result, or passes on a
// transport failure.
func answer(err error, detail string) (Result, error) {
	if err == nil {
		return Result{Status: "OK", Detail: detail}, nil
	}
	if n, ok := errnoOf(err); ok {
		return Result{Status: n}, nil
	}
	return Result{}, err
}

// walk clones the base and walks p on the clone, one name at a time; the
// caller closes what it returns.
func (t *NinePTarget) walk(base p9.File, p []string) (p9.File, error) {
	_, f, err := base.Walk(nil)
	if err != nil {
		return nil, err
	}
	for _, n := range p {
		_, g, err := f.Walk([]string{n})
		f.Close()
		if err != nil {
			return nil, err
		}
		f = g
	}
	return f, nil
}

func (t *NinePTarget) Do(op Op) (Result, error) {
	b := t.base
	if op.As == User {
		b = t.ubase
	}
	r, err := t.do(b, op)
	if err != nil {
		if n, ok := errnoOf(err); ok {
			return Result{Status: n, Detail: "(walk)"}, nil
		}
	}
	return r, err
}

func (t *NinePTarget) do(b p9.File, op Op) (Result, error) {
	last := ""
	if len(op.Path) > 0 {
		last = op.Path[len(op.Path)-1]
	}
	switch op.Kind {
	case Create, CreateExcl, Mkdir, Symlink, Remove, Rmdir, Rename, Link:
		dir, err := t.walk(b, op.Path[:len(op.Path)-1])
		if err != nil {
			return Result{}, err
		}
		defer dir.Close()
		switch op.Kind {
		case Create, CreateExcl:
			flags := p9.ReadWrite
			if op.Kind == CreateExcl {
				flags |= oExcl
			}
			f, _, _, err := dir.Create(last, flags, p9.FileMode(op.Mode), 0, 0)
			if err == nil {
				f.Close() // the directory's fid is now the open file
			}
			return answer(err, "")
		case Mkdir:
			_, err := dir.Mkdir(last, p9.FileMode(op.Mode), 0, 0)
			return answer(err, "")
		case Symlink:
			_, err := dir.Symlink(op.Target, last, 0, 0)
			return answer(err, "")
		case Remove, Rmdir:
			flags := uint32(0)
			if op.Kind == Rmdir {
				flags = atRemoveDir
			}
			err := dir.UnlinkAt(last, flags)
			if isNotSupported(err) {
				err = t.removeFallback(b, op)
			}
			return answer(err, "")
		case Rename:
			to, err := t.walk(b, op.Path2[:len(op.Path2)-1])
			if err != nil {
				return Result{}, err
			}
			defer to.Close()
			err = dir.RenameAt(last, to, op.Path2[len(op.Path2)-1])
			if isNotSupported(err) {
				err = t.renameFallback(b, op, to)
			}
			return answer(err, "")
		case Link:
			obj, err := t.walk(b, op.Path)
			if err != nil {
				return Result{}, err
			}
			defer obj.Close()
			to, err := t.walk(b, op.Path2[:len(op.Path2)-1])
			if err != nil {
				return Result{}, err
			}
			defer to.Close()
			return answer(to.Link(obj, op.Path2[len(op.Path2)-1]), "")
		}
	}
	f, err := t.walk(b, op.Path)
	if err != nil {
		return Result{}, err
	}
	defer f.Close()
	switch op.Kind {
	case Write:
		if _, _, err := f.Open(p9.WriteOnly); err != nil {
			return answer(err, "(open)")
		}
		n, err := f.WriteAt(op.Data(), int64(op.Off))
		return answer(err, fmt.Sprintf("count=%d", n))
	case Read:
		if _, _, err := f.Open(p9.ReadOnly); err != nil {
			return answer(err, "(open)")
		}
		b := make([]byte, op.Len)
		n, err := f.ReadAt(b, int64(op.Off))
		if err == io.EOF { // the client's word for an empty Rread
			err = nil
		}
		return answer(err, digest(b[:n]))
	case Truncate:
		return answer(f.SetAttr(p9.SetAttrMask{Size: true}, p9.SetAttr{Size: op.Off}), "")
	case Chmod:
		return answer(f.SetAttr(p9.SetAttrMask{Permissions: true}, p9.SetAttr{Permissions: p9.FileMode(op.Mode)}), "")
	case Utimes:
		err := f.SetAttr(p9.SetAttrMask{ATime: true, MTime: true, ATimeNotSystemTime: true, MTimeNotSystemTime: true},
			p9.SetAttr{ATimeSeconds: uint64(op.Sec), ATimeNanoSeconds: uint64(op.Nsec), MTimeSeconds: uint64(op.Sec), MTimeNanoSeconds: uint64(op.Nsec)})
		if err != nil {
			return answer(err, "")
		}
		_, _, a, err := f.GetAttr(p9.AttrMaskAll)
		return answer(err, fmt.Sprintf("atime=%d.%09d mtime=%d.%09d", a.ATimeSeconds, a.ATimeNanoSeconds, a.MTimeSeconds, a.MTimeNanoSeconds))
	case Readdir:
		names, err := t.readdir(f, op.Count)
		return answer(err, sortedNames(names))
	case Stat:
		_, _, a, err := f.GetAttr(p9.AttrMaskAll)
		return answer(err, attrNode(a).String())
	case Readlink:
		s, err := f.Readlink()
		return answer(err, fmt.Sprintf("%q", s))
	}
	return Result{}, fmt.Errorf("9p: no step %q", op.Kind)
}

// readdir opens f and lists it in rounds of count bytes, returning every
// name but "." and "..".
func (t *NinePTarget) readdir(f p9.File, count uint32) ([]string, error) {
	if _, _, err := f.Open(p9.ReadOnly); err != nil {
		return nil, err
	}
	var names []string
	var off uint64
	for range 10000 {
		ents, err := f.Readdir(off, count)
		if err != nil {
			return nil, err
		}
		if len(ents) == 0 {
			return names, nil
		}
		for _, e := range ents {
			if e.Name != "." && e.Name != ".." {
				names = append(names, e.Name)
			}
			off = e.Offset
		}
	}
	return nil, fmt.Errorf("9p: readdir did not end in 10000 rounds")
}

func attrNode(a p9.Attr) Node {
	typ := "other"
	switch {
	case a.Mode.IsRegular():
		typ = "file"
	case a.Mode.IsDir():
		typ = "dir"
	case a.Mode.IsSymlink():
		typ = "symlink"
	}
	return Node{Type: typ, Mode: uint32(a.Mode.Permissions()) | uint32(a.Mode)&0o7000, Size: a.Size,
		Nlink: uint32(a.NLink), UID: uint32(a.UID), GID: uint32(a.GID)}
}

func (t *NinePTarget) Snapshot() (Tree, error) {
	tree := Tree{}
	f, err := t.walk(t.base, nil)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	_, _, a, err := f.GetAttr(p9.AttrMaskAll)
	if err != nil {
		return nil, fmt.Errorf("9p: getattr base: %w", err)
	}
	tree[""] = attrNode(a)
	return tree, t.walkTree(nil, tree)
}

func (t *NinePTarget) walkTree(at []string, tree Tree) error {
	d, err := t.walk(t.base, at)
	if err != nil {
		return fmt.Errorf("9p: walk %q: %w", path.Join(at...), err)
	}
	names, err := t.readdir(d, 8192)
	d.Close()
	if err != nil {
		return fmt.Errorf("9p: readdir %q: %w", path.Join(at...), err)
	}
	for _, n := range names {
		p := append(append([]string(nil), at...), n)
		if err := t.node(p, tree); err != nil {
			return err
		}
	}
	return nil
}

func (t *NinePTarget) node(p []string, tree Tree) error {
	key := path.Join(p...)
	f, err := t.walk(t.base, p)
	if err != nil {
		return fmt.Errorf("9p: listed %q: walk: %w", key, err)
	}
	defer f.Close()
	_, _, a, err := f.GetAttr(p9.AttrMaskAll)
	if err != nil {
		return fmt.Errorf("9p: getattr %q: %w", key, err)
	}
	node := attrNode(a)
	switch node.Type {
	case "file":
		// Opening a file whose mode allows no reading still works as root.
		if _, _, err := f.Open(p9.ReadOnly); err != nil {
			node.Data = "open " + errName(err)
			break
		}
		var out []byte
		buf := make([]byte, 65536)
		for len(out) < 16<<20 {
			n, err := f.ReadAt(buf, int64(len(out)))
			out = append(out, buf[:n]...)
			if err == io.EOF || (err == nil && n == 0) {
				break
			}
			if err != nil {
				return fmt.Errorf("9p: read %q at %d: %w", key, len(out), err)
			}
		}
		node.Data = digest(out)
	case "symlink":
		s, err := f.Readlink()
		if err != nil {
			node.Data = "readlink " + errName(err)
		} else {
			node.Data = fmt.Sprintf("-> %q", s)
		}
	case "dir":
		if err := t.walkTree(p, tree); err != nil {
			return err
		}
	}
	tree[key] = node
	return nil
}

func errName(err error) string {
	if n, ok := errnoOf(err); ok {
		return n
	}
	return err.Error()
}

func isNotSupported(err error) bool {
	var e linux.Errno
	return errors.As(err, &e) && (e == linux.EOPNOTSUPP || e == linux.ENOSYS)
}

// removeFallback removes as Linux's v9fs does when a server does not know
// Tunlinkat (diod 1.0.24): Tremove on a fid walked to the name. The kernel
// has already refused, from the type it knows, rmdir of a non-directory
// (ENOTDIR) and unlink of a directory (EISDIR); Tremove itself cannot tell
// the two apart, so the fallback checks the type first as the kernel does.
func (t *NinePTarget) removeFallback(b p9.File, op Op) error {
	f, err := t.walk(b, op.Path)
	if err != nil {
		return err
	}
	_, _, a, err := f.GetAttr(p9.AttrMaskAll)
	if err != nil {
		f.Close()
		return err
	}
	switch isDir := a.Mode.IsDir(); {
	case op.Kind == Rmdir && !isDir:
		f.Close()
		return linux.ENOTDIR
	case op.Kind == Remove && isDir:
		f.Close()
		return linux.EISDIR
	}
	// Tremove clunks the fid whatever it answers. p9's client still has it
	// but keeps it off its File interface.
	r, ok := f.(interface{ Remove() error })
	if !ok {
		f.Close()
		return errors.New("9p: the client cannot send Tremove")
	}
	return r.Remove()
}

// renameFallback renames as v9fs does when a server does not know
// Trenameat: Trename of a fid walked to the old name.
func (t *NinePTarget) renameFallback(b p9.File, op Op, to p9.File) error {
	f, err := t.walk(b, op.Path)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Rename(to, op.Path2[len(op.Path2)-1])
}
