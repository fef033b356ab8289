package nfs_test

import (
	"os"
	"syscall"
)

func fileIno(fi os.FileInfo) uint64 { return fi.Sys().(*syscall.Stat_t).Ino }
