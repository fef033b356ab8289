package ninep

import (
	"encoding/binary"

	"github.com/semfs/semfs/server"
)

// Ghosts: fids the shim walked itself and p9 has not heard of.
//
// `ls -l` on a mount, and every stat on a cache=none one, is Twalk, Tgetattr,
// Tclunk per entry. The fast path answers the last two; the Twalk went to p9,
// whose per-message goroutine hand-off made listing the one request pattern
// slower than diod. So a Twalk of up to sixteen names (none: a clone, as
// before every open and create) from a fid p9 knows is answered here: the shim walks with the same file.walk p9's handler would
// call, answers Rwalk, and keeps the new fid as a ghost. Tgetattr on a ghost is
// answered from its *file, and its Tclunk drops it; p9 never hears of either.
//
// Any other request naming a ghost makes p9 learn it first: the shim hands p9
// the same Twalk (from the same source fid, with the tag of the request waiting
// for it, which the client cannot reuse meanwhile), drops p9's reply, and binds
// the fid to the *file p9 made, as for any walk it watches. Only then does the
// request itself go on. So do renames and unlinks on the connection, after
// every ghost has been made known, since p9 updates the fids it knows under
// what they change.
//
// If p9 cannot make a ghost known (its source fid was clunked or replaced since,
// or the tree changed in between and the walk fails), the fid becomes an
// orphan: the client was told it exists, so requests naming it get ESTALE, as
// for a file that went away under an NFS handle, and its clunk succeeds.

// ghost is a fid the shim walked and p9 does not know.
type ghost struct {
	f      *file    // the walk's result, answering Tgetattr
	from   uint32   // the fid it was walked from
	src    *file    // p9's *file for from at the time; p9 walks again only from it
	names  []string // the walk, to send p9 when it must learn the fid
	shadow bool     // p9 still holds a stale reference under this fid (deferClunk)
}

// maxWalkNames is the most names one Twalk carries (Linux's P9_MAXWELEM).
const maxWalkNames = 16

// ghostWalk answers a buffered Twalk as a ghost, if it can (see above): it
// reports whether it consumed the request.
func (c *conn) ghostWalk(tag uint16, size int) (bool, error) {
	if size > readBuffer {
		return false, nil
	}
	b, err := c.br.Peek(size)
	if err != nil {
		return false, nil
	}
	r := wireReader{b: b[headerLen:]}
	fid, newfid, n := r.u32(), r.u32(), int(r.u16())
	if r.bad || n > maxWalkNames || fid == newfid {
		return false, nil
	}
	names := make([]string, n)
	for i := range names {
		// The core's check is stricter than p9's: a name either refuses is
		// left to p9, which answers it its own way.
		if names[i] = r.str(); server.CheckName("walk", names[i]) != nil {
			return false, nil
		}
	}
	if r.bad || len(r.b) != 0 {
		return false, nil
	}
	// No waiting for a walk or create p9 is handling: this walk reports
	// nothing to it (file.child), so the two cannot be confused.
	c.fmu.Lock()
	src, known := c.fs.fids[fid]
	_, live := c.fs.fids[newfid]
	off := c.fs.off
	c.fmu.Unlock()
	if !known || live || off {
		// A fid p9 does not hold as a ghost's source, or a newfid it holds
		// live (the client reusing a fid in use): p9 decides.
		return false, nil
	}
	qids, child, _, err := src.walk(names, false, false)
	if err != nil {
		return false, nil // p9 walks it again and answers its own way
	}
	c.fmu.Lock()
	if c.fs.ghosts == nil {
		c.fs.ghosts = map[uint32]*ghost{}
	}
	_, shadow := c.fs.deferred[newfid]
	if c.fs.orphans[newfid] {
		shadow = true
	}
	delete(c.fs.deferred, newfid)
	delete(c.fs.orphans, newfid)
	c.fs.ghosts[newfid] = &ghost{f: child, from: fid, src: src, names: names, shadow: shadow}
	c.fmu.Unlock()

	w := append(c.ohdr[:0], 0, 0, 0, 0, msgRwalk, 0, 0)
	binary.LittleEndian.PutUint16(w[5:], tag)
	w = binary.LittleEndian.AppendUint16(w, uint16(len(qids)))
	for _, q := range qids {
		w = append(w, uint8(q.Type))
		w = binary.LittleEndian.AppendUint32(w, q.Version)
		w = binary.LittleEndian.AppendUint64(w, q.Path)
	}
	binary.LittleEndian.PutUint32(w, uint32(len(w)))
	return c.answer(size, w)
}

// materialize has p9 learn ghost fid before the buffered request (whose tag the
// shim's Twalk borrows) goes on; the request stays buffered and is looked at
// again once p9 has answered. It reports true: Read is to hand p9 c.out.
func (c *conn) materialize(fid uint32, tag uint16) bool {
	c.awaitIdle()
	c.fmu.Lock()
	defer c.fmu.Unlock()
	g := c.fs.ghosts[fid]
	if g == nil {
		return true // gone meanwhile: look at the request again
	}
	delete(c.fs.ghosts, fid)
	if c.fs.off || c.fs.fids[g.from] != g.src {
		// p9 no longer holds the source the ghost was walked from.
		if c.fs.orphans == nil {
			c.fs.orphans = map[uint32]bool{}
		}
		c.fs.orphans[fid] = g.shadow
		return true
	}
	c.fs.mk = &making{tag: tag, fid: fid, early: true, shadow: g.shadow, done: make(chan struct{})}
	w := newMessage(msgTwalk, tag)
	w.u32(g.from)
	w.u32(fid)
	w.b = binary.LittleEndian.AppendUint16(w.b, uint16(len(g.names)))
	for _, n := range g.names {
		w.str(n)
	}
	c.out = w.finish()
	return true
}

// anyGhost returns some ghost's fid.
func (c *conn) anyGhost() (uint32, bool) {
	c.fmu.Lock()
	defer c.fmu.Unlock()
	for fid := range c.fs.ghosts {
		return fid, true
	}
	return 0, false
}

// dropGhost forgets a ghost the client clunked. Precondition: c.fmu held.
func (c *conn) dropGhost(fid uint32) {
	g := c.fs.ghosts[fid]
	delete(c.fs.ghosts, fid)
	if g != nil && g.shadow {
		c.deferLocked(fid)
	}
}

// dropOrphan forgets an orphan the client clunked or removed. Precondition:
// c.fmu held.
func (c *conn) dropOrphan(fid uint32) {
	shadow := c.fs.orphans[fid]
	delete(c.fs.orphans, fid)
	delete(c.fs.fids, fid)
	if shadow {
		c.deferLocked(fid)
	}
}

// deferLocked records that p9 holds a stale fid the client has let go (see
// deferClunk). Precondition: c.fmu held.
func (c *conn) deferLocked(fid uint32) {
	if c.fs.deferred == nil {
		c.fs.deferred = map[uint32]struct{}{}
	}
	c.fs.deferred[fid] = struct{}{}
}
