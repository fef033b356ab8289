package server

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// System calls made raw, without entering the Go scheduler's syscall state (see
// FS.LstatInline for why and when). Each is the x/sys/unix call of the same
// name, minus that.

func rawStatx(dirfd int, path string, flags, mask int, st *unix.Statx_t) error {
	var nul [1]byte // AT_EMPTY_PATH's "": no allocation for it
	p := &nul[0]
	if path != "" {
		var err error
		if p, err = unix.BytePtrFromString(path); err != nil {
			return err
		}
	}
	_, _, e := unix.RawSyscall6(unix.SYS_STATX, uintptr(dirfd), uintptr(unsafe.Pointer(p)),
		uintptr(flags), uintptr(mask), uintptr(unsafe.Pointer(st)), 0)
	if e != 0 {
		return e
	}
	return nil
}

func rawOpenat2(dirfd int, path string, how *unix.OpenHow) (int, error) {
	p, err := unix.BytePtrFromString(path)
	if err != nil {
		return -1, err
	}
	fd, _, e := unix.RawSyscall6(unix.SYS_OPENAT2, uintptr(dirfd), uintptr(unsafe.Pointer(p)),
		uintptr(unsafe.Pointer(how)), unsafe.Sizeof(*how), 0, 0)
	if e != 0 {
		return -1, e
	}
	return int(fd), nil
}

func rawClose(fd int) {
	unix.RawSyscall(unix.SYS_CLOSE, uintptr(fd), 0, 0)
}

// rawPreadv2 reads into b at off with flags (RWF_NOWAIT: it never blocks).
func rawPreadv2(fd int, b []byte, off int64, flags int) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	iov := unix.Iovec{Base: &b[0]}
	iov.SetLen(len(b))
	// The offset's low and high words, as the kernel's pos_from_hilo takes them.
	lo, hi := uintptr(off), uintptr(uint64(off)>>32>>32)
	n, _, e := unix.RawSyscall6(unix.SYS_PREADV2, uintptr(fd), uintptr(unsafe.Pointer(&iov)), 1, lo, hi, uintptr(flags))
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

// rawPwrite writes b at off; it can wait for the disk (see File.TryWriteAt).
func rawPwrite(fd int, b []byte, off int64) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	n, _, e := unix.RawSyscall6(unix.SYS_PWRITE64, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), uintptr(off), 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}
