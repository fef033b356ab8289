package server

import (
	"context"
	"io/fs"

	"golang.org/x/sys/unix"
)

// A write clears a file's setuid bit, and its setgid bit where group execute
// is set, unless the writer holds CAP_FSETID (Linux's file_remove_privs;
// pjdfstest chmod/12): a program cannot be changed and keep running as its
// owner. The core writes through descriptors with the daemon's credentials,
// so for a caller it acts as (cred.go) it clears the bits itself, once,
// after the first write through a descriptor that caller opened while the
// file had them. Writes cost nothing more otherwise: the bits are known from
// the open's statx.

// hasPrivs reports whether a write by an unprivileged caller clears bits of m.
func hasPrivs(m fs.FileMode) bool {
	return m&fs.ModeSetuid != 0 || m&fs.ModeSetgid != 0 && m&0o010 != 0
}

// dropPrivs clears the setuid and setgid bits a write by fl's opener removes.
// Best effort, as the kernel's: the write has happened either way.
func (fl *File) dropPrivs() {
	if !fl.killPrivs.CompareAndSwap(true, false) {
		return
	}
	rc, err := fl.f.SyscallConn()
	if err != nil {
		return
	}
	rc.Control(func(fd uintptr) {
		var st unix.Stat_t
		if unix.Fstat(int(fd), &st) != nil {
			return
		}
		m := st.Mode & 0o7777
		kill := uint32(unix.S_ISUID)
		if m&unix.S_IXGRP != 0 {
			kill |= unix.S_ISGID
		}
		if m&kill != 0 {
			if err := unix.Fchmod(int(fd), m&^kill); err != nil {
				fl.fs.log.Debug("could not clear setuid/setgid after a write", "path", fl.Path(), "err", err)
			}
		}
	})
}

// Share makes fl a file every caller writes through (NFS's descriptor
// cache): whether a write clears the bits is then each writer's to decide
// (DropPrivsAfterWrite), and what a write by fl's opener would have cleared
// is forgotten (root's write through a file another caller's create opened
// keeps setuid, as the kernel's write by a holder of CAP_FSETID does).
func (fl *File) Share() { fl.killPrivs.Store(false) }

// DropPrivsAfterWrite is for a front end whose descriptors are shared by
// every caller (NFS: a WRITE through the descriptor cache): after a write by
// ctx's caller to this file, whose attributes before it were a, it clears
// the bits the kernel's write would have cleared for that caller. Nothing
// for a root caller, a daemon that is not root, or a file without them.
func (fl *File) DropPrivsAfterWrite(ctx context.Context, a Attr) {
	if fl.v != nil || !hasPrivs(a.Mode) || !fl.fs.ChecksPermissions(ctx) {
		return
	}
	fl.killPrivs.Store(true)
	fl.dropPrivs()
}
