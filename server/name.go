package server

import (
	"path"
	"strings"
)

// MaxNameLen is the longest component the core accepts (NAME_MAX on Linux).
const MaxNameLen = 255

// MaxPathLen bounds a whole relative path (PATH_MAX on Linux).
const MaxPathLen = 4095

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

// Join appends a validated component to a core path.
func Join(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
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
func CleanPath(op, p string) (string, error) {
	if len(p) > MaxPathLen {
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
)
