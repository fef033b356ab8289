package differential

import (
	"errors"
	"fmt"
	"path"
)

// NFSTarget runs steps through NFSClient below one base directory: as
// root, or as User through a client of its own for the steps that say so.
type NFSTarget struct {
	root, user *NFSClient
	base       []byte
}

// NewNFSTarget makes a directory named base, mode 0777, in the export's
// root (whose handle is rootFH) and acts below it; root and user send
// AUTH_UNIX 0 and User.
func NewNFSTarget(root, user *NFSClient, rootFH []byte, base string) (*NFSTarget, error) {
	c := root
	mode := uint32(0o777)
	st, d, err := c.nfs3(pMkdir, (&xenc{}).dirop(rootFH, base).sattr(sattr{mode: &mode}))
	if err != nil {
		return nil, err
	}
	if st != 0 {
		return nil, fmt.Errorf("mkdir %s: %s", base, nfsStatus(st))
	}
	fh, err := newHandle(d)
	if err != nil {
		return nil, err
	}
	// Set the mode again: a server may apply a umask to MKDIR's.
	if st, _, err := c.nfs3(pSetattr, (&xenc{}).opaque(fh).sattr(sattr{mode: &mode}).u32(0)); err != nil || st != 0 {
		return nil, fmt.Errorf("chmod %s: %s %v", base, nfsStatus(st), err)
	}
	return &NFSTarget{root: root, user: user, base: fh}, nil
}

// newHandle reads a post_op_fh3 that must hold a handle.
func newHandle(d *xdec) ([]byte, error) {
	if d.u32() != 1 {
		return nil, fmt.Errorf("nfs: created object without a handle")
	}
	fh := d.opaque()
	if d.err != nil {
		return nil, d.err
	}
	return append([]byte(nil), fh...), nil
}

// stepErr is a status met on the way to a step's object (a LOOKUP of a
// directory above it), which is the step's answer.
type stepErr struct{ status string }

func (e stepErr) Error() string { return e.status }

// lookup returns name's handle and attributes in dir.
func (t *NFSTarget) lookup(c *NFSClient, dir []byte, name string) ([]byte, fattr3, error) {
	st, d, err := c.nfs3(pLookup, (&xenc{}).dirop(dir, name))
	if err != nil {
		return nil, fattr3{}, err
	}
	if st != 0 {
		return nil, fattr3{}, stepErr{nfsStatus(st)}
	}
	fh := append([]byte(nil), d.opaque()...)
	a, ok := d.postOp()
	if d.err != nil {
		return nil, fattr3{}, d.err
	}
	if !ok {
		if a, err = t.getattr(c, fh); err != nil {
			return nil, fattr3{}, err
		}
	}
	return fh, a, nil
}

func (t *NFSTarget) getattr(c *NFSClient, fh []byte) (fattr3, error) {
	st, d, err := c.nfs3(pGetattr, (&xenc{}).opaque(fh))
	if err != nil {
		return fattr3{}, err
	}
	if st != 0 {
		return fattr3{}, stepErr{nfsStatus(st)}
	}
	a := d.fattr()
	return a, d.err
}

// dir resolves every component but the last, as a kernel client does, one
// LOOKUP each.
func (t *NFSTarget) dir(c *NFSClient, p []string) ([]byte, error) {
	fh := t.base
	for _, n := range p[:len(p)-1] {
		var err error
		if fh, _, err = t.lookup(c, fh, n); err != nil {
			return nil, err
		}
	}
	return fh, nil
}

// object resolves the whole path; an empty path is the base.
func (t *NFSTarget) object(c *NFSClient, p []string) ([]byte, error) {
	if len(p) == 0 {
		return t.base, nil
	}
	dir, err := t.dir(c, p)
	if err != nil {
		return nil, err
	}
	fh, _, err := t.lookup(c, dir, p[len(p)-1])
	return fh, err
}

func (t *NFSTarget) Do(op Op) (Result, error) {
	c := t.root
	if op.As == User {
		c = t.user
	}
	r, err := t.do(c, op)
	var se stepErr
	var re rpcErr
	switch {
	case errors.As(err, &se):
		return Result{Status: se.status, Detail: "(lookup)"}, nil
	case errors.As(err, &re):
		return Result{Status: re.Error()}, nil
	}
	return r, err
}

func status(st uint32, d *xdec) (Result, error) {
	if d != nil && d.err != nil {
		return Result{}, d.err
	}
	return Result{Status: nfsStatus(st)}, nil
}

