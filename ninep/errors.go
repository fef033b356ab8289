package ninep

import (
	"errors"
	"fmt"
	"io"

	"github.com/hugelgupf/p9/linux"
	"github.com/semfs/semfs/server"
)

// ErrnoOf maps a core error kind to the errno a 9P2000.L client receives. It is
// the only place kinds become errnos; it panics on a kind it does not know, so
// that a kind added to the core without a mapping fails the test that walks
// server.Kinds() instead of reaching a client as a guess. (At run time the panic
// is caught by the file's guard and answered EIO.)
func ErrnoOf(k server.Kind) linux.Errno {
	switch k {
	case server.KindIO:
		return linux.EIO
	case server.KindNotFound:
		return linux.ENOENT
	case server.KindExists:
		return linux.EEXIST
	case server.KindNotDir:
		return linux.ENOTDIR
	case server.KindIsDir:
		return linux.EISDIR
	case server.KindNotEmpty:
		return linux.ENOTEMPTY
	case server.KindPermission:
		return linux.EACCES
	case server.KindReadOnly:
		return linux.EROFS
	case server.KindStale:
		return linux.ESTALE
	case server.KindInvalid:
		return linux.EINVAL
	case server.KindTooLarge:
		return linux.EFBIG
	case server.KindNotSupported:
		return linux.EOPNOTSUPP
	case server.KindNameTooLong:
		return linux.ENAMETOOLONG
	case server.KindNoSpace:
		return linux.ENOSPC
	case server.KindNotPermitted:
		return linux.EPERM
	case server.KindLoop:
		return linux.ELOOP
	case server.KindCrossDevice:
		return linux.EXDEV
	case server.KindTooManyLinks:
		return linux.EMLINK
	case server.KindQuota:
		return linux.EDQUOT
	case server.KindBadFile:
		return linux.EBADF
	}
	panic(fmt.Sprintf("ninep: core error kind %d (%v) has no errno mapping", uint8(k), k))
}

// toErrno turns whatever a core call returned into what p9 sends: nil, io.EOF
// (reads and readdir use it to mean "no more") or a bare linux.Errno, so that
// p9's own linux.ExtractErrno never has to guess.
func toErrno(err error) error {
	if err == nil || err == io.EOF {
		return err
	}
	var se *server.Error
	if errors.As(err, &se) {
		return ErrnoOf(se.Kind)
	}
	var e linux.Errno
	if errors.As(err, &e) {
		return e
	}
	return ErrnoOf(server.KindOf(err))
}

// errNotInline is the shim's walk declining a path it may not answer in the
// connection's only reader (server.FS.Inline); p9 walks it instead, so no
// client ever sees it.
var errNotInline = errors.New("not answered inline")
