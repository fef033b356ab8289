package ninep

import (
	"encoding/binary"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hugelgupf/p9/linux"
)

// Bounds on what arrives from the wire.
//
// Every size and count a client sends is bounded before anything is allocated
// by it, by the shim or by p9 behind it (p9 v0.4.1, read in its source):
//
//   - size[4]: at least the 7-byte header, at most the msize the connection
//     negotiated (before Tversion: Options.MaxMsize). Else the framing cannot
//     be trusted: the connection is closed, with a log line. p9's own receive
//     loop also refuses sizes over its msize, but only after the shim has
//     looked at the message.
//   - Only a Tversion p9 accepts (9P2000.L, msize > 0) negotiates; anything
//     else before it closes the connection. p9 sizes its per-connection read
//     buffers at Tversion, and a Tread before them panics inside p9: nothing
//     is handed to p9 after a Tversion until its reply starts (conn.versioning).
//   - Tread and Treaddir count[4]: clamped to msize minus the reply's header,
//     as the Linux client and p9's buffers assume (p9 slices its msize-sized
//     read buffer by the count: a larger one panicked, answered EFAULT).
//   - Twalk and p9's Twalkgetattr nwname[2]: at most 16 (Linux's
//     P9_MAXWELEM); more is answered Rlerror EINVAL, the message skipped (its
//     framing is intact). p9 would decode and walk any number.
//   - tag[2] of a request p9 has in flight: the request is dropped
//     unanswered, as p9 drops it (tags.go), with a log line.
//   - Tflush oldtag[2] naming itself or another Tflush in flight: answered
//     Rflush at once. p9 waits for the flushed tag's reply inside the Tflush's
//     own handler, so either never ends, and the connection, its goroutines
//     and its descriptor would then outlive the client forever.
//   - Twrite count[4] that disagrees with the message size, strings whose
//     length prefix runs past the message, and every other field: p9 decodes
//     them inside the message's own bytes (never allocating more than the
//     message) and refuses what overruns; the shim's own decoders (wireReader,
//     the fast path's fixed fields) check every length against the message too.
//
// Messages the shim decodes whole itself (control) are malformed when their
// strings overrun: the connection is closed. Everything p9 can refuse safely
// it refuses its own way, so replies stay p9's, byte for byte.

// maxWalkElems is the most names a Twalk may carry (Linux's P9_MAXWELEM).
const maxWalkElems = 16

const (
	msgRflush       = 109
	rreaddirFixed   = headerLen + 4  // size type tag count
	countOffset     = headerLen + 12 // Tread, Treaddir: fid[4] offset[8] count[4]
	walkNamesOffset = headerLen + 8  // Twalk: fid[4] newfid[4] nwname[2]
	logEvery        = time.Second
	logBurst        = 5
)

// frameLimit is the largest message the next read may carry.
func (c *conn) frameLimit() int {
	if m := c.msize.Load(); m != 0 {
		return int(m)
	}
	return int(c.srv.msize)
}

// bound applies the bounds above to the request whose header is buffered. It
// reports whether it consumed the request (answered it); a non-nil error closes
// the connection.
func (c *conn) bound(typ uint8, tag uint16, size int) (bool, error) {
	if size < headerLen {
		return true, c.malformed("size below the 7-byte header", "size", size)
	}
	if lim := c.frameLimit(); size > lim {
		return true, c.malformed("size above the msize", "size", size, "msize", lim)
	}
	if typ != msgTversion && c.msize.Load() == 0 {
		return true, c.malformed("request before Tversion", "type", typ)
	}
	if c.p9tags.reused(tag) {
		return true, c.dropReused(typ, tag, size)
	}
	switch typ {
	case msgTread, msgTreaddir:
		if size < countOffset+4 {
			return false, nil // p9 refuses it: the fields overrun the message
		}
		b, err := c.br.Peek(countOffset + 4)
		if err != nil {
			return false, nil // the reader sees the same error
		}
		fixed := rreadFixed
		if typ == msgTreaddir {
			fixed = rreaddirFixed
		}
		limit := uint32(max(int(c.msize.Load())-fixed, 0))
		if binary.LittleEndian.Uint32(b[countOffset:]) > limit {
			// Rewritten in the reader's buffer, where the fast path and p9
			// both read it next (Peek returns a window into that buffer).
			binary.LittleEndian.PutUint32(b[countOffset:], limit)
		}
	case msgTflush:
		if size < headerLen+2 {
			return false, nil
		}
		b, err := c.br.Peek(headerLen + 2)
		if err != nil {
			return false, nil
		}
		if !c.startFlush(tag, binary.LittleEndian.Uint16(b[headerLen:])) {
			return c.answer(size, newMessage(msgRflush, tag).finish())
		}
	case msgTwalk, msgTwalkgetattr:
		if size < walkNamesOffset+2 {
			return false, nil
		}
		b, err := c.br.Peek(walkNamesOffset + 2)
		if err != nil {
			return false, nil
		}
		if n := binary.LittleEndian.Uint16(b[walkNamesOffset:]); n > maxWalkElems {
			return c.answer(size, rlerror(tag, uint32(linux.EINVAL)))
		}
	}
	return false, nil
}

// acceptedVersion reports whether p9 negotiates this Tversion (its
// parseVersion, and msize > 0): only then has it made the per-connection
// buffers requests need.
func acceptedVersion(msize uint32, version string) bool {
	if msize == 0 {
		return false
	}
	if version == "9P2000.L" {
		return true
	}
	p := strings.Split(version, ".")
	if len(p) != 4 || p[0] != "9P2000" || p[1] != "L" || p[2] != "Google" || p[3] == "" {
		return false
	}
	_, err := strconv.ParseUint(p[3], 10, 32)
	return err == nil
}

// malformed logs why the connection is being closed and returns the error that
// closes it.
func (c *conn) malformed(why string, args ...any) error {
	if ok, held := c.srv.logLimit.allow(); ok {
		c.srv.log.Warn("ninep: malformed 9P message; closing the connection",
			append([]any{"remote", c.nc.RemoteAddr().String(), "why", why, "similar_lines_held_back", held}, args...)...)
	}
	return errMalformed
}

// rateLimit lets a burst of log lines through per interval and counts the
// rest, so that a flood of hostile connections cannot flood the log.
type rateLimit struct {
	mu    sync.Mutex
	start time.Time
	n     int
	held  int
}

// allow reports whether one more line may be logged now, and how many were
// held back since the last one that was.
func (r *rateLimit) allow() (bool, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := time.Now()
	if now.Sub(r.start) >= logEvery {
		r.start, r.n = now, 0
	}
	r.n++
	if r.n > logBurst {
		r.held++
		return false, 0
	}
	held := r.held
	r.held = 0
	return true, held
}

// startFlush records a Tflush p9 is to handle, unless it would wait forever
// there (see above): it reports whether the Tflush may go to p9.
func (c *conn) startFlush(tag, oldtag uint16) bool {
	c.gmu.Lock()
	defer c.gmu.Unlock()
	if _, ok := c.flushes[oldtag]; ok || oldtag == tag {
		return false
	}
	if c.flushes == nil {
		c.flushes = map[uint16]struct{}{}
	}
	c.flushes[tag] = struct{}{}
	c.srv.flushes.Add(1)
	return true
}

// replyStarts forgets a Tflush in flight when p9's reply to its tag starts.
func (c *conn) replyStarts(tag uint16) {
	c.gmu.Lock()
	if len(c.flushes) > 0 {
		delete(c.flushes, tag)
	}
	c.gmu.Unlock()
}
