package server

import (
	"os"
	"strings"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// dirRef is a directory resolved beneath the backing directory. Operations on a
// path's last component are *at system calls relative to it, so the component is
// never followed. close releases it unless it is the root's own descriptor.
type dirRef struct {
	fd   int
	own  bool
	raw  bool   // opened, and so closed, by raw system calls (FS.LstatInline)
	kept *dirFD // a descriptor dirFDs keeps: released, not closed
}

func (d dirRef) close() {
	switch {
	case d.kept != nil:
		d.kept.release(d.raw)
	case d.own:
		closeFD(d.fd, d.raw)
	}
}

// resolver opens directories beneath the root. On Linux 5.6+ it uses openat2
// with RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS: the kernel refuses any step out of
// the backing directory and any symlink on the way, in one system call. Paths
// that the front ends build never cross a symlink (NFS LOOKUP and 9P walk stop
// at one), so refusing them costs nothing and keeps "the server never follows a
// client's symlink" true for every component, not just the last. Where openat2 is
// missing it falls back to os.Root, which gives the same containment with one
// openat per component.
type resolver struct {
	root    *os.Root
	rootDir *os.File // keeps rootFd open
	rootFd  int
	noAt2   atomic.Bool
	dirs    dirFDs // O_PATH descriptors of the directories one level down
}

func newResolver(root *os.Root) (*resolver, error) {
	d, err := root.Open(".")
	if err != nil {
		return nil, err
	}
	return &resolver{root: root, rootDir: d, rootFd: int(d.Fd())}, nil
}

func (r *resolver) close() error {
	r.dirs.closeAll()
	r.rootDir.Close()
	return r.root.Close()
}

// openDir opens directory p (a core path; "" is the root). readable asks for a
// descriptor that can list entries; otherwise an O_PATH descriptor is enough.
func (r *resolver) openDir(op, p string, readable bool) (dirRef, error) {
	return r.openDirAt(op, p, readable, false)
}

// openDirAt is openDir; raw makes its openat2 (and the dirRef's close) raw
// system calls (see FS.LstatInline).
func (r *resolver) openDirAt(op, p string, readable, raw bool) (dirRef, error) {
	if p == "" && !readable {
		return dirRef{fd: r.rootFd}, nil
	}
	flags := unix.O_DIRECTORY | unix.O_CLOEXEC
	if readable {
		flags |= unix.O_RDONLY
	} else {
		flags |= unix.O_PATH
	}
	keep := !readable && cacheable(p)
	if keep && !r.noAt2.Load() {
		if e := r.dirs.get(r.rootFd, p, raw); e != nil {
			return dirRef{fd: e.fd, raw: raw, kept: e}, nil
		}
	}
	if !r.noAt2.Load() {
		fd, err := openBeneath(raw, r.rootFd, osName(p), flags)
		switch err {
		case nil:
			if keep {
				if e := r.dirs.add(p, fd, raw); e != nil {
					return dirRef{fd: fd, raw: raw, kept: e}, nil
				}
			}
			return dirRef{fd: fd, own: true, raw: raw}, nil
		case unix.ENOSYS, unix.EPERM:
			// No openat2 here (or a seccomp filter refuses it): fall back for good.
			r.noAt2.Store(true)
		case unix.ELOOP:
			// A component is a symlink, which the server does not follow: to
			// the caller it is not a directory it can go through.
			return dirRef{}, E(op, KindNotDir, p, constError("a path component is a symlink, which the server does not follow"))
		case unix.EXDEV:
			return dirRef{}, E(op, KindPermission, p, errEscape)
		default:
			return dirRef{}, wrap(op, p, err)
		}
	}
	return r.openDirRoot(op, p)
}

// openDirRoot opens directory p through os.Root, where openat2 is missing.
func (r *resolver) openDirRoot(op, p string) (dirRef, error) {
	d, err := r.root.Open(osName(p))
	if err != nil {
		return dirRef{}, wrap(op, p, err)
	}
	fd, err := unix.Dup(int(d.Fd()))
	d.Close()
	if err != nil {
		return dirRef{}, wrap(op, p, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
		unix.Close(fd)
		return dirRef{}, E(op, KindNotDir, p, nil)
	}
	return dirRef{fd: fd, own: true}, nil
}

// openBeneath opens p beneath dirfd with openat2 (RESOLVE_BENEATH, no
// symlinks). A path the kernel would refuse as longer than PATH_MAX is opened
// in steps of whole components, each beneath the directory the step before
// opened: a client's path is relative to its working directory, and the
// core's, from the export's root, may be longer (pjdfstest's */03.t make
// paths of PATH_MAX-1 bytes below their own directory).
// raw makes its system calls raw (see FS.LstatInline).
func openBeneath(raw bool, dirfd int, p string, flags int) (int, error) {
	openat2 := unix.Openat2
	if raw {
		openat2 = rawOpenat2
	}
	how := func(f int) *unix.OpenHow {
		return &unix.OpenHow{Flags: uint64(f),
			Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS}
	}
	at, own := dirfd, false
	for len(p) >= unix.PathMax {
		// The longest run of whole components that fits (at least one: a
		// component is at most NAME_MAX bytes).
		cut := strings.LastIndexByte(p[:unix.PathMax-1], '/')
		if cut <= 0 {
			if own {
				closeFD(at, raw)
			}
			return -1, unix.ENAMETOOLONG
		}
		fd, err := openat2(at, p[:cut], how(unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC))
		if own {
			closeFD(at, raw)
		}
		if err != nil {
			return -1, err
		}
		at, own, p = fd, true, p[cut+1:]
	}
	fd, err := openat2(at, p, how(flags))
	if own {
		closeFD(at, raw)
	}
	return fd, err
}
