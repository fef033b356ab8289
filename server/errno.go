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
		case syscall.EACCES, syscall.EPERM:
			return KindPermission
		case syscall.EROFS:
			return KindReadOnly
		case syscall.ESTALE:
			return KindStale
		case syscall.EINVAL, syscall.ELOOP, syscall.EBADF:
			// ELOOP: O_NOFOLLOW met a symlink as the last component; the caller
			// asked to use a symlink as a file, which is an invalid request.
			return KindInvalid
		case syscall.EFBIG, syscall.EOVERFLOW:
			return KindTooLarge
		case syscall.ENOTSUP, syscall.ENOSYS:
			return KindNotSupported
		case syscall.ENAMETOOLONG:
			return KindNameTooLong
		case syscall.ENOSPC, syscall.EDQUOT:
			return KindNoSpace
		case syscall.EXDEV, syscall.EMLINK:
			return KindInvalid
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
