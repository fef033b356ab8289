package server

import (
	"errors"
	"io/fs"
	"strings"
)

// Kind classifies an error for the front ends. The list is append-only: front ends
// and stored data may depend on the numbers.
type Kind uint8

const (
	KindIO           Kind = iota // EIO: an unexpected failure of the backing filesystem
	KindNotFound                 // ENOENT
	KindExists                   // EEXIST
	KindNotDir                   // ENOTDIR: a path component is not a directory
	KindIsDir                    // EISDIR: a file operation on a directory
	KindNotEmpty                 // ENOTEMPTY: removing or replacing a non-empty directory
	KindPermission               // EACCES: the caller lacks a permission bit, and any attempt to leave the backing directory
	KindReadOnly                 // EROFS
	KindStale                    // ESTALE: a handle that no longer names a file
	KindInvalid                  // EINVAL: a malformed name or argument
	KindTooLarge                 // EFBIG: a size or offset beyond what is allowed
	KindNotSupported             // ENOTSUP: an operation this server does not do (e.g. chmod of a symlink)
	KindNameTooLong              // ENAMETOOLONG
	KindNoSpace                  // ENOSPC
	KindNotPermitted             // EPERM: not allowed whatever the mode bits (chown by a non-owner, sticky directory, a device node)
	KindLoop                     // ELOOP: a symlink met where a file or directory was needed (O_NOFOLLOW), or too many
	KindCrossDevice              // EXDEV: a rename or link across file systems (a mount point inside the backing directory)
	KindTooManyLinks             // EMLINK: the file system's link count limit
	KindQuota                    // EDQUOT: the owner's disk quota is used up
	KindBadFile                  // EBADF: a descriptor that cannot do what was asked (closed, or opened for the other direction)
)

var kindNames = [...]string{
	KindIO:           "i/o error",
	KindNotFound:     "not found",
	KindExists:       "already exists",
	KindNotDir:       "not a directory",
	KindIsDir:        "is a directory",
	KindNotEmpty:     "directory not empty",
	KindPermission:   "permission denied",
	KindReadOnly:     "read-only",
	KindStale:        "stale handle",
	KindInvalid:      "invalid argument",
	KindTooLarge:     "too large",
	KindNotSupported: "not supported",
	KindNameTooLong:  "name too long",
	KindNoSpace:      "no space left",
	KindNotPermitted: "operation not permitted",
	KindLoop:         "too many levels of symbolic links",
	KindCrossDevice:  "cross-device link",
	KindTooManyLinks: "too many links",
	KindQuota:        "disk quota exceeded",
	KindBadFile:      "bad file descriptor",
}

// Kinds lists every Kind, so that front ends can test that their mapping is exhaustive.
func Kinds() []Kind {
	ks := make([]Kind, len(kindNames))
	for i := range ks {
		ks[i] = Kind(i)
	}
	return ks
}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "unknown kind"
}

// Error is the only error type the core returns.
type Error struct {
	Op   string // the core operation, e.g. "create"
	Kind Kind
	Path string // slash-separated, relative to the backing directory
	App  string // the acting app, when known
	Err  error  // the underlying cause, if any
}

// E builds an *Error. A nil err with a kind gives an error of that kind alone.
func E(op string, kind Kind, path string, err error) *Error {
	return &Error{Op: op, Kind: kind, Path: path, Err: err}
}

// wrap classifies a lower-level error (syscall, os, os.Root) into an *Error.
// An *Error passes through with its Kind kept, so kinds survive nesting.
func wrap(op, path string, err error) error {
	if err == nil {
		return nil
	}
	var se *Error
	if errors.As(err, &se) {
		if se.Op == "" {
			se.Op = op
		}
		return se
	}
	return &Error{Op: op, Kind: classify(err), Path: path, Err: err}
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Op)
	if e.Path != "" {
		b.WriteString(" ")
		b.WriteString(quotePath(e.Path))
	}
	if e.App != "" {
		b.WriteString(" (app ")
		b.WriteString(e.App)
		b.WriteString(")")
	}
	b.WriteString(": ")
	b.WriteString(e.Kind.String())
	if e.Err != nil {
		cause := e.Err.Error()
		if cause != e.Kind.String() {
			b.WriteString(": ")
			b.WriteString(cause)
		}
	}
	return b.String()
}

func quotePath(p string) string {
	if p == "" {
		return "/"
	}
	return "/" + p
}

func (e *Error) Unwrap() error { return e.Err }

// Is lets errors.Is(err, fs.ErrNotExist) and friends hold for the matching kinds.
func (e *Error) Is(target error) bool {
	switch target {
	case fs.ErrNotExist:
		return e.Kind == KindNotFound
	case fs.ErrExist:
		return e.Kind == KindExists
	case fs.ErrPermission:
		return e.Kind == KindPermission || e.Kind == KindNotPermitted
	case fs.ErrInvalid:
		return e.Kind == KindInvalid
	}
	return false
}

// KindOf returns the Kind of err, KindIO for foreign errors. err must not be nil.
func KindOf(err error) Kind {
	var se *Error
	if errors.As(err, &se) {
		return se.Kind
	}
	return classify(err)
}