func (t *NFSTarget) do(c *NFSClient, op Op) (Result, error) {
	last := ""
	if len(op.Path) > 0 {
		last = op.Path[len(op.Path)-1]
	}
	switch op.Kind {
	case Create, CreateExcl, Mkdir, Symlink, Remove, Rmdir:
		dir, err := t.dir(c, op.Path)
		if err != nil {
			return Result{}, err
		}
		e := (&xenc{}).dirop(dir, last)
		proc := map[Kind]uint32{Create: pCreate, CreateExcl: pCreate, Mkdir: pMkdir,
			Symlink: pSymlink, Remove: pRemove, Rmdir: pRmdir}[op.Kind]
		mode := op.Mode
		switch op.Kind {
		case Create:
			e.u32(0).sattr(sattr{mode: &mode}) // UNCHECKED
		case CreateExcl:
			e.u32(1).sattr(sattr{mode: &mode}) // GUARDED
		case Mkdir:
			e.sattr(sattr{mode: &mode})
		case Symlink:
			e.sattr(sattr{}).str(op.Target)
		}
		st, d, err := c.nfs3(proc, e)
		if err != nil {
			return Result{}, err
		}
		return status(st, d)
	case Rename, Link:
		var from []byte
		var err error
		if op.Kind == Rename {
			from, err = t.dir(c, op.Path)
		} else {
			from, err = t.object(c, op.Path)
		}
		if err != nil {
			return Result{}, err
		}
		to, err := t.dir(c, op.Path2)
		if err != nil {
			return Result{}, err
		}
		var e *xenc
		proc := uint32(pLink)
		if op.Kind == Rename {
			proc = pRename
			e = (&xenc{}).dirop(from, last).dirop(to, op.Path2[len(op.Path2)-1])
		} else {
			e = (&xenc{}).opaque(from).dirop(to, op.Path2[len(op.Path2)-1])
		}
		st, d, err := c.nfs3(proc, e)
		if err != nil {
			return Result{}, err
		}
		return status(st, d)
	}
	fh, err := t.object(c, op.Path)
	if err != nil {
		return Result{}, err
	}
	switch op.Kind {
	case Write:
		e := (&xenc{}).opaque(fh).u64(op.Off).u32(op.Len).u32(2).opaque(op.Data()) // FILE_SYNC
		st, d, err := c.nfs3(pWrite, e)
		if err != nil || st != 0 {
			return Result{Status: nfsStatus(st)}, err
		}
		if d.u32() == 1 { // wcc_data: pre_op_attr, post_op_attr
			d.skip(24)
		}
		d.postOp()
		n := d.u32()
		return Result{Status: "OK", Detail: fmt.Sprintf("count=%d", n)}, d.err
	case Read:
		st, d, err := c.nfs3(pRead, (&xenc{}).opaque(fh).u64(op.Off).u32(op.Len))
		if err != nil || st != 0 {
			return Result{Status: nfsStatus(st)}, err
		}
		d.postOp()
		d.u32() // count
		eof := d.u32()
		data := d.opaque()
		return Result{Status: "OK", Detail: fmt.Sprintf("eof=%d %s", eof, digest(data))}, d.err
	case Truncate, Chmod, Utimes:
		var s sattr
		var times [2]uint32
		switch op.Kind {
		case Truncate:
			s.size = &op.Off
		case Chmod:
			s.mode = &op.Mode
		case Utimes:
			times = [2]uint32{op.Sec, op.Nsec}
			s.times = &times
		}
		st, d, err := c.nfs3(pSetattr, (&xenc{}).opaque(fh).sattr(s).u32(0))
		if err != nil || st != 0 {
			return Result{Status: nfsStatus(st)}, err
		}
		if d.err != nil {
			return Result{}, d.err
		}
		if op.Kind != Utimes {
			return Result{Status: "OK"}, nil
		}
		// The times set are the only ones two servers can agree on.
		a, err := t.getattr(c, fh)
		if err != nil {
			return Result{}, err
		}
		return Result{Status: "OK", Detail: fmt.Sprintf("atime=%d.%09d mtime=%d.%09d", a.atime[0], a.atime[1], a.mtime[0], a.mtime[1])}, nil
	case Readdir:
		names, st, err := t.readdir(c, fh, op.Count)
		if err != nil || st != 0 {
			return Result{Status: nfsStatus(st)}, err
		}
		return Result{Status: "OK", Detail: sortedNames(names)}, nil
	case Stat:
		a, err := t.getattr(c, fh)
		if err != nil {
			return Result{}, err
		}
		n := nodeOf(a)
		return Result{Status: "OK", Detail: n.String()}, nil
	case Readlink:
		st, d, err := c.nfs3(pReadlink, (&xenc{}).opaque(fh))
		if err != nil || st != 0 {
			return Result{Status: nfsStatus(st)}, err
		}
		d.postOp()
		target := d.opaque()
		return Result{Status: "OK", Detail: fmt.Sprintf("%q", target)}, d.err
	}
	return Result{}, fmt.Errorf("nfs: no step %q", op.Kind)
}

