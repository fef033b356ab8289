package nfs

import (
	"encoding/binary"
	"errors"
	"io"
	"time"
)

// Record marking (RFC 5531 11): reading one call record whole from the
// socket, its fragments joined, within the connection's limits.

const (
	lastFragment = 1 << 31
	// maxRecord bounds a call record, all its fragments together: go-nfs decodes
	// a WRITE's data into memory whole, and FSINFO advertises 1 MiB transfers
	// (see rewriteReply).
	maxRecord = 4 << 20
	// maxFragments bounds the fragments of one record (clients send one): a
	// stream of empty fragments would otherwise be read four bytes at a time
	// until the body timeout.
	maxFragments = 64
	// recordChunk is the most a record buffer grows ahead of the bytes that
	// have arrived, so a record mark that promises megabytes costs nothing
	// until they come.
	recordChunk = 64 << 10
	// readBuffer is the socket read buffer of a connection (rpcConn.rd).
	readBuffer = 16 << 10
	// maxTransfer is the rtmax/wtmax/rtpref/wtpref FSINFO advertises instead of
	// go-nfs's 1 GiB, as Linux's nfsd does.
	maxTransfer = 1 << 20
)

// errRecordTooLarge: a record over maxRecord (or in too many fragments) is no
// call this server would serve, and skipping it would mean reading it.
var errRecordTooLarge = errors.New("nfs: call record too large or in too many fragments; closing the connection")

// readRecord reads the next call record whole, its fragments joined, and
// returns it with 4 bytes of room in front for the record mark go-nfs will see.
// Reads wait at most the idle timeout for the record's first byte, then the
// body timeout for all the rest. A deadline is set only where a read may wait
// for it: none for a first byte already buffered, none for a record whose rest
// is (a small call arrives whole in one read; each setting is a clock read and
// a runtime timer change, 3 % of a GETATTR's CPU).
func (c *rpcConn) readRecord() ([]byte, error) {
	if c.rd.Buffered() == 0 {
		c.setReadDeadline(c.idle)
	}
	var mark [4]byte
	n, err := io.ReadAtLeast(c.rd, mark[:], 1)
	if err != nil {
		return nil, err // io.EOF between records: a clean close
	}
	if !c.restBuffered(mark[:n]) {
		c.setReadDeadline(c.body)
	}
	buf := c.rstore[:4]
	for frag := 0; ; frag++ {
		if _, err := io.ReadFull(c.rd, mark[n:]); err != nil {
			return nil, unexpected(err)
		}
		n = 0
		m := binary.BigEndian.Uint32(mark[:])
		size := int(m &^ lastFragment)
		if frag >= maxFragments || len(buf)-4+size > maxRecord {
			return nil, errRecordTooLarge
		}
		buf, err = appendRead(c.rd, buf, size)
		c.rstore = buf
		if err != nil {
			return nil, unexpected(err)
		}
		if m&lastFragment != 0 {
			return buf, nil
		}
	}
}

func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// restBuffered reports whether the rest of a one-fragment record whose mark
// begins with have is in the read buffer already.
func (c *rpcConn) restBuffered(have []byte) bool {
	need := 4 - len(have)
	if c.rd.Buffered() < need {
		return false
	}
	rest, err := c.rd.Peek(need) // buffered: does not read
	if err != nil {
		return false
	}
	var mark [4]byte
	copy(mark[copy(mark[:], have):], rest)
	m := binary.BigEndian.Uint32(mark[:])
	return m&lastFragment != 0 && c.rd.Buffered()-need >= int(m&^lastFragment)
}

// setReadDeadline bounds the next reads by d from now (d <= 0: no bound).
func (c *rpcConn) setReadDeadline(d time.Duration) {
	var t time.Time
	if d > 0 {
		t = time.Now().Add(d)
	}
	_ = c.Conn.SetReadDeadline(t)
}

// appendRead appends n bytes read from r to buf. buf grows no faster than the
// bytes arrive (at most recordChunk or its own size ahead of them).
func appendRead(r io.Reader, buf []byte, n int) ([]byte, error) {
	for n > 0 {
		if len(buf) == cap(buf) {
			nb := make([]byte, len(buf), len(buf)+min(n, max(len(buf), recordChunk)))
			copy(nb, buf)
			buf = nb
		}
		k := min(n, cap(buf)-len(buf))
		got, err := io.ReadFull(r, buf[len(buf):len(buf)+k])
		buf = buf[:len(buf)+got]
		n -= got
		if err != nil {
			return buf, err
		}
	}
	return buf, nil
}

// grow returns b resized to n bytes, reusing its array when it is big enough.
func grow(b []byte, n int) []byte {
	if cap(b) >= n {
		return b[:n]
	}
	nb := make([]byte, n, max(n, 2*cap(b)))
	copy(nb, b)
	return nb
}
