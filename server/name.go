package server

import (
	"path"
	"strings"
	"unicode/utf8"
)

// MaxNameLen is the longest component the core accepts (NAME_MAX on Linux).
const MaxNameLen = 255

// MaxPathLen bounds a symlink's target and a path named from outside
// (PATH_MAX on Linux, less the NUL; see CleanPath).
const MaxPathLen = 4095

// MaxTreePathLen bounds a core path a front end builds (CleanTreePath). It is
// longer than PATH_MAX: a client's path is relative to its working directory
// and the core's is from the export's root, so a client may reach deeper than
// PATH_MAX from the root (a local file system, knfsd and nfs-ganesha have no
// limit there at all); the resolver opens such paths in steps (openBeneath).
const MaxTreePathLen = 64 << 10

// CheckName validates one path component as a client sends it in LOOKUP, CREATE,
// walk and the like. "." and ".." are refused: the core never resolves them, the
// front ends answer them from their own knowledge of the parent.
func CheckName(op, name string) error {
	switch {
	case name == "" || name == "." || name == "..":
		return E(op, KindInvalid, name, errBadName)
	case len(name) > MaxNameLen:
		return E(op, KindNameTooLong, name, nil)
	case strings.ContainsAny(name, "/\x00"):
		return E(op, KindInvalid, name, errBadName)
	}
	return nil
}

// CheckSymlinkTarget validates the target of symlink p about to be made, as
// symlink(2) does before it looks at p: an empty target names nothing
// (KindNotFound, ENOENT), one longer than a path may be is KindNameTooLong.
// A front end whose protocol refuses before the core is asked (9P's shim for
// a "directory" that is a file) asks it too, so the order stays the core's.
func CheckSymlinkTarget(p, target string) error {
	if target == "" {
		return E("symlink", KindNotFound, p, constError("the symlink target is empty"))
	}
	if len(target) > MaxPathLen {
		return E("symlink", KindNameTooLong, p, constError("the symlink target is longer than a path may be"))
	}
	return nil
}

// CheckNewPath validates the path of a name about to be made (create, mkdir,
// symlink, link, mknod, a rename's target): it must be valid UTF-8, as every
// name the core creates is.
//
// Why refuse rather than escape: a file's tags are set and read through the
// control API, which is JSON, and a JSON string cannot carry bytes that are not
// UTF-8 (encoding/json turns them into U+FFFD, which names another file). A
// file the core let a client name that way could never be tagged. So the core
// refuses such a name at the one moment a client chooses it, with KindInvalid
// (EINVAL over 9P, NFS3ERR_INVAL over NFS), and every name it makes can be
// tagged. The whole path is checked, not only the last component: a file made
// inside a directory whose name is not UTF-8 could not be tagged either.
// Names that already exist are another matter: a host tool may have made them,
// and they stay readable, listable, renamable (to a UTF-8 name) and removable;
// only lookups (CheckName) see them, and CheckName does not ask for UTF-8.
func CheckNewPath(op, p string) error {
	if !utf8.ValidString(p) {
		return E(op, KindInvalid, p, errNotUTF8)
	}
	return nil
}

// Join appends a validated component to a core path.
func Join(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

// Within reports whether core path p is dir or below it; every path is within
// the root ("").
func Within(p, dir string) bool {
	return dir == "" || p == dir || len(p) > len(dir) && p[len(dir)] == '/' && p[:len(dir)] == dir
}

// Split returns the parent and last component of a core path ("" is the root).
func Split(p string) (dir, name string) {
	i := strings.LastIndexByte(p, '/')
	if i < 0 {
		return "", p
	}
	return p[:i], p[i+1:]
}

// CleanPath turns a path from an outside source (the control socket, a billy path)
// into a core path: slash-separated, relative, every component valid. "/", "" and
// "." name the root. A path that is absolute in the host's sense is read relative to
// the backing directory, but a ".." anywhere is refused rather than resolved, so that
// a request can never name something outside by construction.
// A path longer than MaxPathLen is KindNameTooLong: what a request names from
// outside (the control socket, a MOUNT, a snapshot's entry) is bounded as a
// local path is; CleanTreePath takes the deeper paths the front ends build.
func CleanPath(op, p string) (string, error) {
	return cleanPath(op, p, MaxPathLen)
}

// CleanTreePath is CleanPath for a path a front end built from its own
// handles (an NFS handle's path and a name in it), which may be longer than
// PATH_MAX from the root (MaxTreePathLen).
func CleanTreePath(op, p string) (string, error) {
	return cleanPath(op, p, MaxTreePathLen)
}

func cleanPath(op, p string, max int) (string, error) {
	if len(p) > max {
		return "", E(op, KindNameTooLong, "", nil)
	}
	p = strings.TrimLeft(p, "/")
	if p == "" || p == "." {
		return "", nil
	}
	for _, c := range strings.Split(p, "/") {
		if c == ".." {
			return "", E(op, KindPermission, p, errEscape)
		}
	}
	p = path.Clean(p)
	if p == "." {
		return "", nil
	}
	for _, c := range strings.Split(p, "/") {
		if err := CheckName(op, c); err != nil {
			e := err.(*Error)
			e.Path = p
			return "", e
		}
	}
	return p, nil
}

// osName turns a core path into the name os.Root expects.
func osName(p string) string {
	if p == "" {
		return "."
	}
	return p
}

type constError string

func (e constError) Error() string { return string(e) }

const (
	errBadName = constError("a name must be a single non-empty component without '/', NUL, '.' or '..'")
	errEscape  = constError("path escapes the backing directory")
	errNotUTF8 = constError("a new name must be valid UTF-8 (the tag API is JSON, which cannot carry it otherwise)")
)