// readdir lists dir in rounds of count bytes (READDIR), following cookies
// and the cookie verifier, and returns every name but "." and "..". A
// listing that does not end in 10,000 rounds is an error.
func (t *NFSTarget) readdir(c *NFSClient, dir []byte, count uint32) ([]string, uint32, error) {
	var names []string
	var cookie uint64
	var verf []byte = make([]byte, 8)
	for range 10000 {
		e := (&xenc{}).opaque(dir).u64(cookie)
		e.b = append(e.b, verf...)
		e.u32(count)
		st, d, err := c.nfs3(pReaddir, e)
		if err != nil || st != 0 {
			return nil, st, err
		}
		d.postOp()
		d.skip(0)
		v := make([]byte, 8)
		if d.off+8 <= len(d.b) {
			copy(v, d.b[d.off:])
		}
		d.skip(8)
		verf = v
		entries := 0
		for d.u32() == 1 {
			entries++
			d.u64() // fileid
			n := string(d.opaque())
			cookie = d.u64()
			if n != "." && n != ".." {
				names = append(names, n)
			}
		}
		eof := d.u32()
		if d.err != nil {
			return nil, 0, d.err
		}
		if eof == 1 {
			return names, 0, nil
		}
		if entries == 0 {
			// No entry and no end: the next entry does not fit in count.
			// ganesha answers so (a client asking again loops forever);
			// nfsd and semfs answer NFS3ERR_TOOSMALL. Read as the latter.
			return nil, 10005, nil
		}
	}
	return nil, 0, fmt.Errorf("nfs: readdir did not end in 10000 rounds")
}

func nodeOf(a fattr3) Node {
	types := map[uint32]string{1: "file", 2: "dir", 5: "symlink"}
	typ, ok := types[a.typ]
	if !ok {
		typ = fmt.Sprintf("type%d", a.typ)
	}
	return Node{Type: typ, Mode: a.mode & 0o7777, Size: a.size, Nlink: a.nlink, UID: a.uid, GID: a.gid}
}

func (t *NFSTarget) Snapshot() (Tree, error) {
	c := t.root
	tree := Tree{}
	a, err := t.getattr(c, t.base)
	if err != nil {
		return nil, err
	}
	tree[""] = nodeOf(a)
	return tree, t.walk(c, t.base, "", tree)
}

func (t *NFSTarget) walk(c *NFSClient, dir []byte, at string, tree Tree) error {
	names, st, err := t.readdir(c, dir, 8192)
	if err != nil {
		return err
	}
	if st != 0 {
		return fmt.Errorf("nfs: readdir %q: %s", at, nfsStatus(st))
	}
	for _, n := range names {
		p := path.Join(at, n)
		fh, a, err := t.lookup(c, dir, n)
		if err != nil {
			return fmt.Errorf("nfs: listed %q: lookup: %w", p, err)
		}
		node := nodeOf(a)
		switch node.Type {
		case "file":
			data, err := t.readAll(c, fh)
			if err != nil {
				return fmt.Errorf("nfs: read %q: %w", p, err)
			}
			node.Data = digest(data)
		case "symlink":
			st, d, err := c.nfs3(pReadlink, (&xenc{}).opaque(fh))
			if err != nil {
				return err
			}
			if st == 0 {
				d.postOp()
				node.Data = fmt.Sprintf("-> %q", d.opaque())
			} else {
				node.Data = "readlink " + nfsStatus(st)
			}
		case "dir":
			if err := t.walk(c, fh, p, tree); err != nil {
				return err
			}
		}
		tree[p] = node
	}
	return nil
}

func (t *NFSTarget) readAll(c *NFSClient, fh []byte) ([]byte, error) {
	var out []byte
	for len(out) < 16<<20 {
		st, d, err := c.nfs3(pRead, (&xenc{}).opaque(fh).u64(uint64(len(out))).u32(65536))
		if err != nil {
			return nil, err
		}
		if st != 0 {
			return nil, fmt.Errorf("%s", nfsStatus(st))
		}
		d.postOp()
		d.u32()
		eof := d.u32()
		data := d.opaque()
		if d.err != nil {
			return nil, d.err
		}
		out = append(out, data...)
		if eof == 1 || len(data) == 0 {
			return out, nil
		}
	}
	return out, nil
}
