package ninep

import (
	"encoding/binary"
	"io"

	"github.com/hugelgupf/p9/linux"
	"github.com/hugelgupf/p9/p9"
	"github.com/semfs/semfs/server"
)

// Shim-only fids: fids the shim walked itself and p9 has not heard of (the
// terms are defined in fidtable.go).
//
// `ls -l` on a mount, and every stat on a cache=none one, is Twalk, Tgetattr,
// Tclunk per entry. The fast path answers the last two; the Twalk went to p9,
// whose per-message goroutine hand-off made listing the one request pattern
// slower than diod. So a Twalk of up to sixteen names (none: a clone, as
// before every open and create) from a fid p9 knows is answered here: the shim walks with the same file.walk p9's handler would
// call, answers Rwalk, and keeps the new fid as shim-only. Tgetattr on it is
// answered from its *file, and its Tclunk drops it; p9 never hears of either.
//
// Any other request naming a shim-only fid has the shim teach p9 the fid
// first (teach): the shim hands p9
// the same Twalk (from the same source fid, with the tag of the request waiting
// for it, which the client cannot reuse meanwhile), drops p9's reply, and binds
// the fid to the *file p9 made, as for any walk it watches. Only then does the
// request itself go on. So do renames and unlinks on the connection, after
// every shim-only fid has been taught, since p9 updates the fids it knows under
// what they change.
//
// The fid a shim-only fid was walked from must still be p9's when p9 walks it again,
// so a request that takes that fid from p9 or replaces it there (its Tclunk,
// Tremove, a Tlcreate on it, a walk or attach onto it) first has p9 learn every
// shim-only fid walked from it (dependent): clone a fid, walk the clone, clunk the
// clone, then use the walked fid is a valid sequence. If p9 still cannot make
// a shim-only fid (the tree changed in between and the walk fails, or the shim
// gave up tracking fids, makeWait), the fid becomes stale: the client was
// told it exists, so requests naming it get ESTALE, as for a file that went
// away under an NFS handle, and its clunk succeeds.
//
// Creates and opens. Linux creates a file as a clone walk of the directory's
// fid, a Tlcreate on the clone, the writes, a Tclunk; it opens one as a clone
// walk of the file's fid, a Tlopen, the reads or writes, a Tclunk. Every one of
// them is answered here. The Tlcreate on a shim-only directory is made with the
// same file.create p9's handler calls, if the core can do it without waiting
// (server.FS.TryCreate; else the fid is taught to p9 and p9 creates, waiting in
// a goroutine of its own); the Tlopen of a shim-only regular file, without O_TRUNC
// (which waits for a snapshot), with the same file.Open. The fid is then an
// open one: its Tread, Twrite and Tgetattr are the fast path's (a read from the
// disk or a write held by a snapshot is a background reply, see background),
// and its Tclunk closes the file here (server.File.TryClose; if the file's
// update cannot be sent at once, the close and the Rclunk come from a
// goroutine). Taught to p9, it takes two steps, both with the waiting
// request's tag and both replies dropped: the walk as for any shim-only fid, then the
// same Tlcreate or Tlopen, which file.Create or file.Open answers with the
// shim's open file (hand-over) instead of creating or opening anything. p9 then
// holds exactly what it would have held had it answered the request itself,
// the very descriptor included, so a file unlinked meanwhile stays usable. (A
// shim-only fid opened after a walk by name, not a clone, whose file is then unlinked
// by another client is stale once p9 must learn it: its walk fails. Linux
// opens clones.)

// shimWalk is the shim's own walk that made a shim-only fid.
type shimWalk struct {
	f      *file    // the walk's result, answering Tgetattr (after opened: the open file)
	from   uint32   // the fid it was walked from
	src    *file    // p9's *file for from at the time; p9 walks again only from it
	names  []string // the walk, to send p9 when it must learn the fid
	opened *opening // the Tlcreate or Tlopen the shim answered on the fid; f is then open
}

