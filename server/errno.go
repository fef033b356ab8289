package server

import (
	"errors"
	"strings"
	"syscall"
)

// classify maps an error from the os package, os.Root or a raw syscall to a Kind.
// This is the only place errnos are interpreted.
func classify(err error) Kind {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		switch errno {
		case syscall.ENOENT:
			return KindNotFound
		case syscall.EEXIST:
			return KindExists
		case syscall.ENOTDIR:
			return KindNotDir
		case syscall.EISDIR:
			return KindIsDir
		case syscall.ENOTEMPTY:
			return KindNotEmpty
		case syscall.EACCES:
			return KindPermission
		case syscall.EPERM:
			return KindNotPermitted
		case syscall.EROFS:
			return KindReadOnly
		case syscall.ESTALE:
			return KindStale
		case syscall.EINVAL:
			return KindInvalid
		case syscall.ELOOP:
			// Mostly O_NOFOLLOW meeting a symlink as the last component. Each
			// front end says it in its protocol's words (NFSv3 has no loop
			// status and answers INVAL, as Linux's nfsd does; 9P says ELOOP,
			// as the local open would).
			return KindLoop
		case syscall.EBADF:
			return KindBadFile
		case syscall.EFBIG, syscall.EOVERFLOW:
			return KindTooLarge
		case syscall.ENOTSUP, syscall.ENOSYS:
			return KindNotSupported
		case syscall.ENAMETOOLONG:
			return KindNameTooLong
		case syscall.ENOSPC:
			return KindNoSpace
		case syscall.EDQUOT:
			return KindQuota
		case syscall.EXDEV:
			return KindCrossDevice
		case syscall.EMLINK:
			return KindTooManyLinks
		}
		return KindIO
	}
	// os.Root reports an escape attempt with an unexported sentinel whose text is
	// stable ("path escapes from parent"); it is a refusal, not a missing file.
	if strings.Contains(err.Error(), "path escapes from parent") {
		return KindPermission
	}
	return KindIO
}
