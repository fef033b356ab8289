package server

import (
	"bytes"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// A file server makes files with the modes its clients send: their own umask
// has shaped them already (Linux's NFS and v9fs clients apply it before
// CREATE, MKDIR, MKNOD, Tlcreate...), and knfsd, nfs-ganesha and diod apply
// none of their own. The kernel applies the daemon's process umask to every
// create, so a client's 0666 file became 0644 (and a writer who is not its
// owner could not write it). The umask belongs to the whole process (every
// thread shares it), and the daemon's own files (sockets, state) rely on it,
// so the core leaves it alone and gives a new file back the permission bits
// it took: one chmod, made only when the mode asked for has a bit the umask
// holds (a client's usual 0644 and 0755 under a umask of 022 cost nothing).

// readUmask returns the process's umask, read from /proc/self/status (Linux
// 4.7+); where that is missing, by setting it and back, once, at New.
func readUmask() uint32 {
	if b, err := os.ReadFile("/proc/self/status"); err == nil {
		for _, line := range bytes.Split(b, []byte("\n")) {
			if v, ok := bytes.CutPrefix(line, []byte("Umask:")); ok {
				if n, err := strconv.ParseUint(string(bytes.TrimSpace(v)), 8, 32); err == nil {
					return uint32(n)
				}
			}
		}
	}
	m := unix.Umask(0o22)
	unix.Umask(m)
	return uint32(m)
}

// umasked reports whether the daemon's umask took permission bits of perm
// away from a file just made with it.
func (f *FS) umasked(perm uint32) bool { return perm&0o777&f.umask != 0 }

// restorePerm gives name in d, just made by this call with permission bits
// perm and now holding a (its attributes), the permission bits the umask took,
// keeping the special bits the kernel chose (mkdir ignores setuid and setgid
// in its mode; a setgid directory's new subdirectory inherits setgid). It
// acts through an O_PATH descriptor of the very inode, never a symlink put in
// its place, with the caller's credentials when run inside f.as. It returns
// the attributes after.
func (f *FS) restorePerm(d dirRef, name, op, p string, perm uint32, a Attr) (Attr, error) {
	want := UnixPerm(a.Mode)&^0o777 | perm&0o777
	fd, err := unix.Openat(d.fd, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return Attr{}, wrap(op, p, err)
	}
	defer unix.Close(fd)
	if now, err := statx(fd, "", op, p); err != nil || now.Ino != a.Ino || now.Dev != a.Dev {
		return Attr{}, E(op, KindStale, p, constError("the new file was replaced while its mode was set"))
	}
	err = unix.Chmod("/proc/self/fd/"+itoa(fd), want)
	if err == unix.ENOENT {
		err = unix.Fchmodat(d.fd, name, want, 0)
	}
	if err != nil {
		return Attr{}, wrap(op, p, err)
	}
	return statx(fd, "", op, p)
}
