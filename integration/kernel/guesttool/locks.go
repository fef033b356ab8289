package main

import (
	"fmt"
	"os"
	"syscall"
)

// locks checks POSIX (fcntl) and BSD (flock) locks across two mounts of one
// server, pathA and pathB naming the same file through each: a lock taken
// through one connection is reported (F_GETLK) and honoured (F_SETLK,
// LOCK_NB) through the other, and released by unlock and by close. It prints
// "locks ok" or exits 1 naming the first wrong answer.
func locks(pathA, pathB string) {
	a, err := os.OpenFile(pathA, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		fatal(1, "locks: open A: %v", err)
	}
	b, err := os.OpenFile(pathB, os.O_RDWR, 0)
	if err != nil {
		fatal(1, "locks: open B: %v", err)
	}
	wr := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: 0, Start: 0, Len: 100}
	if err := syscall.FcntlFlock(a.Fd(), syscall.F_SETLK, &wr); err != nil {
		fatal(1, "locks: F_SETLK on mount A: %v", err)
	}
	// F_GETLK is 9P's Tgetlock, which the shim answers (ninep/conn.go).
	q := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: 0, Start: 10, Len: 1}
	if err := syscall.FcntlFlock(b.Fd(), syscall.F_GETLK, &q); err != nil {
		fatal(1, "locks: F_GETLK on mount B: %v", err)
	}
	if q.Type != syscall.F_WRLCK || q.Start != 0 || q.Len != 100 {
		fatal(1, "locks: F_GETLK on mount B: %+v, want the write lock [0,100)", q)
	}
	w2 := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: 0, Start: 50, Len: 10}
	if err := syscall.FcntlFlock(b.Fd(), syscall.F_SETLK, &w2); err != syscall.EAGAIN && err != syscall.EACCES {
		fatal(1, "locks: conflicting F_SETLK on mount B: %v, want EAGAIN", err)
	}
	w3 := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: 0, Start: 100, Len: 10}
	if err := syscall.FcntlFlock(b.Fd(), syscall.F_SETLK, &w3); err != nil {
		fatal(1, "locks: F_SETLK beyond A's range on mount B: %v", err)
	}
	un := syscall.Flock_t{Type: syscall.F_UNLCK, Whence: 0, Start: 0, Len: 0}
	if err := syscall.FcntlFlock(a.Fd(), syscall.F_SETLK, &un); err != nil {
		fatal(1, "locks: unlock on A: %v", err)
	}
	q = syscall.Flock_t{Type: syscall.F_WRLCK, Whence: 0, Start: 10, Len: 1}
	if err := syscall.FcntlFlock(b.Fd(), syscall.F_GETLK, &q); err != nil || q.Type != syscall.F_UNLCK {
		fatal(1, "locks: F_GETLK on mount B after A unlocked: %+v %v, want F_UNLCK", q, err)
	}
	if err := syscall.FcntlFlock(b.Fd(), syscall.F_SETLK, &w2); err != nil {
		fatal(1, "locks: F_SETLK on B after A unlocked: %v", err)
	}
	b.Close() // releases B's locks (the kernel sends the unlock)
	if err := syscall.FcntlFlock(a.Fd(), syscall.F_SETLK, &w2); err != nil {
		fatal(1, "locks: F_SETLK on A after B closed: %v (B's lock outlived its close)", err)
	}
	// v9fs sends flock as a whole-file Tlock, so a server cannot keep the two
	// kinds apart as a local file system does: A's fcntl lock would block
	// A's own flock below. Released first.
	if err := syscall.FcntlFlock(a.Fd(), syscall.F_SETLK, &un); err != nil {
		fatal(1, "locks: second unlock on A: %v", err)
	}
	if err := syscall.Flock(int(a.Fd()), syscall.LOCK_EX); err != nil {
		fatal(1, "locks: flock A: %v", err)
	}
	b2, err := os.OpenFile(pathB, os.O_RDWR, 0)
	if err != nil {
		fatal(1, "locks: reopen B: %v", err)
	}
	if err := syscall.Flock(int(b2.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != syscall.EWOULDBLOCK {
		fatal(1, "locks: flock B while A holds it: %v, want EWOULDBLOCK", err)
	}
	syscall.Flock(int(a.Fd()), syscall.LOCK_UN)
	if err := syscall.Flock(int(b2.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		fatal(1, "locks: flock B after A released: %v", err)
	}
	fmt.Println("locks ok")
}
