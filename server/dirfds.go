package server

import (
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// maxDirFDs bounds the directory descriptors dirFDs keeps open.
const maxDirFDs = 64

// dirFDs keeps O_PATH descriptors of directories one level below the root, so
// that resolving such a directory (the parent of nearly every path an NFS
// client names in a flat tree: LOOKUP, CREATE, and each WRITE and COMMIT
// verifying its handle's path) costs one statx instead of an openat2 and a
// close. Safe for concurrent use.
//
// Containment: a descriptor follows its directory wherever it is moved, out of
// the backing directory included, and a name may come to hold another
// directory or a symlink. So every use is checked first: statx of the name in
// the root, not following it, must show a directory with the descriptor's
// device and inode. The descriptor keeps its inode allocated, so no other
// directory can have that number meanwhile: a match means the name holds this
// very directory, beneath the root, as an openat2 with RESOLVE_BENEATH and
// RESOLVE_NO_SYMLINKS would have found it. Any other answer drops the entry and
// resolves with openat2, whose error the caller gets. What is left is the
// window between the check and the use, the same window as between an openat2
// and the call made on its descriptor. Only one level: deeper, a statx of the
// whole path would follow a symlink on the way, and a check per component costs
// what the openat2 does.
type dirFDs struct {
	mu sync.Mutex
	m  map[string]*dirFD
}

// dirFD is one kept descriptor. refs counts the dirRefs handed out; a
// descriptor dropped from the map (gone) is closed when the last is released.
type dirFD struct {
	c        *dirFDs
	fd       int
	dev, ino uint64
	refs     int
	gone     bool
}

// cacheable reports whether p is a directory dirFDs keeps: one level below the
// root.
func cacheable(p string) bool {
	return p != "" && strings.IndexByte(p, '/') < 0
}

// get returns the kept descriptor of directory p, referenced, after checking
// it still is the directory at p; nil when none is kept or the check fails.
// raw makes the check a raw system call (FS.LstatInline).
func (c *dirFDs) get(rootFd int, p string, raw bool) *dirFD {
	c.mu.Lock()
	e := c.m[p]
	if e == nil {
		c.mu.Unlock()
		return nil
	}
	e.refs++
	c.mu.Unlock()
	if a, err := statxAt(rootFd, p, "resolve", p, raw); err == nil && a.Mode.IsDir() && a.Ino == e.ino && a.Dev == e.dev {
		return e
	}
	c.mu.Lock()
	if c.m[p] == e {
		delete(c.m, p)
		e.gone = true
	}
	c.mu.Unlock()
	e.release(raw)
	return nil
}

// add keeps fd, an O_PATH descriptor of directory p just opened beneath the
// root, and returns it referenced; nil (fd left to the caller) when its
// identity cannot be read or another descriptor of p is kept already.
func (c *dirFDs) add(p string, fd int, raw bool) *dirFD {
	a, err := statxAt(fd, "", "resolve", p, raw)
	if err != nil || !a.Mode.IsDir() {
		return nil
	}
	e := &dirFD{c: c, fd: fd, dev: a.Dev, ino: a.Ino, refs: 1}
	var evicted []*dirFD
	c.mu.Lock()
	if c.m == nil {
		c.m = make(map[string]*dirFD)
	}
	if _, ok := c.m[p]; ok {
		c.mu.Unlock()
		return nil
	}
	for k, old := range c.m {
		if len(c.m) < maxDirFDs {
			break
		}
		delete(c.m, k) // any: map order is as good as any other here
		old.gone = true
		if old.refs == 0 {
			evicted = append(evicted, old)
		}
	}
	c.m[p] = e
	c.mu.Unlock()
	for _, old := range evicted {
		closeFD(old.fd, raw)
	}
	return e
}

// drop closes the descriptor kept for p, if any (at its last release if in
// use): p was removed or renamed. Not needed for containment (get checks every
// use), but a kept descriptor holds its directory's inode: a removed
// directory's inotify watch would stay (no IN_DELETE_SELF, no IN_IGNORED) until
// the entry is next looked up or evicted.
func (c *dirFDs) drop(p string) {
	if !cacheable(p) {
		return
	}
	c.mu.Lock()
	e := c.m[p]
	closeIt := false
	if e != nil {
		delete(c.m, p)
		e.gone = true
		closeIt = e.refs == 0
	}
	c.mu.Unlock()
	if closeIt {
		unix.Close(e.fd)
	}
}

// kept is the number of descriptors kept (one dropped while in use is closed
// at its last release and not counted).
func (c *dirFDs) kept() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}

// release gives back a reference from get or add.
func (e *dirFD) release(raw bool) {
	c := e.c
	c.mu.Lock()
	e.refs--
	closeIt := e.gone && e.refs == 0
	c.mu.Unlock()
	if closeIt {
		closeFD(e.fd, raw)
	}
}

// closeAll closes every kept descriptor not in use; those in use are closed by
// their last release.
func (c *dirFDs) closeAll() {
	c.mu.Lock()
	var idle []int
	for k, e := range c.m {
		delete(c.m, k)
		e.gone = true
		if e.refs == 0 {
			idle = append(idle, e.fd)
		}
	}
	c.mu.Unlock()
	for _, fd := range idle {
		unix.Close(fd)
	}
}

func closeFD(fd int, raw bool) {
	if raw {
		rawClose(fd)
	} else {
		unix.Close(fd)
	}
}

// KeptDirs is the number of directory descriptors the core keeps open between
// calls (at most 64; see dirFDs): a process counting its descriptors to find
// leaks (a test) counts these apart. Safe for concurrent use.
func (f *FS) KeptDirs() int { return f.res.dirs.kept() }