// opening is how the shim opened a shim-only fid's file: a Tlcreate (create:
// its fields after the fid) or a Tlopen (its flags).
type opening struct {
	create           bool
	name             string
	flags, mode, gid uint32
}

// handover is the shim's Tlcreate or Tlopen in flight: file.Create on at (the
// directory) or file.Open on at (the file p9 walked to) answers it with f's open
// file (see hand-over in fidtable.go).
type handover struct {
	at   *file
	open bool
	name string
	f    *file
}

// maxWalkNames is the most names one Twalk carries (Linux's P9_MAXWELEM).
const maxWalkNames = 16

// answerWalk answers a buffered Twalk itself, making newfid shim-only, if it
// can (see above): it reports whether it consumed the request.
func (c *conn) answerWalk(tag uint16, size int) (bool, error) {
	r, ok := c.request(size)
	if !ok {
		return false, nil
	}
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
	src, dst, givenUp := c.fids.get(fid), c.fids.get(newfid).state, c.fids.givenUp
	c.fmu.Unlock()
	if src.state != fidP9 || givenUp || (dst != fidAbsent && dst != fidClunkedHere && dst != fidStale && dst != fidShimOnly) {
		// A fid p9 does not hold as the source, or a newfid it holds live
		// (the client reusing a fid in use): p9 decides.
		return false, nil
	}
	qids, child, _, err := src.file.walk(names, false, false)
	if err == linux.ENOTDIR {
		// Through a name that is not a directory: p9 would answer EINVAL
		// without asking (doWalk tests each step's mode), where Linux and
		// diod answer ENOTDIR.
		return c.answer(size, rlerror(tag, uint32(linux.ENOTDIR)))
	}
	if err != nil {
		return false, nil // p9 walks it again and answers its own way
	}
	c.fmu.Lock()
	// A walk onto a shim-only fid replaces it, as in p9. Refused only if a
	// reply p9 sent meanwhile changed either fid: p9 then walks, as above.
	gone, err := c.fids.walkHere(newfid, &shimWalk{f: child, from: fid, src: src.file, names: names})
	c.discardLocked(gone)
	c.fmu.Unlock()
	if err != nil {
		return false, nil
	}

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

// teach has p9 learn shim-only fid before the buffered request (whose tag the
// shim's Twalk borrows) goes on; the request stays buffered and is looked at
// again once p9 has answered. It reports true: Read is to hand p9 c.out.
func (c *conn) teach(fid uint32, tag uint16) bool {
	c.awaitIdle()
	c.fmu.Lock()
	defer c.fmu.Unlock()
	e := c.fids.get(fid)
	if e.state != fidShimOnly {
		return true // gone meanwhile: look at the request again
	}
	if src := c.fids.get(e.walk.from); c.fids.givenUp || src.state != fidP9 || src.file != e.walk.src {
		// p9 no longer holds the source the fid was walked from.
		gone, err := c.fids.lose(fid)
		c.discardLocked(gone)
		c.tableErr(err)
		return true
	}
	if err := c.fids.teachWalk(fid); err != nil {
		c.tableErr(err)
		return true
	}
	c.inflight = &fidRequest{tag: tag, fid: fid, ours: true, done: make(chan struct{})}
	w := newMessage(msgTwalk, tag)
	w.u32(e.walk.from)
	w.u32(fid)
	w.b = binary.LittleEndian.AppendUint16(w.b, uint16(len(e.walk.names)))
	for _, n := range e.walk.names {
		w.str(n)
	}
	c.out = w.finish()
	return true
}

// answerCreate answers a buffered Tlcreate on shim-only directory fid (see
// Creates above), if the shim can: it reports whether it consumed the request.
// What it leaves (a name the core's check refuses, a fid p9 would refuse to
// create in, a create that would wait) p9 answers, once taught the fid.
func (c *conn) answerCreate(fid uint32, g *shimWalk, tag uint16, size int) (bool, error) {
	// p9 refuses a create from a fid not a directory or an open one; the shim
	// leaves those to it, and a directory it does not know to be one.
	if g.opened != nil || !g.f.kind.IsDir() || g.f.dirOpen.Load() || g.f.open.Load() != nil {
		return false, nil
	}
	r, ok := c.request(size)
	if !ok {
		return false, nil
	}
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
	lc.create = true
	c.fmu.Lock()
	err = c.fids.opened(fid, nf, &lc)
	c.fmu.Unlock()
	if err != nil {
		// Only a client reusing the fid while it walks it anew gets here.
		c.tableErr(err)
		go nf.Close()
		return c.answer(size, rlerror(tag, uint32(linux.EIO)))
	}
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

// answerOpen answers a buffered Tlopen of shim-only fid, a regular file, if the
// shim can: it reports whether it consumed the request. p9's refusals (an open
// fid, a directory, a file it does not know to be regular) are left to it, and
// so is O_TRUNC, which waits for a snapshot.
func (c *conn) answerOpen(fid uint32, g *shimWalk, tag uint16, size int) (bool, error) {
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
	err = c.fids.opened(fid, g.f, &opening{flags: flags})
	c.fmu.Unlock()
	if err != nil {
		c.tableErr(err)
		go g.f.Close()
		return c.answer(size, rlerror(tag, uint32(linux.EIO)))
	}
	return c.answer(size, c.ropened(msgRlopen, tag, qid))
}

// answerClunk answers the Tclunk of a shim-only fid; p9 never hears of it. An
// opened fid's file is closed here, or, when its update cannot be sent without
// waiting, by a background reply.
func (c *conn) answerClunk(fid uint32, tag uint16, size int) (bool, error) {
	c.fmu.Lock()
	g, err := c.fids.dropShimOnly(fid)
	c.fmu.Unlock()
	if err != nil {
		c.tableErr(err)
		return false, nil
	}
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
	c.background(tag, func() []byte {
		if err := g.f.Close(); err != nil {
			return rlerror(tag, uint32(linux.ExtractErrno(err)))
		}
		return newMessage(msgRclunk, tag).finish()
	})
	return true, nil
}

// openToHandOver returns a fid the shim opened whose walk p9 has made (or is
// making) and whose Tlcreate or Tlopen it is to hear next (teach): one the
// request names, or any at all before a rename or unlink.
func (c *conn) openToHandOver(typ uint8, named []uint32) (uint32, bool) {
	c.fmu.Lock()
	defer c.fmu.Unlock()
	if c.fids.opens == 0 {
		return 0, false
	}
	switch typ {
	case msgTrenameat, msgTrename, msgTunlinkat, msgTremove:
		return c.fids.anyOpen()
	}
	for _, fid := range named {
		if e := c.fids.get(fid); e.state == fidHandingOver || (e.state == fidTeachingWalk && e.walk.opened != nil) {
			return fid, true
		}
	}
	return 0, false
}

// sendOpen sends p9 the second step of teaching it an opened fid: the
// Tlcreate or Tlopen the shim answered, on the fid p9 now holds, which
// file.Create or file.Open answers with the shim's open file (hand-over). It
// reports true, as teach does.
func (c *conn) sendOpen(fid uint32, tag uint16) bool {
	c.awaitIdle()
	c.fmu.Lock()
	defer c.fmu.Unlock()
	e := c.fids.get(fid)
	if e.state != fidHandingOver {
		return true // settled meanwhile: p9 could not walk it (replied)
	}
	if c.fids.givenUp {
		gone, err := c.fids.lose(fid)
		c.discardLocked(gone)
		c.tableErr(err)
		return true
	}
	if err := c.fids.handOver(fid); err != nil {
		c.tableErr(err)
		return true
	}
	o := e.walk.opened
	c.handover = &handover{at: e.file, open: !o.create, name: o.name, f: e.walk.f}
	c.inflight = &fidRequest{tag: tag, fid: fid, ours: true, done: make(chan struct{})}
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

// handoverCreate is file.Create's look for the shim's own Tlcreate (sendOpen):
// the shim's open file, if dir and name are the ones it was sent for; it is
// then what the fid-making request made.
func (c *conn) handoverCreate(dir *file, name string) *file {
	c.fmu.Lock()
	defer c.fmu.Unlock()
	h := c.handover
	if h == nil || h.open || h.at != dir || h.name != name {
		return nil
	}
	c.handover = nil
	if mk := c.inflight; mk != nil {
		mk.made = h.f
	}
	return h.f
}

// handoverOpen is file.Open's look for the shim's own Tlopen (sendOpen): if f
// is the file it was sent for, f takes over the shim's open file and true is
// returned; f stays what p9 holds for the fid, as its walk made it.
func (c *conn) handoverOpen(f *file) bool {
	c.fmu.Lock()
	defer c.fmu.Unlock()
	h := c.handover
	if h == nil || !h.open || h.at != f {
		return false
	}
	c.handover = nil
	f.open.Store(h.f.open.Swap(nil))
	f.dirOpen.Store(h.f.dirOpen.Load()) // a file another client replaced by a directory
	if mk := c.inflight; mk != nil {
		mk.made = f
	}
	return true
}

// background answers a request on a shim-only fid from a goroutine of its own,
// with the reply fn returns (a background reply): for the few the shim cannot
// answer without waiting and p9 cannot take, not knowing the fid (a write while
// a snapshot holds the core, a close whose update has no room yet). p9 answers
// every request that way. A Tflush for the tag waits for the reply to be sent
// first (awaitBackground).
func (c *conn) background(tag uint16, fn func() []byte) {
	done := make(chan struct{})
	c.fmu.Lock()
	if c.bg == nil {
		c.bg = map[uint16]chan struct{}{}
	}
	c.bg[tag] = done
	c.fmu.Unlock()
	c.srv.answered.Add(1)
	go func() {
		c.reply(fn()) // an error: the connection is ending, and p9 sees it too
		c.fmu.Lock()
		if c.bg[tag] == done {
			delete(c.bg, tag)
		}
		c.fmu.Unlock()
		close(done)
	}()
}

// awaitBackground waits until the reply to tag has been sent if a background
// reply is answering it: p9, which does not know the tag, answers a Tflush of
// it at once, and the reply must come first.
func (c *conn) awaitBackground(tag uint16) {
	c.fmu.Lock()
	done := c.bg[tag]
	c.fmu.Unlock()
	if done != nil {
		<-done
	}
}

// discardLocked lets go of a shim-only walk that is replaced or lost: an
// opened one's file is closed, aside, since the close may wait for the index.
// Precondition: c.fmu held.
func (c *conn) discardLocked(g *shimWalk) {
	if g != nil && g.opened != nil {
		go g.f.Close()
	}
}

// end closes the files the shim opened for fids p9 was never handed, when the
// connection is gone, as p9 closes those of the fids it holds.
func (c *conn) end() {
	c.fmu.Lock()
	fs := c.fids.openFiles()
	if h := c.handover; h != nil {
		fs = append(fs, h.f)
		c.handover = nil
	}
	c.fmu.Unlock()
	for _, f := range fs {
		f.Close()
	}
}

// dependent returns a shim-only fid walked from the fid the buffered request
// is about to take from p9 or replace there: a Tclunk or Tremove of it, a
// Tlcreate or Tucreate on it (it becomes the new file), a walk or attach that
// makes it anew. p9 can walk a shim-only fid again only from the very
// reference it was walked from (teach), so it must be taught before that
// reference goes. Without this, a clone walked from another clone that was
// then clunked (a valid sequence) became stale, answering ESTALE.
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
	n := c.fids.shimOnly
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
	return c.fids.walkedFrom(x)
}
