package server

import (
	"context"
	"io/fs"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// emit hands a change to the sink. Precondition: f.ns held, the change is on disk.
func (f *FS) emit(ctx context.Context, c Change) {
	if f.sink == nil {
		return
	}
	if c.Time.IsZero() {
		c.Time = time.Now()
	}
	if err := f.sink.Apply(ctx, c); err != nil {
		f.log.Error("index update failed; the next start's reconcile repairs it",
			"op", c.Op.String(), "path", c.Path, "newPath", c.NewPath, "err", err)
	}
}

// mutate runs a namespace change under the snapshot gate and the namespace lock.
func (f *FS) mutate(fn func() error) error {
	f.gate.RLock()
	defer f.gate.RUnlock()
	f.ns.Lock()
	defer f.ns.Unlock()
	return fn()
}

// own gives a newly created file its owner, as a local filesystem would: a file
// an app writes as uid 1000 through NFS or 9P is owned by uid 1000 on disk. Only
// a daemon running as root can do that; otherwise new files stay the daemon's,
// which is all an unprivileged server can offer. A caller the core acts as
// (cred.go) got the kernel's owner and group already (its fsuid, its fsgid or a
// setgid directory's group); a group the create asked for (CreateGID) is then
// given with the caller's own rights, so only one the caller may choose. A
// root caller gets its uid and the group asked for, else its gid, unless a
// setgid directory gave the file its own group (kept, as the kernel does for
// root on a local file system). name "" means
// fd itself. Best effort: the file exists either way.
// Precondition: running inside f.as for ctx.
func (f *FS) own(ctx context.Context, fd int, name string, flags int) {
	id := IdentityFrom(ctx)
	checked := f.ChecksPermissions(ctx)
	if !f.root || (!id.HasUID && !checked) {
		return
	}
	if name == "" {
		flags |= unix.AT_EMPTY_PATH
	}
	uid, gid := rootOwner(id)
	if !checked && !id.HasCreateGID {
		// A setgid directory gave the file its group, as it would to a
		// root caller of a local file system: keep it.
		var st unix.Stat_t
		if err := unix.Fstatat(fd, name, &st, flags); err == nil && st.Gid != f.egid {
			gid = -1
		}
	}
	if checked {
		if !id.HasCreateGID {
			return // the kernel chose as it would for the caller
		}
		// chown(2) by anyone but root clears setuid and setgid bits, even to
		// the group a file already has: only where the group differs.
		var st unix.Stat_t
		if err := unix.Fstatat(fd, name, &st, flags); err != nil || st.Gid == id.CreateGID {
			return
		}
		// With the caller's rights, plus the group where the door vouches
		// for it (vouch.go).
		f.asMemberOf(ctx, id.CreateGID, func() error {
			f.chown(fd, name, -1, int(id.CreateGID), flags)
			return nil
		})
		return
	}
	f.chown(fd, name, uid, gid, flags)
}

// rootOwner is the owner and group (-1: the kernel's choice) a create made
// with the daemon's rights gives caller id's new file: its uid, and the group
// it asked for, else its gid.
func rootOwner(id Identity) (uid, gid int) {
	uid, gid = int(id.UID), -1
	switch {
	case id.HasCreateGID:
		gid = int(id.CreateGID)
	case id.HasGID:
		gid = int(id.GID)
	}
	return uid, gid
}

// chown gives a new file to its creator, best effort (the file exists either
// way), and reports whether it did.
func (f *FS) chown(fd int, name string, uid, gid, flags int) bool {
	if err := unix.Fchownat(fd, name, uid, gid, flags); err != nil {
		f.log.Debug("could not give a new file to its creator", "uid", uid, "gid", gid, "err", err)
		return false
	}
	return true
}

// ownUnchecked is own for a caller the core does not act as (the daemon's own
// rights: a root caller, or no identity), once the new file's attributes a are
// known: the chown is made only when the owner or group differ from what the
// kernel gave, which for a root client creating as root they never do (one
// system call fewer in every such NFS CREATE). Reports whether it changed the
// file.
func (f *FS) ownUnchecked(ctx context.Context, fd int, a Attr) bool {
	id := IdentityFrom(ctx)
	if !f.root || !id.HasUID {
		return false
	}
	uid, gid := rootOwner(id)
	if !id.HasCreateGID && a.GID != f.egid {
		gid = -1 // a setgid directory's group, kept as in own
	}
	if uint32(uid) == a.UID && (gid == -1 || uint32(gid) == a.GID) {
		return false
	}
	return f.chown(fd, "", uid, gid, unix.AT_EMPTY_PATH)
}

// Create opens regular file p for reading and writing, creating it with mode perm
// if it does not exist. With exclusive, an existing p is KindExists. A newly
// created file is reported as ChangeCreate with the acting app, which becomes its
// created_by; opening an existing file never changes who created it. A symlink at p
// is never followed (KindExists when exclusive, KindInvalid otherwise).
func (f *FS) Create(ctx context.Context, p string, perm fs.FileMode, exclusive bool) (file *File, created bool, err error) {
	if f.virtual(p) {
		// Outside mutate: the virtual tree's answers wait for the index to
		// catch up, and that may need the watcher to hand a batch over,
		// which takes f.ns.
		return f.createVirtual(ctx, p, exclusive)
	}
	err = f.mutate(func() error {
		file, created, err = f.create(ctx, p, perm, exclusive)
		return err
	})
	return file, created, err
}

// TryCreate is Create for a caller that must not wait for anything but the
// system calls themselves (a protocol front end answering in its connection's
// only reader): ok=false, nothing done, while a snapshot holds the FS, another
// namespace change is under way, or the sink has no room for the ChangeCreate.
// The caller then calls Create where waiting is harmless.
func (f *FS) TryCreate(ctx context.Context, p string, perm fs.FileMode, exclusive bool) (file *File, created, ok bool, err error) {
	if f.virtual(p) {
		return nil, false, false, nil // its answer may wait (Create)
	}
	if !f.gate.TryRLock() {
		return nil, false, false, nil
	}
	defer f.gate.RUnlock()
	if !f.ns.TryLock() {
		return nil, false, false, nil
	}
	defer f.ns.Unlock()
	if !f.sinkReady() {
		return nil, false, false, nil
	}
	file, created, err = f.create(ctx, p, perm, exclusive)
	return file, created, true, err
}

// sinkReady reports whether an Apply made now would not wait (ReadySink). Every
// Apply is made under f.ns, so the answer holds while the caller holds it.
func (f *FS) sinkReady() bool {
	if r, ok := f.sink.(ReadySink); ok {
		return r.Ready()
	}
	return true
}

// undo removes p, just made, whose durable record could not be written: a
// create is either acknowledged with its creator saved or not made at all. It
// runs as the daemon (the caller made the name and may lack rights to remove it
// in odd modes).
func (f *FS) undo(p string) {
	d, name, err := f.parent("create", p)
	if err != nil {
		return
	}
	defer d.close()
	unix.Unlinkat(d.fd, name, 0)
}

// recordNew makes the creator of p, a new symlink, FIFO or socket node the caller just made,
// durable (in the journal: neither can carry the xattr) and tells the index; a
// name whose record cannot be written is removed again.
func (f *FS) recordNew(ctx context.Context, p string, a Attr) error {
	app, at := f.App(ctx), time.Now()
	if err := f.saveNew(-1, p, a, app, at); err != nil {
		f.undo(p)
		return err
	}
	typ := TypeFIFO
	if a.IsSymlink() {
		typ = TypeSymlink
	}
	f.emit(ctx, Change{Op: ChangeCreate, Path: p, App: app, Ino: a.FileID(), Time: at, Type: typ, Size: a.Size, Mode: UnixPerm(a.Mode)})
	return nil
}

// createVirtual is Create of p in the virtual tree: an existing tags file may
// be "created" unchecked, as open(O_CREAT) of an existing file is (NFS CREATE
// UNCHECKED); nothing new is made. Never under f.ns (Create).
func (f *FS) createVirtual(ctx context.Context, p string, exclusive bool) (file *File, created bool, err error) {
	if a, err := f.virt.Lstat(ctx, p); err == nil && !exclusive && a.Mode.IsRegular() {
		file, err = f.openVirtual(ctx, p, true, false)
		return file, false, err
	}
	return nil, false, f.refuseVirtualName(ctx, "create", p)
}

// create is Create's work for a path outside the virtual tree. Precondition:
// f.gate held shared and f.ns held.
func (f *FS) create(ctx context.Context, p string, perm fs.FileMode, exclusive bool) (file *File, created bool, err error) {
	if err := CheckNewPath("create", p); err != nil {
		return nil, false, err
	}
	if err := f.viewCreate(ctx, "create", p); err != nil {
		return nil, false, err
	}
	var a Attr
	newFd := -1 // the descriptor of a file this call made
	checked := f.ChecksPermissions(ctx)
	err = f.as(ctx, "create", p, func() error {
		d, name, err := f.parent("create", p)
		if err != nil {
			return err
		}
		defer d.close()
		flags := unix.O_RDWR | unix.O_CREAT | unix.O_EXCL | unix.O_NOFOLLOW | unix.O_CLOEXEC
		fd, err := unix.Openat(d.fd, name, flags, UnixPerm(perm))
		if err == unix.EEXIST && !exclusive {
			fd, err = unix.Openat(d.fd, name, unix.O_RDWR|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
			if err != nil {
				return wrap("create", p, err)
			}
			file = f.newFile(os.NewFile(uintptr(fd), p), p, true)
			file.setApp(f.App(ctx))
			if checked {
				// A write through it clears setuid (killprivs.go); the
				// credential switch costs more than this fstat.
				var st unix.Stat_t
				if unix.Fstat(fd, &st) == nil && hasPrivs(modeOf(st.Mode)) {
					file.privs = true
					file.killPrivs.Store(true)
				}
			}
			return nil
		}
		if err != nil {
			return wrap("create", p, err)
		}
		if f.umasked(UnixPerm(perm)) {
			// The kernel decides the special bits as open(2) did (umask.go).
			if err := unix.Fchmod(fd, UnixPerm(perm)); err != nil {
				unix.Close(fd)
				unix.Unlinkat(d.fd, name, 0)
				return wrap("create", p, err)
			}
		}
		// Still under ns: a Watcher's batch, taken under ns too, finds the
		// file in its record whenever it has the IN_CREATE the openat made.
		if oc := f.ownChanges.Load(); oc != nil {
			oc.add(p)
		}
		if checked {
			f.own(ctx, fd, "", 0) // with the caller's rights: here
		}
		newFd, created = fd, true
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	if created {
		app, at := f.App(ctx), time.Now()
		// created_by is durable (with the file, or in the journal) before the
		// create is acknowledged: the index hears of it later, in a batch. The
		// record is written as the daemon, through the new file's descriptor.
		a, err = f.saveNewFd(newFd, p, app, at)
		if err != nil {
			unix.Close(newFd)
			f.undo(p)
			return nil, false, err
		}
		if !checked && f.ownUnchecked(ctx, newFd, a) {
			if b, err := statx(newFd, "", "create", p); err == nil {
				a = b // the chown changed the ctime
			}
		}
		if oc := f.ownChanges.Load(); oc != nil {
			oc.created(p, UnixPerm(a.Mode), a.Ctime)
		}
		file = f.newFile(os.NewFile(uintptr(newFd), p), p, true)
		file.setApp(app)
		made := a
		file.made = &made
		f.emit(ctx, Change{Op: ChangeCreate, Path: p, App: app, Ino: a.FileID(), Time: at, Type: TypeFile, Size: a.Size, Mode: UnixPerm(a.Mode)})
	}
	return file, created, nil
}

// Open opens an existing regular file p. flags take O_RDONLY, O_WRONLY or O_RDWR,
// plus O_APPEND and O_TRUNC; creation flags are refused (use Create). p's last
// component is never followed: opening a symlink is KindLoop, as open(2) with
// O_NOFOLLOW says it.
func (f *FS) Open(ctx context.Context, p string, flags int) (*File, error) {
	if flags&(os.O_CREATE|os.O_EXCL) != 0 {
		return nil, E("open", KindInvalid, p, constError("open does not create; use create"))
	}
	acc := flags & (os.O_RDONLY | os.O_WRONLY | os.O_RDWR)
	write := acc != os.O_RDONLY
	trunc := flags&os.O_TRUNC != 0 && write
	if f.virtual(p) {
		return f.openVirtual(ctx, p, write, trunc)
	}
	if err := f.viewOpen(ctx, p, write); err != nil {
		return nil, err
	}
	if trunc {
		// Truncation changes the backing directory: not while a snapshot runs.
		f.gate.RLock()
		defer f.gate.RUnlock()
	}
	var file *File
	err := f.as(ctx, "open", p, func() (err error) {
		file, err = f.openFile(p, flags, acc, write)
		return err
	})
	if err != nil {
		return nil, err
	}
	if write {
		file.setApp(f.App(ctx))
	}
	if write && file.privs && f.ChecksPermissions(ctx) {
		file.killPrivs.Store(true)
	}
	if trunc {
		f.touches.addTrunc(p, file.appName())
	}
	return file, nil
}

// openFile is Open's work, with the caller's credentials set (and f.gate held
// shared for O_TRUNC).
func (f *FS) openFile(p string, flags, acc int, write bool) (*File, error) {
	d, name, err := f.parent("open", p)
	if err != nil {
		return nil, err
	}
	defer d.close()
	sysFlags := acc | flags&(os.O_APPEND|os.O_TRUNC) | unix.O_NOFOLLOW | unix.O_CLOEXEC | unix.O_NONBLOCK
	fd, err := unix.Openat(d.fd, name, sysFlags, 0)
	if err != nil {
		return nil, wrap("open", p, err)
	}
	a, err := statx(fd, "", "open", p)
	if err != nil {
		unix.Close(fd)
		return nil, err
	}
	switch {
	case a.Mode.IsRegular():
	case a.IsDir():
		unix.Close(fd)
		return nil, E("open", KindIsDir, p, nil)
	default:
		unix.Close(fd)
		return nil, E("open", KindInvalid, p, constError("not a regular file"))
	}
	fl := f.newFile(os.NewFile(uintptr(fd), p), p, write)
	fl.appends = flags&os.O_APPEND != 0
	fl.privs = hasPrivs(a.Mode)
	return fl, nil
}

// Mkdir creates directory p. Directories have no index record of their own.
func (f *FS) Mkdir(ctx context.Context, p string, perm fs.FileMode) (a Attr, err error) {
	if f.virtual(p) {
		return Attr{}, f.refuseVirtualName(ctx, "mkdir", p)
	}
	if err := CheckNewPath("mkdir", p); err != nil {
		return Attr{}, err
	}
	if err := f.viewCreate(ctx, "mkdir", p); err != nil {
		return Attr{}, err
	}
	err = f.mutate(func() error {
		err := f.as(ctx, "mkdir", p, func() error {
			d, name, err := f.parent("mkdir", p)
			if err != nil {
				return err
			}
			defer d.close()
			if err := unix.Mkdirat(d.fd, name, UnixPerm(perm)); err != nil {
				return wrap("mkdir", p, err)
			}
			f.own(ctx, d.fd, name, unix.AT_SYMLINK_NOFOLLOW)
			// Under ns, as a create's record: the Watcher tells the core's
			// new directories from a host's by it (ownChanges.takeDir).
			if oc := f.ownChanges.Load(); oc != nil {
				oc.addDir(p)
			}
			a, err = fstatat(d, name, "mkdir", p)
			if err == nil && f.umasked(UnixPerm(perm)) {
				a, err = f.restorePerm(d, name, "mkdir", p, UnixPerm(perm), a)
			}
			return err
		})
		if err == nil {
			f.emit(ctx, Change{Op: ChangeMkdir, Path: p, App: f.App(ctx), IsDir: true, Type: TypeDir, Size: a.Size, Ino: a.FileID(), Mode: UnixPerm(a.Mode)})
		}
		return err
	})
	return a, err
}

// Symlink creates symlink p holding target verbatim. The target is never
// resolved by the server; clients resolve it themselves, and os.Root refuses to
// follow it out of the backing directory.
func (f *FS) Symlink(ctx context.Context, target, p string) (a Attr, err error) {
	if f.virtual(p) {
		return Attr{}, f.refuseVirtualName(ctx, "symlink", p)
	}
	if err := CheckSymlinkTarget(p, target); err != nil {
		return Attr{}, err
	}
	if err := CheckNewPath("symlink", p); err != nil {
		return Attr{}, err
	}
	if err := f.viewCreate(ctx, "symlink", p); err != nil {
		return Attr{}, err
	}
	err = f.mutate(func() error {
		err := f.as(ctx, "symlink", p, func() error {
			d, name, err := f.parent("symlink", p)
			if err != nil {
				return err
			}
			defer d.close()
			if err := unix.Symlinkat(target, d.fd, name); err != nil {
				return wrap("symlink", p, err)
			}
			f.own(ctx, d.fd, name, unix.AT_SYMLINK_NOFOLLOW)
			a, err = fstatat(d, name, "symlink", p)
			return err
		})
		if err != nil {
			return err
		}
		return f.recordNew(ctx, p, a)
	})
	return a, err
}

// Mkfifo creates a named pipe p: Mknod with fs.ModeNamedPipe.
func (f *FS) Mkfifo(ctx context.Context, p string, perm fs.FileMode) (Attr, error) {
	return f.Mknod(ctx, p, fs.ModeNamedPipe|perm)
}

// Mknod creates special file p of mode's type: a named pipe
// (fs.ModeNamedPipe) or a Unix socket node (fs.ModeSocket, what bind(2)
// leaves behind; it is an inode only, no socket is listening on it). Both are
// harmless inodes, made with the caller's rights like any other file. Device
// nodes are refused with KindNotPermitted (EPERM, as mknod(2) answers a
// caller without CAP_MKNOD), whoever asks: they would hand a client the
// host's devices through the export, and a shared directory is never a place
// for them. Any other type is KindInvalid. mode's permission bits, setuid,
// setgid and sticky included, are the new node's, less the kernel's rules (a
// caller's umask is applied by its client).
func (f *FS) Mknod(ctx context.Context, p string, mode fs.FileMode) (a Attr, err error) {
	if f.virtual(p) {
		return Attr{}, f.refuseVirtualName(ctx, "mknod", p)
	}
	var typ uint32
	switch mode.Type() {
	case fs.ModeNamedPipe:
		typ = unix.S_IFIFO
	case fs.ModeSocket:
		typ = unix.S_IFSOCK
	case fs.ModeDevice, fs.ModeDevice | fs.ModeCharDevice:
		return Attr{}, E("mknod", KindNotPermitted, p, errDevice)
	default:
		return Attr{}, E("mknod", KindInvalid, p, constError("mknod makes named pipes and socket nodes only"))
	}
	if err := CheckNewPath("mknod", p); err != nil {
		return Attr{}, err
	}
	if err := f.viewCreate(ctx, "mknod", p); err != nil {
		return Attr{}, err
	}
	err = f.mutate(func() error {
		err := f.as(ctx, "mknod", p, func() error {
			d, name, err := f.parent("mknod", p)
			if err != nil {
				return err
			}
			defer d.close()
			if err := unix.Mknodat(d.fd, name, typ|UnixPerm(mode), 0); err != nil {
				return wrap("mknod", p, err)
			}
			f.own(ctx, d.fd, name, unix.AT_SYMLINK_NOFOLLOW)
			a, err = fstatat(d, name, "mknod", p)
			if err == nil && f.umasked(UnixPerm(mode)) {
				a, err = f.restorePerm(d, name, "mknod", p, UnixPerm(mode), a)
			}
			return err
		})
		if err != nil {
			return err
		}
		return f.recordNew(ctx, p, a)
	})
	return a, err
}

// errDevice says why a device node is refused (see Mknod).
const errDevice = constError("device nodes are not made in a shared directory: they would reach the host's devices")

// Link creates newPath as a hard link to the file at oldPath (a symlink is linked
// itself, not its target). Directories cannot be linked. The new name gets its own
// index record; a hard link shares its file's durable record, so the record's
// creator is the file's (the acting app only when the file has none).
func (f *FS) Link(ctx context.Context, oldPath, newPath string) (a Attr, err error) {
	if f.virtual(newPath) {
		return Attr{}, f.refuseVirtualName(ctx, "link", newPath)
	}
	if f.virtual(oldPath) {
		return Attr{}, refuseVirtual("link", newPath)
	}
	if err := CheckNewPath("link", newPath); err != nil {
		return Attr{}, err
	}
	if err := f.viewTwo(ctx, "link", oldPath, newPath); err != nil {
		return Attr{}, err
	}
	err = f.mutate(func() error {
		err := f.as(ctx, "link", newPath, func() error {
			od, oname, err := f.parent("link", oldPath)
			if err != nil {
				return err
			}
			defer od.close()
			nd, nname, err := f.parent("link", newPath)
			if err != nil {
				return err
			}
			defer nd.close()
			if err := unix.Linkat(od.fd, oname, nd.fd, nname, 0); err != nil {
				if err == unix.EPERM {
					if st, e := fstatat(od, oname, "link", oldPath); e == nil && st.IsDir() {
						return E("link", KindIsDir, oldPath, nil)
					}
				}
				return wrap("link", newPath, err)
			}
			a, err = fstatat(nd, nname, "link", newPath)
			return err
		})
		if err != nil {
			return err
		}
		at := time.Now()
		app, err := f.linkCreator(newPath, a, f.App(ctx), at)
		if err != nil {
			f.undo(newPath)
			return err
		}
		f.emit(ctx, Change{Op: ChangeCreate, Path: newPath, App: app, Ino: a.FileID(), Time: at, Type: typeOf(a), Link: true, Size: a.Size, Mode: UnixPerm(a.Mode)})
		return nil
	})
	return a, err
}

// Remove removes p: a non-directory when dir is false (a directory is KindIsDir),
// an empty directory when dir is true (a non-directory is KindNotDir). A symlink is
// removed itself, never its target.
func (f *FS) Remove(ctx context.Context, p string, dir bool) error {
	if f.virtual(p) {
		return refuseVirtual("remove", p)
	}
	if err := f.viewWrite(ctx, "remove", p); err != nil {
		return err
	}
	return f.mutate(func() error {
		err := f.as(ctx, "remove", p, func() error {
			d, name, err := f.parent("remove", p)
			if err != nil {
				return err
			}
			defer d.close()
			flags := 0
			if dir {
				flags = unix.AT_REMOVEDIR
			}
			if err := unix.Unlinkat(d.fd, name, flags); err != nil {
				if !dir && (err == unix.EISDIR || err == unix.EPERM) {
					if st, e := fstatat(d, name, "remove", p); e == nil && st.IsDir() {
						return E("remove", KindIsDir, p, nil)
					}
				}
				if err == unix.EEXIST {
					err = unix.ENOTEMPTY
				}
				return wrap("remove", p, err)
			}
			if dir {
				f.res.dirs.drop(p) // a kept descriptor would hold the removed directory
			}
			return nil
		})
		if err != nil {
			return err
		}
		f.touches.drop(p)
		// A non-directory's type is not looked up: a stat before every
		// unlink only for the feed's sake (it says "" for unknown).
		typ := ""
		if dir {
			typ = TypeDir
		}
		f.emit(ctx, Change{Op: ChangeRemove, Path: p, App: f.App(ctx), IsDir: dir, Type: typ})
		return nil
	})
}

// Rename moves oldPath to newPath, replacing a file (or an empty directory) there,
// like rename(2). Neither last component is followed. Tags and created_by follow
// the file; for a directory, everything below it.
func (f *FS) Rename(ctx context.Context, oldPath, newPath string) error {
	if f.virtual(oldPath) {
		return refuseVirtual("rename", oldPath)
	}
	if f.virtual(newPath) {
		return refuseVirtual("rename", newPath)
	}
	if err := f.viewTwo(ctx, "rename", oldPath, newPath); err != nil {
		return err
	}
	if oldPath == newPath {
		_, err := f.Lstat(ctx, oldPath)
		return err
	}
	if newPath == "" || oldPath == "" {
		return E("rename", KindInvalid, oldPath, constError("the root cannot be renamed or replaced"))
	}
	if err := CheckNewPath("rename", newPath); err != nil {
		return err
	}
	return f.mutate(func() error {
		var st Attr
		moved := false
		err := f.as(ctx, "rename", oldPath, func() error {
			od, oname, err := f.parent("rename", oldPath)
			if err != nil {
				return err
			}
			defer od.close()
			nd, nname, err := f.parent("rename", newPath)
			if err != nil {
				return err
			}
			defer nd.close()
			st, err = fstatat(od, oname, "rename", oldPath)
			if err != nil {
				return err
			}
			// rename(2) between two hard links of one file does nothing and leaves
			// both names; the index must not move anything either.
			if dst, err := fstatat(nd, nname, "rename", newPath); err == nil && dst.Ino == st.Ino && dst.Dev == st.Dev {
				return nil
			}
			if err := unix.Renameat(od.fd, oname, nd.fd, nname); err != nil {
				if err == unix.EEXIST {
					err = unix.ENOTEMPTY
				}
				return wrap("rename", oldPath, err)
			}
			moved = true
			return nil
		})
		if err != nil || !moved {
			return err
		}
		// A directory renamed, or one renamed over: neither name holds the
		// kept descriptor's directory now (dirFDs.drop).
		f.res.dirs.drop(oldPath)
		f.res.dirs.drop(newPath)
		f.touches.rename(oldPath, newPath)
		f.renameOpen(oldPath, newPath)
		f.emit(ctx, Change{Op: ChangeRename, Path: oldPath, NewPath: newPath, App: f.App(ctx), IsDir: st.IsDir(), Type: typeOf(st), Size: st.Size})
		return nil
	})
}

// SetAttr changes p's attributes and returns the new ones. Mode on a symlink is
// KindNotSupported (Linux has no lchmod); times and owners act on the link itself;
// Size on anything but a regular file is KindInvalid (KindIsDir for a directory).
func (f *FS) SetAttr(ctx context.Context, p string, s SetAttr) (a Attr, err error) {
	if f.virtual(p) {
		return f.setAttrVirtual(ctx, p, s)
	}
	if err := f.viewWrite(ctx, "setattr", p); err != nil {
		return Attr{}, err
	}
	f.gate.RLock()
	defer f.gate.RUnlock()
	// A touch: times only. The Watcher follows the IN_ATTRIB it makes and
	// finds nothing to report: the index took the touch first, with the size
	// and mtime it left (Change.Mtime), and the file is as the touch left it.
	touch := s.Mode == nil && s.Size == nil && !s.OfCreate && (s.Atime != nil || s.Mtime != nil || s.AtimeNow || s.MtimeNow)
	err = f.as(ctx, "setattr", p, func() (err error) {
		a, err = f.setAttr(ctx, p, s)
		return err
	})
	switch {
	case err != nil:
	case s.Mode != nil:
		// Reported under the namespace lock, as every change is, so that it
		// is ordered with renames and removes of the same path.
		f.ns.Lock()
		f.emit(ctx, Change{Op: ChangeSetMode, Path: p, App: f.App(ctx), IsDir: a.IsDir(), Type: typeOf(a), Size: a.Size, Mode: UnixPerm(a.Mode)})
		f.ns.Unlock()
	case touch && (a.Mode.IsRegular() || a.IsSymlink()):
		// A touch (times only; with a size or a mode, the truncate or the
		// setattr says it). At is no earlier than the mtime set: the index
		// takes it as a write's time (updatedAt), and compares a host's
		// next change with the size and mtime the touch left.
		at := time.Now()
		if a.Mtime.After(at) {
			at = a.Mtime
		}
		f.ns.Lock()
		f.emit(ctx, Change{Op: ChangeSetTimes, Path: p, App: f.App(ctx), Time: at, Type: typeOf(a), Size: a.Size, Mtime: a.Mtime, Mode: UnixPerm(a.Mode)})
		f.ns.Unlock()
	}
	return a, err
}

// typeOf is a's Change.Type.
func typeOf(a Attr) string {
	switch {
	case a.IsDir():
		return TypeDir
	case a.IsSymlink():
		return TypeSymlink
	case a.Mode.IsRegular():
		return TypeFile
	}
	return TypeFIFO
}

// setAttr is SetAttr's work, with the caller's credentials set.
// Precondition: f.gate held shared.
func (f *FS) setAttr(ctx context.Context, p string, s SetAttr) (Attr, error) {
	var d dirRef
	var name string
	if p == "" {
		if err := f.gone("setattr", p); err != nil {
			return Attr{}, err
		}
		d, name = dirRef{fd: f.res.rootFd}, "."
	} else {
		var err error
		d, name, err = f.parent("setattr", p)
		if err != nil {
			return Attr{}, err
		}
	}
	defer d.close()
	dfd := d.fd
	// An O_PATH descriptor pins the very inode named now; chmod and truncate then
	// act through it, so a concurrent swap to a symlink cannot redirect them.
	pfd, err := unix.Openat(dfd, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return Attr{}, wrap("setattr", p, err)
	}
	defer unix.Close(pfd)
	cur, err := statx(pfd, "", "setattr", p)
	if err != nil {
		return Attr{}, err
	}
	if s.Size != nil {
		switch {
		case cur.IsDir():
			return Attr{}, E("setattr", KindIsDir, p, nil)
		case !cur.Mode.IsRegular():
			return Attr{}, E("setattr", KindInvalid, p, constError("size applies to regular files only"))
		case *s.Size < 0:
			return Attr{}, E("setattr", KindInvalid, p, constError("negative size"))
		}
		// Open the name again without following it and check it is still the
		// inode pinned above: no /proc needed, and no swap can redirect it.
		wfd, err := unix.Openat(dfd, name, unix.O_WRONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
		if err != nil {
			return Attr{}, wrap("setattr", p, err)
		}
		if now, err := statx(wfd, "", "setattr", p); err != nil || now.Ino != cur.Ino || now.Dev != cur.Dev {
			unix.Close(wfd)
			return Attr{}, E("setattr", KindStale, p, constError("the file changed while its size was being set"))
		}
		err = unix.Ftruncate(wfd, *s.Size)
		unix.Close(wfd)
		if err != nil {
			return Attr{}, wrap("setattr", p, err)
		}
		f.touches.addTrunc(p, f.App(ctx))
	}
	if s.UID != nil || s.GID != nil {
		uid, gid := -1, -1
		if s.UID != nil {
			uid = int(*s.UID)
		}
		chown := func() error { return unix.Fchownat(pfd, "", uid, gid, unix.AT_EMPTY_PATH) }
		var err error
		if s.GID != nil {
			gid = int(*s.GID)
			err = f.asMemberOf(ctx, *s.GID, chown) // a group the door vouches for (vouch.go)
		} else {
			err = chown()
		}
		if err != nil {
			return Attr{}, wrap("setattr", p, err)
		}
	}
	if s.Mode != nil {
		if cur.IsSymlink() {
			return Attr{}, E("setattr", KindNotSupported, p, constError("symlinks have no mode of their own"))
		}
		// chmod through the pinned descriptor's /proc link. Without /proc (some
		// sandboxes) it goes by name from the parent: the last component was just
		// seen not to be a symlink, and a swap to one between that check and the
		// call is the one race left, as with os.Root.Chmod.
		err := unix.Chmod("/proc/self/fd/"+itoa(pfd), UnixPerm(*s.Mode))
		if err == unix.ENOENT {
			err = unix.Fchmodat(dfd, name, UnixPerm(*s.Mode), 0)
		}
		if err != nil {
			return Attr{}, wrap("setattr", p, err)
		}
	}
	if s.Atime != nil || s.Mtime != nil || s.AtimeNow || s.MtimeNow {
		ts := []unix.Timespec{{Nsec: unix.UTIME_OMIT}, {Nsec: unix.UTIME_OMIT}}
		setTS := func(i int, t *time.Time, now bool) {
			switch {
			case now:
				ts[i] = unix.Timespec{Nsec: unix.UTIME_NOW}
			case t != nil:
				// Seconds and nanoseconds apart: UnixNano overflows past 2262.
				ts[i] = unix.Timespec{Sec: t.Unix(), Nsec: int64(t.Nanosecond())}
			}
		}
		setTS(0, s.Atime, s.AtimeNow)
		setTS(1, s.Mtime, s.MtimeNow)
		if err := unix.UtimesNanoAt(dfd, name, ts, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return Attr{}, wrap("setattr", p, err)
		}
	}
	return statx(pfd, "", "setattr", p)
}

func fstatat(d dirRef, name, op, p string) (Attr, error) {
	return statx(d.fd, name, op, p)
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b[i:])
}
