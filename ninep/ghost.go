package ninep

import (
	"encoding/binary"
	"io"

	"github.com/hugelgupf/p9/linux"
	"github.com/hugelgupf/p9/p9"
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
// The fid a ghost was walked from must still be p9's when p9 walks it again,
// so a request that takes that fid from p9 or replaces it there (its Tclunk,
// Tremove, a Tlcreate on it, a walk or attach onto it) first has p9 learn every
// ghost walked from it (dependent): clone a fid, walk the clone, clunk the
// clone, then use the walked fid is a valid sequence. If p9 still cannot make
// a ghost known (the tree changed in between and the walk fails, or the shim
// gave up tracking fids, makeWait), the fid becomes an orphan: the client was
// told it exists, so requests naming it get ESTALE, as for a file that went
// away under an NFS handle, and its clunk succeeds.
//
// Creates and opens. Linux creates a file as a clone walk of the directory's
// fid, a Tlcreate on the clone, the writes, a Tclunk; it opens one as a clone
// walk of the file's fid, a Tlopen, the reads or writes, a Tclunk. Every one of
// them is answered here. The Tlcreate on a ghost directory is made with the
// same file.create p9's handler calls, if the core can do it without waiting
// (server.FS.TryCreate; else the ghost is made known and p9 creates, waiting in
// a goroutine of its own); the Tlopen of a ghost regular file, without O_TRUNC
// (which waits for a snapshot), with the same file.Open. The ghost is then an
// open one: its Tread, Twrite and Tgetattr are the fast path's (a read from the
// disk or a write held by a snapshot is answered by a goroutine, see later),
// and its Tclunk closes the file here (server.File.TryClose; if the file's
// update cannot be sent at once, the close and the Rclunk come from a
// goroutine). Made known to p9, it takes two steps, both with the waiting
// request's tag and both replies dropped: the walk as for any ghost, then the
// same Tlcreate or Tlopen, which file.Create or file.Open answers with the
// ghost's open file (adoption) instead of creating or opening anything. p9 then
// holds exactly what it would have held had it answered the request itself,
// the very descriptor included, so a file unlinked meanwhile stays usable. (A
// ghost opened after a walk by name, not a clone, whose file is then unlinked
// by another client is an orphan once p9 must learn it: its walk fails. Linux
// opens clones.)

// ghost is a fid the shim walked and p9 does not know.
type ghost struct {
	f      *file    // the walk's result, answering Tgetattr
	from   uint32   // the fid it was walked from
	src    *file    // p9's *file for from at the time; p9 walks again only from it
	names  []string // the walk, to send p9 when it must learn the fid
	shadow bool     // p9 still holds a stale reference under this fid (deferClunk)
	opened *opening // the Tlcreate or Tlopen the shim answered on the fid; f is then open
}

// opening is how the shim opened a ghost's file: a Tlcreate (create: its fields
// after the fid) or a Tlopen (its flags).
type opening struct {
	create           bool
	name             string
	flags, mode, gid uint32
}

// adoptSlot is the shim's Tlcreate or Tlopen in flight: file.Create on at (the
// directory) or file.Open on at (the file p9 walked to) answers it with f's open
// file (see adoption).
type adoptSlot struct {
	at   *file
	open bool
	name string
	f    *file
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
	_, shadow := c.fs.deferred[newfid]
	if c.fs.orphans[newfid] {
		shadow = true
	}
	delete(c.fs.deferred, newfid)
	delete(c.fs.orphans, newfid)
	c.discardLocked(c.delGhostLocked(newfid)) // a walk onto a fid in use replaces it, as in p9
	c.setGhostLocked(newfid, &ghost{f: child, from: fid, src: src, names: names, shadow: shadow})
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
	g := c.delGhostLocked(fid)
	if g == nil {
		return true // gone meanwhile: look at the request again
	}
	if c.fs.off || c.fs.fids[g.from] != g.src {
		// p9 no longer holds the source the ghost was walked from.
		c.orphanLocked(fid, g.shadow)
		c.discardLocked(g)
		return true
	}
	if g.opened != nil {
		// Created here: the Tlcreate follows once p9 has walked (adopt).
		if c.fs.adopting == nil {
			c.fs.adopting = map[uint32]*ghost{}
		}
		c.fs.adopting[fid] = g
	}
	c.fs.mk = &making{tag: tag, fid: fid, early: true, shadow: g.shadow, id: g.f.id.Load(), done: make(chan struct{})}
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

// ghostCreate answers a buffered Tlcreate on ghost directory g (see Creates
// above), if the shim can: it reports whether it consumed the request. What it
// leaves (a name the core's check refuses, a fid p9 would refuse to create in, a
// create that would wait) p9 answers, once the ghost is known to it.
func (c *conn) ghostCreate(g *ghost, tag uint16, size int) (bool, error) {
	// p9 refuses a create from a fid not a directory or an open one; the shim
	// leaves those to it, and a directory it does not know to be one.
	if size > readBuffer || g.opened != nil || !g.f.kind.IsDir() || g.f.dirOpen.Load() || g.f.open.Load() != nil {
		return false, nil
	}
	b, err := c.br.Peek(size)
	if err != nil {
		return false, nil
	}
	r := wireReader{b: b[headerLen:]}
	r.u32()
	var lc opening
	lc.name, lc.flags, lc.mode, lc.gid = r.str(), r.u32(), r.u32(), r.u32()
	if r.bad || len(r.b) != 0 || server.CheckName("create", lc.name) != nil {
		return false, nil
	}
	// p9 masks the mode to permissions as it decodes it.
	nf, qid, ok, err := g.f.tryCreate(lc.name, p9.OpenFlags(lc.flags), p9.FileMode(lc.mode).Permissions(), p9.GID(lc.gid))
	if !ok {
		return false, nil
	}
	if err != nil {
		// The fid stays the directory, as after p9's failed Tlcreate.
		return c.answer(size, rlerror(tag, uint32(linux.ExtractErrno(err))))
	}
	c.fmu.Lock()
	g.f, g.opened = nf, &opening{create: true, name: lc.name, flags: lc.flags, mode: lc.mode, gid: lc.gid}
	c.fmu.Unlock()
	return c.answer(size, c.ropened(msgRlcreate, tag, qid))
}

// ropened encodes an Rlopen or Rlcreate (the same body) in c.ohdr, with the
// iounit 0 that file.Open and file.Create give.
func (c *conn) ropened(typ uint8, tag uint16, qid p9.QID) []byte {
	w := append(c.ohdr[:0], 0, 0, 0, 0, typ, 0, 0)
	binary.LittleEndian.PutUint16(w[5:], tag)
	w = append(w, uint8(qid.Type))
	w = binary.LittleEndian.AppendUint32(w, qid.Version)
	w = binary.LittleEndian.AppendUint64(w, qid.Path)
	w = binary.LittleEndian.AppendUint32(w, 0)
	binary.LittleEndian.PutUint32(w, uint32(len(w)))
	return w
}

// ghostOpen answers a buffered Tlopen of ghost g, a regular file, if the shim
// can: it reports whether it consumed the request. p9's refusals (an open fid, a
// directory, a file it does not know to be regular) are left to it, and so is
// O_TRUNC, which waits for a snapshot.
func (c *conn) ghostOpen(g *ghost, tag uint16, size int) (bool, error) {
	if size != headerLen+8 || g.opened != nil || !g.f.kind.IsRegular() || g.f.dirOpen.Load() || g.f.open.Load() != nil {
		return false, nil
	}
	b, err := c.br.Peek(size)
	if err != nil {
		return false, nil
	}
	flags := binary.LittleEndian.Uint32(b[headerLen+4:])
	if flags&dotlTrunc != 0 {
		return false, nil
	}
	qid, _, err := g.f.Open(p9.OpenFlags(flags))
	if err != nil {
		// The fid stays as it was, as after p9's failed Tlopen.
		return c.answer(size, rlerror(tag, uint32(linux.ExtractErrno(err))))
	}
	c.fmu.Lock()
	g.opened = &opening{flags: flags}
	c.fmu.Unlock()
	return c.answer(size, c.ropened(msgRlopen, tag, qid))
}

// clunkGhost answers the Tclunk of a ghost; p9 never hears of it. A created
// ghost's file is closed here, or, when its update cannot be sent without
// waiting, by a goroutine that then answers (later).
func (c *conn) clunkGhost(fid uint32, g *ghost, tag uint16, size int) (bool, error) {
	c.fmu.Lock()
	c.dropGhost(fid)
	c.fmu.Unlock()
	if g.opened == nil {
		return c.answer(size, c.rclunk(tag))
	}
	ok, err := g.f.tryClose()
	if ok {
		if err != nil {
			return c.answer(size, rlerror(tag, uint32(linux.ExtractErrno(err))))
		}
		return c.answer(size, c.rclunk(tag))
	}
	if _, err := c.br.Discard(size); err != nil {
		return true, io.ErrUnexpectedEOF
	}
	c.later(tag, func() []byte {
		if err := g.f.Close(); err != nil {
			return rlerror(tag, uint32(linux.ExtractErrno(err)))
		}
		return newMessage(msgRclunk, tag).finish()
	})
	return true, nil
}

// adoptingFor returns a ghost created here whose walk p9 has made and whose
// Tlcreate it is to hear next (materialize): one the request names, or any at
// all before a rename or unlink.
func (c *conn) adoptingFor(typ uint8, named []uint32) (uint32, *ghost) {
	c.fmu.Lock()
	defer c.fmu.Unlock()
	if len(c.fs.adopting) == 0 {
		return 0, nil
	}
	switch typ {
	case msgTrenameat, msgTrename, msgTunlinkat, msgTremove:
		for fid, g := range c.fs.adopting {
			return fid, g
		}
	}
	for _, fid := range named {
		if g := c.fs.adopting[fid]; g != nil {
			return fid, g
		}
	}
	return 0, nil
}

// adopt sends p9 the second step of making created ghost fid known: the Tlcreate
// the shim answered, on the directory p9 now holds under fid, which file.Create
// answers with the ghost's open file (adoption). It reports true, as
// materialize does.
func (c *conn) adopt(fid uint32, g *ghost, tag uint16) bool {
	c.awaitIdle()
	c.fmu.Lock()
	defer c.fmu.Unlock()
	if c.fs.adopting[fid] != g {
		return true // settled meanwhile: p9 could not walk it (replied)
	}
	delete(c.fs.adopting, fid)
	at := c.fs.fids[fid]
	if at == nil || c.fs.off {
		c.orphanLocked(fid, true)
		c.discardLocked(g)
		return true
	}
	o := g.opened
	c.fs.adopt = &adoptSlot{at: at, open: !o.create, name: o.name, f: g.f}
	// shadow: should p9 refuse, it still holds what it walked to under fid.
	c.fs.mk = &making{tag: tag, fid: fid, early: true, shadow: true, done: make(chan struct{})}
	var w *wireWriter
	if o.create {
		w = newMessage(msgTlcreate, tag)
		w.u32(fid)
		w.str(o.name)
		w.u32(o.flags)
		w.u32(o.mode)
		w.u32(o.gid)
	} else {
		w = newMessage(msgTlopen, tag)
		w.u32(fid)
		w.u32(o.flags)
	}
	c.out = w.finish()
	return true
}

// adoption is file.Create's look for the shim's own Tlcreate (adopt): the
// ghost's open file, if dir and name are the ones it was sent for; it is then
// what the making request made.
func (c *conn) adoption(dir *file, name string) *file {
	c.fmu.Lock()
	defer c.fmu.Unlock()
	a := c.fs.adopt
	if a == nil || a.open || a.at != dir || a.name != name {
		return nil
	}
	c.fs.adopt = nil
	if mk := c.fs.mk; mk != nil {
		mk.made = a.f
	}
	return a.f
}

// openAdoption is file.Open's look for the shim's own Tlopen (adopt): if f is
// the file it was sent for, f takes over the ghost's open file and true is
// returned; f stays what p9 holds for the fid, as its walk made it.
func (c *conn) openAdoption(f *file) bool {
	c.fmu.Lock()
	defer c.fmu.Unlock()
	a := c.fs.adopt
	if a == nil || !a.open || a.at != f {
		return false
	}
	c.fs.adopt = nil
	f.open.Store(a.f.open.Swap(nil))
	f.dirOpen.Store(a.f.dirOpen.Load()) // a file another client replaced by a directory
	if mk := c.fs.mk; mk != nil {
		mk.made = f
	}
	return true
}

// later answers a request on a ghost from a goroutine of its own, with the reply
// fn returns: for the few the shim cannot answer without waiting and p9 cannot
// take, not knowing the fid (a write while a snapshot holds the core, a close
// whose update has no room yet). p9 answers every request that way. A Tflush for
// the tag waits for the reply to be sent first (awaitLater).
func (c *conn) later(tag uint16, fn func() []byte) {
	done := make(chan struct{})
	c.fmu.Lock()
	if c.fs.laters == nil {
		c.fs.laters = map[uint16]chan struct{}{}
	}
	c.fs.laters[tag] = done
	c.fmu.Unlock()
	c.srv.answered.Add(1)
	go func() {
		c.reply(fn()) // an error: the connection is ending, and p9 sees it too
		c.fmu.Lock()
		if c.fs.laters[tag] == done {
			delete(c.fs.laters, tag)
		}
		c.fmu.Unlock()
		close(done)
	}()
}

// awaitLater waits until the reply to tag has been sent if a goroutine of later
// is answering it: p9, which does not know the tag, answers a Tflush of it at
// once, and the reply must come first.
func (c *conn) awaitLater(tag uint16) {
	c.fmu.Lock()
	done := c.fs.laters[tag]
	c.fmu.Unlock()
	if done != nil {
		<-done
	}
}

// orphanLocked records that fid is an orphan (see above). Precondition: c.fmu
// held.
func (c *conn) orphanLocked(fid uint32, shadow bool) {
	if c.fs.orphans == nil {
		c.fs.orphans = map[uint32]bool{}
	}
	c.fs.orphans[fid] = shadow
}

// discardLocked lets go of a ghost that is replaced or orphaned: a created
// one's file is closed, aside, since the close may wait for the index.
// Precondition: c.fmu held.
func (c *conn) discardLocked(g *ghost) {
	if g != nil && g.opened != nil {
		go g.f.Close()
	}
}

// end closes the files of the created ghosts when the connection is gone, as
// p9 closes those of the fids it holds.
func (c *conn) end() {
	c.fmu.Lock()
	var fs []*file
	for _, g := range c.fs.ghosts {
		if g.opened != nil {
			fs = append(fs, g.f)
		}
	}
	for _, g := range c.fs.adopting {
		fs = append(fs, g.f)
	}
	if a := c.fs.adopt; a != nil {
		fs = append(fs, a.f)
	}
	c.fs.ghosts, c.fs.sources, c.fs.adopting, c.fs.adopt = nil, nil, nil, nil
	c.fmu.Unlock()
	for _, f := range fs {
		f.Close()
	}
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
	g := c.delGhostLocked(fid)
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

// setGhostLocked records ghost g under fid, which must not be a ghost already.
// Precondition: c.fmu held.
func (c *conn) setGhostLocked(fid uint32, g *ghost) {
	if c.fs.ghosts == nil {
		c.fs.ghosts, c.fs.sources = map[uint32]*ghost{}, map[uint32]int{}
	}
	c.fs.ghosts[fid] = g
	c.fs.sources[g.from]++
}

// delGhostLocked forgets ghost fid and returns it (nil: fid was none).
// Precondition: c.fmu held.
func (c *conn) delGhostLocked(fid uint32) *ghost {
	g := c.fs.ghosts[fid]
	if g == nil {
		return nil
	}
	delete(c.fs.ghosts, fid)
	if c.fs.sources[g.from]--; c.fs.sources[g.from] <= 0 {
		delete(c.fs.sources, g.from)
	}
	return g
}

// dependent returns a ghost walked from the fid the buffered request is about
// to take from p9 or replace there: a Tclunk or Tremove of it, a Tlcreate or
// Tucreate on it (it becomes the new file), a walk or attach that makes it anew.
// p9 can walk a ghost again only from the very reference it was walked from
// (materialize), so the ghost must be made known before that reference goes.
// Without this, a clone walked from another clone that was then clunked (a
// valid sequence) became an orphan, answering ESTALE.
func (c *conn) dependent(typ uint8, size int) (uint32, bool) {
	off := headerLen
	switch typ {
	case msgTclunk, msgTremove, msgTlcreate, msgTucreate, msgTattach:
	case msgTwalk, msgTwalkgetattr:
		off = headerLen + 4 // newfid
	default:
		return 0, false
	}
	c.fmu.Lock()
	n := len(c.fs.sources)
	c.fmu.Unlock()
	if n == 0 {
		return 0, false
	}
	x, ok := c.peekFid(size, off)
	if !ok {
		return 0, false
	}
	c.fmu.Lock()
	defer c.fmu.Unlock()
	if c.fs.sources[x] == 0 {
		return 0, false
	}
	for fid, g := range c.fs.ghosts {
		if g.from == x {
			return fid, true
		}
	}
	return 0, false
}
