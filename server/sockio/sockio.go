// Package sockio does a connection's socket reads and writes with raw system
// calls, for the protocol front ends (ninep, nfs) answering requests on the
// goroutine that reads their connection.
package sockio

import (
	"errors"
	"io"
	"net"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Conn does a connection's socket reads and writes with raw system calls, on
// the descriptor Go's poller holds (syscall.RawConn): a read or write that would
// block still parks the goroutine in the poller, as net.Conn's would, and the
// connection's deadlines (SetReadDeadline, SetWriteDeadline) and Close end that
// wait as they end net.Conn's (the poller's errors: os.ErrDeadlineExceeded,
// net.ErrClosed).
//
// Why not net.Conn's own: every system call made the usual way tells the Go
// scheduler it is entering one, and the first such call after all Ps were idle
// wakes the runtime's monitor thread (sysmon), which then polls on 20 µs sleeps
// until everything is idle again. A client that sends one request at a time
// (a 9P mount, an NFS client's lone process stat-ing a file) makes that every
// request: a futex wake-up, a few nanosleeps and a thread switch on the CPUs
// the client needs. The socket I/O here, the core's inline stats
// (server.FS.LstatInline, server.File.StatInline) and its page-cache reads
// (server.File.ReadAtCached) make no such call, so a request answered with
// only those (9P's Tgetattr, a ghost's Twalk, a cached Tread; NFS's GETATTR,
// LOOKUP, ACCESS and cached READ answered inline) leaves the monitor asleep.
// Calls that may wait on the disk (creates, a written file's close, a write
// that must sync) still tell the scheduler.
// Measured on a 2-vCPU VM, 9P's Tgetattr answered by the shim (integration/
// bench/ninep/RESULTS.md): 58-62 → 37-39 µs with client and server pinned to
// one CPU, 83-90 → 53-58 µs pinned to two, server CPU per request 39 → 21 µs;
// unpinned, the rounds at 85-115 µs (the server's thread placed away from the
// client's) are gone. NFS's GETATTR: see docs/benchmarks-history.md, "NFS
// GETATTR latency and lone READs".
//
// The socket calls made this way never block: the socket is non-blocking, and
// EAGAIN hands the wait to the poller.
//
// A connection without a descriptor (net.Pipe, in tests) gets the same
// methods through its net.Conn, so that callers need no second path.
//
// Read may run beside Write and Writev; Writes must be serialised by the
// caller, and so must Reads.
type Conn struct {
	rc  syscall.RawConn // nil: no descriptor, nc's own methods
	nc  net.Conn
	net string // for errors: the connection's network ("tcp", "unix")
	// vec is Writev's vector without a descriptor, kept here so that handing
	// it to the socket (an interface call, so it escapes) allocates nothing.
	vec net.Buffers

	// The call in progress, for readFn and writeFn, which are made once: a
	// closure made per call would be a heap allocation per request.
	rbuf    []byte
	rn      int
	rerrno  syscall.Errno
	iov     []unix.Iovec // writev's vector, reused
	wiov    []unix.Iovec // the part of iov not written yet
	werrno  syscall.Errno
	readFn  func(fd uintptr) bool
	writeFn func(fd uintptr) bool
	sf      sendState // SendFile's call in progress
	sendFn  func(fd uintptr) bool
	// copyOnly makes SendFile read and write as it does when sendfile
	// refuses a file: for tests of that path, which no file of a test's
	// file system takes.
	copyOnly bool
}

// New returns nc's reads and writes as raw system calls on its descriptor, or
// through nc itself when it has none (net.Pipe).
func New(nc net.Conn) *Conn {
	s := &Conn{nc: nc, net: nc.LocalAddr().Network()}
	if sc, ok := nc.(syscall.Conn); ok {
		if rc, err := sc.SyscallConn(); err == nil {
			s.rc = rc
		}
	}
	s.readFn, s.writeFn, s.sendFn = s.readOnce, s.writeOnce, s.sendOnce
	return s
}

// Read implements io.Reader.
func (s *Conn) Read(p []byte) (int, error) {
	if s.rc == nil {
		return s.nc.Read(p)
	}
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
		return 0, &net.OpError{Op: "read", Net: s.net, Err: errno}
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

// readOnce is one try at reading into s.rbuf; false: nothing there yet.
func (s *Conn) readOnce(fd uintptr) bool {
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

// Write writes all of p: n is len(p) unless err is set.
func (s *Conn) Write(p []byte) (int, error) {
	if err := s.Writev(p); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Writev writes all of bufs, in one system call unless the socket takes less.
func (s *Conn) Writev(bufs ...[]byte) error {
	if s.rc == nil {
		s.vec = append(s.vec[:0], bufs...)
		v := s.vec // WriteTo consumes the slice it is given; keep s.vec's start
		_, err := v.WriteTo(s.nc)
		clear(s.vec) // drop references to the callers' buffers
		return err
	}
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
		return &net.OpError{Op: "write", Net: s.net, Err: errno}
	}
	return nil
}

// writeOnce writes what it can of s.wiov; false: the socket is full.
func (s *Conn) writeOnce(fd uintptr) bool {
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

// ErrNoDescriptor: SendFile needs the socket's descriptor, and this
// connection has none (net.Pipe); nothing was written.
var ErrNoDescriptor = errors.New("sockio: connection has no descriptor to send a file on")

// SendFile writes hdr, then n bytes of the regular file open as fd from off,
// then trailer, as one stream with no other write between (the caller
// serialises writes, as for Write). The file's bytes go from the page cache
// to the socket by sendfile(2), without the two copies through a user buffer
// (pread, then write) that Write of the same bytes costs. The header is sent
// with MSG_MORE so that it leaves in the same segment as the data's start.
//
// The caller has promised n bytes in hdr, so n bytes are sent whatever the
// file does meanwhile: if it ends early (truncated after the caller looked at
// its size), the rest is zeros and short is true. An error after hdr was
// written leaves the stream mid-record: the caller must close the connection.
// A file sendfile refuses (EINVAL, ENOSYS: a file system without splice
// support) is read with pread into a buffer instead.
//
// sendfile and pread are raw system calls, as Write's are: the caller makes
// sure the data is in the page cache (server.File.SendCached), or accepts
// that the disk read holds its thread.
func (s *Conn) SendFile(hdr []byte, fd int, off int64, n int, trailer []byte) (short bool, err error) {
	if s.rc == nil {
		return false, ErrNoDescriptor
	}
	s.sf = sendState{hdr: hdr, src: fd, off: off, left: n, trailer: trailer, copy: s.copyOnly}
	werr := s.rc.Write(s.sendFn)
	st := s.sf
	s.sf = sendState{}
	if werr != nil {
		return st.zeros, werr
	}
	if st.errno != 0 {
		return st.zeros, &net.OpError{Op: "sendfile", Net: s.net, Err: st.errno}
	}
	return st.zeros, nil
}

// sendState is SendFile's call in progress, for sendOnce.
type sendState struct {
	hdr     []byte
	src     int
	off     int64
	left    int
	trailer []byte
	copy    bool // sendfile refused the file: pread and write instead
	zeros   bool // the file ended early: zeros sent in its place
	errno   syscall.Errno
	buf     []byte // copy's and zeros' buffer
}

// sendOnce sends what it can of s.sf; false: the socket is full.
func (s *Conn) sendOnce(fd uintptr) bool {
	st := &s.sf
	more := uintptr(unix.MSG_MORE) // the header leaves with the data's start
	if st.left == 0 && len(st.trailer) == 0 {
		more = 0
	}
	if done, ok := s.sendBytes(fd, &st.hdr, more); done {
		return ok
	}
	for st.left > 0 {
		var r uintptr
		var e syscall.Errno
		switch {
		case st.zeros:
			r, e = send(fd, st.buf[:min(st.left, len(st.buf))], 0)
		case st.copy:
			if st.buf == nil {
				st.buf = make([]byte, sendCopyBuf)
			}
			got, _, pe := unix.RawSyscall6(unix.SYS_PREAD64, uintptr(st.src), uintptr(unsafe.Pointer(&st.buf[0])), uintptr(min(st.left, len(st.buf))), uintptr(st.off), 0, 0)
			switch {
			case pe == unix.EINTR:
				continue
			case pe != 0:
				st.errno = pe
				return true
			case got == 0:
				st.zeroFill()
				continue
			}
			r, e = send(fd, st.buf[:got], 0)
		default:
			off := st.off
			r, _, e = unix.RawSyscall6(unix.SYS_SENDFILE, fd, uintptr(st.src), uintptr(unsafe.Pointer(&off)), uintptr(st.left), 0, 0)
			switch {
			case e == unix.EINVAL || e == unix.ENOSYS || e == unix.EOPNOTSUPP:
				st.copy = true
				continue
			case e == 0 && r == 0:
				st.zeroFill() // the file ended before off+left
				continue
			}
		}
		if e == unix.EINTR {
			continue
		}
		if e != 0 {
			return s.stop(e)
		}
		st.off += int64(r)
		st.left -= int(r)
	}
	done, ok := s.sendBytes(fd, &st.trailer, 0)
	return !done || ok
}

// zeroFill switches the send to zeros for the rest of the promised bytes.
func (st *sendState) zeroFill() {
	st.zeros = true
	if st.buf == nil {
		st.buf = make([]byte, sendCopyBuf)
	}
	clear(st.buf)
}

// sendBytes sends what it can of *b, dropping what went. done: sendOnce stops
// now and returns ok (see stop); else all of *b went.
func (s *Conn) sendBytes(fd uintptr, b *[]byte, flags uintptr) (done, ok bool) {
	for len(*b) > 0 {
		r, e := send(fd, *b, flags)
		if e == unix.EINTR {
			continue
		}
		if e != 0 {
			return true, s.stop(e)
		}
		*b = (*b)[r:]
	}
	return false, false
}

// send is one raw send(2) of b (non-empty) with flags and MSG_NOSIGNAL.
func send(fd uintptr, b []byte, flags uintptr) (uintptr, syscall.Errno) {
	r, _, e := unix.RawSyscall6(unix.SYS_SENDTO, fd, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), flags|unix.MSG_NOSIGNAL, 0, 0)
	return r, e
}

// stop ends sendOnce on a failed send (e, not EINTR): false to wait for room
// on EAGAIN, else true with the failure recorded.
func (s *Conn) stop(e syscall.Errno) bool {
	if e == unix.EAGAIN {
		return false
	}
	s.sf.errno = e
	return true
}

// sendCopyBuf is the buffer SendFile reads through when sendfile refuses the
// file, and sends zeros from when the file ends early.
const sendCopyBuf = 64 << 10

// CanSendFile says SendFile can send on this connection (it has a descriptor).
func (s *Conn) CanSendFile() bool { return s.rc != nil }
