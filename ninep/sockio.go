package ninep

import (
	"io"
	"net"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// sockIO does a connection's socket reads and writes with raw system calls, on
// the descriptor Go's poller holds (syscall.RawConn): a read or write that would
// block still parks the goroutine in the poller, as net.Conn's would.
//
// Why not net.Conn's own: every system call made the usual way tells the Go
// scheduler it is entering one, and the first such call after all Ps were idle
// wakes the runtime's monitor thread (sysmon), which then polls on 20 µs sleeps
// until everything is idle again. A 9P mount sends one request at a time, so
// that is every request: a futex wake-up, a few nanosleeps and a thread switch
// on the CPUs the client needs. The socket I/O here, the core's inline stats
// (server.FS.LstatInline, server.File.StatInline) and its page-cache reads
// (server.File.ReadAtCached) make no such call, so a Tgetattr, a ghost's Twalk
// and a cached Tread leave the monitor asleep; so does the shim's Twrite
// (server.File.TryWriteAt, whose doc weighs what that costs when the kernel
// throttles writers). Tlcreate and the close of a written file still tell the
// scheduler: they wait on the disk.
// Measured on a 2-vCPU VM, Tgetattr answered by the shim (integration/bench/
// ninep/RESULTS.md): 58-62 → 37-39 µs with client and server pinned to one CPU,
// 83-90 → 53-58 µs pinned to two, server CPU per request 39 → 21 µs; unpinned,
// the rounds at 85-115 µs (the server's thread placed away from the client's)
// are gone.
//
// The socket calls made this way never block: the socket is non-blocking, and
// EAGAIN hands the wait to the poller.
type sockIO struct {
	rc syscall.RawConn

	// The call in progress, for readFn and writeFn, which are made once: a
	// closure made per call would be a heap allocation per request. Read is
	// called by the connection's reader only, writev under conn.wmu.
	rbuf    []byte
	rn      int
	rerrno  syscall.Errno
	iov     []unix.Iovec // writev's vector, reused
	wiov    []unix.Iovec // the part of iov not written yet
	werrno  syscall.Errno
	readFn  func(fd uintptr) bool
	writeFn func(fd uintptr) bool
}

// newSockIO returns nil for a connection without a descriptor (net.Pipe); the
// caller then uses the net.Conn.
func newSockIO(nc net.Conn) *sockIO {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	s := &sockIO{rc: rc}
	s.readFn, s.writeFn = s.readOnce, s.writeOnce
	return s
}

// Read implements io.Reader.
func (s *sockIO) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	s.rbuf, s.rn, s.rerrno = p, 0, 0
	err := s.rc.Read(s.readFn)
	n, errno := s.rn, s.rerrno
	s.rbuf = nil
	switch {
	case err != nil:
		return 0, err
	case errno != 0:
		return 0, &net.OpError{Op: "read", Net: "9p", Err: errno}
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

// readOnce is one try at reading into s.rbuf; false: nothing there yet.
func (s *sockIO) readOnce(fd uintptr) bool {
	for {
		r, _, e := unix.RawSyscall(unix.SYS_READ, fd, uintptr(unsafe.Pointer(&s.rbuf[0])), uintptr(len(s.rbuf)))
		switch e {
		case unix.EINTR:
			continue
		case unix.EAGAIN:
			return false
		}
		s.rn, s.rerrno = int(r), e
		return true
	}
}

// Write writes all of p.
func (s *sockIO) Write(p []byte) (int, error) {
	return len(p), s.writev(p)
}

// writev writes all of bufs, in one system call unless the socket takes less.
func (s *sockIO) writev(bufs ...[]byte) error {
	s.iov = s.iov[:0]
	for _, b := range bufs {
		if len(b) > 0 {
			v := unix.Iovec{Base: &b[0]}
			v.SetLen(len(b))
			s.iov = append(s.iov, v)
		}
	}
	s.wiov, s.werrno = s.iov, 0
	err := s.rc.Write(s.writeFn)
	errno := s.werrno
	clear(s.iov) // drop references to the callers' buffers
	s.wiov = nil
	if err != nil {
		return err
	}
	if errno != 0 {
		return &net.OpError{Op: "write", Net: "9p", Err: errno}
	}
	return nil
}

// writeOnce writes what it can of s.wiov; false: the socket is full.
func (s *sockIO) writeOnce(fd uintptr) bool {
	for len(s.wiov) > 0 {
		iov := s.wiov
		r, _, e := unix.RawSyscall(unix.SYS_WRITEV, fd, uintptr(unsafe.Pointer(&iov[0])), uintptr(len(iov)))
		switch e {
		case 0:
		case unix.EINTR:
			continue
		case unix.EAGAIN:
			return false
		default:
			s.werrno = e
			return true
		}
		// Drop what was written: whole buffers, then the front of one.
		n := uint64(r)
		for len(iov) > 0 && n >= iov[0].Len {
			n -= iov[0].Len
			iov = iov[1:]
		}
		if n > 0 {
			iov[0].Base = (*byte)(unsafe.Add(unsafe.Pointer(iov[0].Base), n))
			iov[0].Len -= n
		}
		s.wiov = iov
	}
	return true
}
