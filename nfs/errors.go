package nfs

import (
	"fmt"
	"io/fs"
	"syscall"

	"github.com/semfs/semfs/server"
)

// NFSv3 status codes (RFC 1813 nfsstat3) the core's kinds map to.
const (
	nfs3ErrPerm        = 1
	nfs3ErrNoEnt       = 2
	nfs3ErrAcces       = 13
	nfs3ErrExist       = 17
	nfs3ErrXDev        = 18
	nfs3ErrNotDir      = 20
	nfs3ErrIsDir       = 21
	nfs3ErrInval       = 22
	nfs3ErrFBig        = 27
	nfs3ErrNoSpc       = 28
	nfs3ErrROFS        = 30
	nfs3ErrMLink       = 31
	nfs3ErrNameTooLong = 63
	nfs3ErrNotEmpty    = 66
	nfs3ErrDQuot       = 69
	nfs3ErrNotSupp     = 10004
	nfs3ErrTooSmall    = 10005
)

// toNFS is the one mapping from the core's error vocabulary to NFS: the
// nfsstat3 the reply carries, and the errno of the *fs.PathError pathError
// returns (the errors.Is view of the same failure). It panics on a Kind it does not know,
// so a new Kind cannot slip through unmapped: TestKindMapping walks server.Kinds().
func toNFS(k server.Kind) (syscall.Errno, uint32) {
	switch k {
	case server.KindIO:
		return syscall.EIO, nfs3ErrIO
	case server.KindNotFound:
		return syscall.ENOENT, nfs3ErrNoEnt
	case server.KindExists:
		return syscall.EEXIST, nfs3ErrExist
	case server.KindNotDir:
		return syscall.ENOTDIR, nfs3ErrNotDir
	case server.KindIsDir:
		return syscall.EISDIR, nfs3ErrIsDir
	case server.KindNotEmpty:
		return syscall.ENOTEMPTY, nfs3ErrNotEmpty
	case server.KindPermission:
		return syscall.EACCES, nfs3ErrAcces
	case server.KindReadOnly:
		return syscall.EROFS, nfs3ErrROFS
	case server.KindStale:
		return syscall.ESTALE, nfs3ErrStale
	case server.KindInvalid:
		return syscall.EINVAL, nfs3ErrInval
	case server.KindTooLarge:
		return syscall.EFBIG, nfs3ErrFBig
	case server.KindNotSupported:
		return syscall.EOPNOTSUPP, nfs3ErrNotSupp
	case server.KindNameTooLong:
		return syscall.ENAMETOOLONG, nfs3ErrNameTooLong
	case server.KindNoSpace:
		return syscall.ENOSPC, nfs3ErrNoSpc
	case server.KindNotPermitted:
		return syscall.EPERM, nfs3ErrPerm
	case server.KindLoop:
		// NFSv3 has no loop status: Linux's nfsd answers a symlink where a
		// file or directory was needed with INVAL (nfsd3_map_status), and a
		// client resolves symlinks itself, so a loop never needs its own word.
		return syscall.ELOOP, nfs3ErrInval
	case server.KindCrossDevice:
		return syscall.EXDEV, nfs3ErrXDev
	case server.KindTooManyLinks:
		return syscall.EMLINK, nfs3ErrMLink
	case server.KindQuota:
		return syscall.EDQUOT, nfs3ErrDQuot
	case server.KindBadFile:
		// The descriptor is the server's own (the client holds a handle,
		// which stays good), so a bad one is the server's I/O failure.
		return syscall.EBADF, nfs3ErrIO
	}
	panic(fmt.Sprintf("nfs: server.Kind %d (%v) has no NFS mapping", k, k))
}

// pathError records on r the NFS status of a core error (status reads it) and
// returns the error as an *fs.PathError.
func pathError(r *request, op, p string, err error) error {
	if err == nil {
		return nil
	}
	errno, status := toNFS(server.KindOf(err))
	r.fail(status)
	return &fs.PathError{Op: op, Path: "/" + p, Err: errno}
}
