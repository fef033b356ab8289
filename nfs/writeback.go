package nfs

// writebackMax bounds the files whose UNSTABLE WRITEs start their own
// writeback: a WRITE that ends a file of at most this many bytes.
const writebackMax = 64 << 10

// writebackKick is a range of a file (by core path and inode) whose pages the
// reading goroutine starts writing once the WRITE's reply is out; n == 0:
// none.
type writebackKick struct {
	path   string
	ino    uint64
	off, n int64
}

// noteWriteback marks the data of the UNSTABLE WRITE being answered for
// afterReply, when the write ends a small file (its size after the write is
// off+n, at most writebackMax): a file being created, which its client COMMITs
// next. Overwrites inside a file and large files are left to the kernel's own
// writeback, which coalesces repeated writes of the same pages.
//
// Why: a COMMIT's fsync of a new file writes the data block, waits for it,
// then writes the inode and the directory, waits, and flushes the disk's
// cache; the data write and its wake-up (an extent conversion on a kernel
// worker, then the waiting thread, often on the other CPU) were the largest
// part of a COMMIT after a libnfs create (docs/benchmarks-history.md, "NFS create:
// COMMIT's fsync"). Started when the WRITE is answered, the data write overlaps the
// client's turn-around, and the COMMIT waits for the metadata only.
func (h *connHandler) noteWriteback(p string, ino uint64, off, n, size int64) {
	if n <= 0 || off+n != size || size > writebackMax {
		return
	}
	h.writeback = writebackKick{path: p, ino: ino, off: off, n: n}
}

// afterReply runs on the connection's reading goroutine after a reply of the
// answer was sent: it starts the writeback noteWriteback asked for, on the
// descriptor the fd cache still holds (none: nothing to do). A hint only:
// durability is still COMMIT's fsync, and an error here changes no reply.
func (h *connHandler) afterReply() {
	if h.writeback.n == 0 {
		return
	}
	k := h.writeback
	h.writeback = writebackKick{}
	if e := h.s.fds.lookup(k.path, k.ino); e != nil {
		_ = e.f.StartWriteback(k.off, k.n)
		h.s.fds.release(e)
	}
}
