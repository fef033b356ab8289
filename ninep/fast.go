package ninep

import (
	"encoding/binary"
	"errors"
	"io"
	"slices"
	"time"

	"github.com/hugelgupf/p9/linux"
	"github.com/hugelgupf/p9/p9"
)

// The fast path: the connection shim answers Tgetattr, Tread and Twrite itself,
// in the goroutine p9 is receiving with, by calling the very *file methods p9
// would call for that fid, answers the Tclunk of a fid that is not open, and
// answers Twalks itself (ghosts, ghost.go), and a Tlcreate or Tlopen on a ghost
// with the Tclunk of the file it opened (ghost.go, Creates and opens). Everything
// else, and anything the shim is unsure of, goes to p9 as before, and p9 answers
// it as it always did.
//
// Why: p9 hands every message from the goroutine that read it to another one
// (the reader lets a waiting goroutine take over receiving, which wakes a second
// OS thread per message), and allocates a fresh buffer for every Twrite payload.
// For the one-request-at-a-time traffic of a Linux v9fs mount that was most of
// the server's cost: 9P reads, writes and stats ran 1.2-1.6x diod's times (see
// integration/bench/ninep). Answered inline, a request costs one wake-up, the
// system calls it needs, and no allocation.
//
// The cost: while the shim answers one of these, the connection reads nothing
// else, so a request from another process waits behind it (p9 would have
// answered it concurrently). So the shim never waits for anything but the
// system call itself: it reads only what the page cache holds (a read that
// would go to the disk is p9's) and writes only when no snapshot holds the
// core's writes (else the Twrite goes to p9, to wait there); it creates and
// closes only when the core can do so without waiting (server.FS.TryCreate,
// server.File.TryClose); and it leaves every walk into the virtual tree
// (.semfs) and every getattr of a fid there to p9, since those answers can run
// a query (server.FS.Inline).
//
// Knowing which *file p9 holds for a fid. The shim watches the requests that make
// fids (Tattach, Twalk, Tlcreate and p9's Twalkgetattr and Tucreate) and lets
// only one of them be in flight per connection at a time (the next waits in Read
// for the reply). While it is in flight, only its handler makes *file values
// reported on this connection (file.child and file.attachRoot call conn.made;
// the shim's own walks report nothing), so the last one reported is the one p9
// installs; the reply says whether it did
// (Rwalk, Rlcreate, Rattach; an Rlerror leaves the fid as it was). A fid leaves
// the table when the shim reads a Tclunk or Tremove for it, before p9 sees it,
// so the shim never answers for a fid p9 has let go.
//
// p9's own checks are kept by handing p9 every request they would refuse: a fid
// not in the table, a file not opened (or a directory), a read on a write-only
// fid or a write on a read-only one, a count beyond the msize, a Twrite whose
// count and length disagree.
//
// Clunks of fids that are only walked (the walk, getattr, clunk of every entry
// of `ls -l`, and of every stat on a cache=none mount) are answered here and
// not passed on: p9 keeps its reference, a few hundred bytes holding no
// descriptor (file.Close has nothing to do for such a fid), until the client
// reuses the number for a new fid, which replaces it in p9's table, or
// disconnects. Until then the shim answers every request naming that fid with
// p9's EBADF itself, so to the client the fid is gone exactly as if p9 had
// clunked it. At most maxDeferred of them per connection; past that, clunks go
// to p9 (a client that never reuses fid numbers gets no faster, and holds no
// more memory than it could by never clunking).

// makeWait bounds how long a fid-making request may stay unanswered before the
// next one stops waiting; the shim then stops answering for this connection's
// fids altogether, since it can no longer tell whose *file is whose. A slow
// disk is the only honest cause; a client that reuses the tag of a request in
// flight (p9 then never replies) is the dishonest one.
const makeWait = 5 * time.Second

// making is the fid-making request in flight on a connection.
type making struct {
	tag     uint16
	fid     uint32 // the fid its success binds (Twalk's newfid, else fid)
	made    *file  // the last *file its handler made
	dropped bool   // a Tclunk/Tremove for fid was read meanwhile
	early   bool   // the shim's own Twalk for a ghost (ghost.go): its reply is dropped
	id      uint64 // early: the identity the ghost was bound to, which p9's walk keeps (file.id)
	shadow  bool   // early: p9 still held a stale reference under fid (deferClunk)
	done    chan struct{}
}

// maxDeferred bounds the clunks per connection the shim answered without
// telling p9 whose fid numbers the client has not reused yet.
const maxDeferred = 1024

// fidState is a connection's view of p9's fid table, guarded by conn.fmu.
type fidState struct {
	fids     map[uint32]*file
	deferred map[uint32]struct{}      // clunked by the shim, still held by p9
	ghosts   map[uint32]*ghost        // walked by the shim, unknown to p9 (ghost.go)
	sources  map[uint32]int           // how many ghosts were walked from each fid (setGhostLocked)
	orphans  map[uint32]bool          // ghosts p9 could not walk; true: p9 holds a stale one
	adopting map[uint32]*ghost        // created ghosts p9 has walked; their Tlcreate is next
	adopt    *adoptSlot               // the shim's Tlcreate in flight (ghost.go)
	laters   map[uint16]chan struct{} // requests answered by a goroutine (later), by tag
	mk       *making
	off      bool // a making request outlived makeWait: no more fast path here
}

// intercept is the shim's look at every request before p9 sees it (called from
// Read at a message boundary, the header buffered). It reports whether it
// consumed the request; a request it consumed was answered, or handed to p9
// in c.out, or is still buffered behind a walk the shim sent p9 first.
func (c *conn) intercept(typ uint8, tag uint16, size int) (bool, error) {
	named := c.namedFids(typ, size)
	c.awaitGhostOf(named)
	if fid, g := c.adoptingFor(typ, named); g != nil {
		return c.adopt(fid, g, tag), nil
	}
	fid, errno, g := c.classify(named)
	switch {
	case errno == linux.EBADF:
		return c.answer(size, rlerror(tag, uint32(errno)))
	case errno != 0: // an orphan (ghost.go)
		if (typ == msgTclunk || typ == msgTremove) && fid == named[0] {
			c.fmu.Lock()
			c.dropOrphan(fid)
			c.fmu.Unlock()
			if typ == msgTclunk {
				return c.answer(size, c.rclunk(tag))
			}
		}
		return c.answer(size, rlerror(tag, uint32(errno)))
	}
	if dep, ok := c.dependent(typ, size); ok {
		// The request is about to take away or replace the fid a ghost was
		// walked from: p9 learns the ghost while it can still walk it.
		return c.materialize(dep, tag), nil
	}
	switch {
	case g != nil && typ == msgTclunk && size == headerLen+4:
		return c.clunkGhost(fid, g, tag, size)
	case g != nil && typ == msgTlcreate:
		if done, err := c.ghostCreate(g, tag, size); done || err != nil {
			return done, err
		}
		return c.materialize(fid, tag), nil
	case g != nil && typ == msgTlopen:
		if done, err := c.ghostOpen(g, tag, size); done || err != nil {
			return done, err
		}
		return c.materialize(fid, tag), nil
	case g != nil && g.opened != nil && (typ == msgTread || typ == msgTwrite):
		if done, err := c.fast(typ, tag, size); done || err != nil {
			return done, err
		}
		return c.materialize(fid, tag), nil
	case g != nil && typ != msgTgetattr:
		return c.materialize(fid, tag), nil
	}
	switch typ {
	case msgTflush:
		if size == headerLen+2 {
			if b, err := c.br.Peek(headerLen + 2); err == nil {
				c.awaitLater(binary.LittleEndian.Uint16(b[headerLen:]))
			}
		}
	case msgTgetattr, msgTread, msgTwrite:
		if done, err := c.fast(typ, tag, size); done || err != nil {
			return done, err
		}
	case msgTrenameat, msgTrename, msgTunlinkat, msgTremove:
		// p9 moves or marks the fids it knows below what changes; ghosts
		// are made known first.
		if n, ok := c.anyGhost(); ok {
			return c.materialize(n, tag), nil
		}
	}
	c.awaitEarly()
	switch typ {
	case msgTsetattr:
		c.noteSetattrMode(size)
	case msgTwalk:
		if done, err := c.ghostWalk(tag, size); done || err != nil {
			return done, err
		}
		if newfid, ok := c.peekFid(size, headerLen+4); ok {
			c.startMaking(tag, newfid)
		}
	case msgTwalkgetattr:
		if newfid, ok := c.peekFid(size, headerLen+4); ok {
			c.startMaking(tag, newfid)
		}
	case msgTlcreate, msgTucreate:
		if fid, ok := c.peekFid(size, headerLen); ok {
			c.startMaking(tag, fid)
		}
	case msgTclunk:
		if fid, ok := c.peekFid(size, headerLen); ok {
			if c.deferClunk(fid, size) {
				return c.answer(size, c.rclunk(tag))
			}
			c.forget(fid)
		}
	case msgTremove:
		if fid, ok := c.peekFid(size, headerLen); ok {
			c.forget(fid)
		}
	}
	return false, nil
}

// answer consumes the buffered request and sends the shim's reply to it.
func (c *conn) answer(size int, reply []byte) (bool, error) {
	if _, err := c.br.Discard(size); err != nil {
		return true, io.ErrUnexpectedEOF
	}
	c.srv.answered.Add(1)
	return true, c.replyv(reply, nil)
}

func (c *conn) rclunk(tag uint16) []byte {
	w := append(c.ohdr[:0], headerLen, 0, 0, 0, msgRclunk, 0, 0)
	binary.LittleEndian.PutUint16(w[5:], tag)
	return w
}

// namedFids returns the fids a buffered request names as fids that must exist
// (not a fid it makes), in c.named.
func (c *conn) namedFids(typ uint8, size int) []uint32 {
	fids := c.named[:0]
	switch typ {
	case msgTversion, msgTauth, msgTflush, msgTattach:
		// No fid, a new one, or answered by the shim whatever the fid.
	case msgTlink, msgTrename: // dfid fid / fid dfid
		if a, ok := c.peekFid(size, headerLen); ok {
			fids = append(fids, a)
		}
		if b, ok := c.peekFid(size, headerLen+4); ok {
			fids = append(fids, b)
		}
	case msgTrenameat: // olddirfid oldname[s] newdirfid newname[s]
		if a, ok := c.peekFid(size, headerLen); ok {
			fids = append(fids, a)
		}
		if b, err := c.br.Peek(min(size, headerLen+6)); err == nil && len(b) == headerLen+6 {
			if nd, ok := c.peekFid(size, headerLen+6+int(binary.LittleEndian.Uint16(b[headerLen+4:]))); ok {
				fids = append(fids, nd)
			}
		}
	default: // every other request's first field is the fid it acts on
		if a, ok := c.peekFid(size, headerLen); ok {
			fids = append(fids, a)
		}
	}
	return fids
}

// classify looks the named fids up: the first that is gone as far as the client
// can tell, with the errno p9 would give (EBADF for a fid whose clunk the shim
// answered, ESTALE for an orphan), else the first ghost.
func (c *conn) classify(named []uint32) (uint32, linux.Errno, *ghost) {
	c.fmu.Lock()
	defer c.fmu.Unlock()
	var g *ghost
	var gfid uint32
	for _, fid := range named {
		if _, ok := c.fs.deferred[fid]; ok {
			return fid, linux.EBADF, nil
		}
		if _, ok := c.fs.orphans[fid]; ok {
			return fid, linux.ESTALE, nil
		}
		if x := c.fs.ghosts[fid]; x != nil && g == nil {
			g, gfid = x, fid
		}
	}
	return gfid, 0, g
}

// deferClunk decides whether the shim answers a Tclunk of fid itself (see
// above): the fid is in the table, not open, not the target of the making
// request in flight, and the connection has room.
func (c *conn) deferClunk(fid uint32, size int) bool {
	if size != headerLen+4 {
		return false
	}
	c.fmu.Lock()
	defer c.fmu.Unlock()
	f := c.fs.fids[fid]
	if f == nil || f.open.Load() != nil || f.dirOpen.Load() || len(c.fs.deferred) >= maxDeferred {
		return false
	}
	if mk := c.fs.mk; mk != nil && mk.fid == fid {
		return false
	}
	delete(c.fs.fids, fid)
	c.deferLocked(fid)
	return true
}

// startMaking waits until no fid-making request is in flight and records this
// one. Called from Read (p9's receiving goroutine), before p9 receives it.
func (c *conn) startMaking(tag uint16, fid uint32) {
	for {
		c.fmu.Lock()
		if c.fs.off {
			// Untracked from now on: take p9's replacing of a deferred fid for
			// granted rather than refuse the client's new fid forever.
			delete(c.fs.deferred, fid)
			c.fmu.Unlock()
			return
		}
		mk := c.fs.mk
		if mk == nil {
			c.fs.mk = &making{tag: tag, fid: fid, done: make(chan struct{})}
			c.fmu.Unlock()
			return
		}
		c.fmu.Unlock()
		c.await(mk)
	}
}

// await waits for mk's reply, at most makeWait; past that the shim stops
// answering for this connection's fids (see makeWait).
func (c *conn) await(mk *making) {
	t := time.NewTimer(c.srv.makeWait)
	defer t.Stop()
	select {
	case <-mk.done:
	case <-t.C:
		c.fmu.Lock()
		if c.fs.mk == mk {
			c.fs.off, c.fs.mk, c.fs.fids = true, nil, nil
			c.srv.log.Warn("ninep: a walk, create or attach went unanswered; this connection's reads, writes and stats go through p9 from now on",
				"remote", c.nc.RemoteAddr().String(), "tag", mk.tag)
		}
		c.fmu.Unlock()
	}
}

// awaitIdle waits until no fid-making request is in flight.
func (c *conn) awaitIdle() {
	for {
		c.fmu.Lock()
		mk := c.fs.mk
		c.fmu.Unlock()
		if mk == nil {
			return
		}
		c.await(mk)
	}
}

// awaitEarly waits for the reply to the shim's own Twalk, if one is in flight:
// every request that needs p9 comes after it (it carries the tag of a request
// still held back, see materialize).
func (c *conn) awaitEarly() {
	c.fmu.Lock()
	mk := c.fs.mk
	c.fmu.Unlock()
	if mk != nil && mk.early {
		c.await(mk)
	}
}

// awaitGhostOf waits for the shim's own Twalk if it makes one of the named fids.
func (c *conn) awaitGhostOf(named []uint32) {
	c.fmu.Lock()
	mk := c.fs.mk
	c.fmu.Unlock()
	if mk != nil && slices.Contains(named, mk.fid) {
		c.awaitEarly()
	}
}

// made records a *file made for the fid-making request in flight.
func (c *conn) made(f *file) {
	c.fmu.Lock()
	if mk := c.fs.mk; mk != nil {
		mk.made = f
	}
	c.fmu.Unlock()
}

// replied sees the header of every reply p9 sends, before the client can, and
// reports whether to drop it (the reply to the shim's own Twalk).
func (c *conn) replied(typ uint8, tag uint16) bool {
	c.fmu.Lock()
	defer c.fmu.Unlock()
	mk := c.fs.mk
	if mk == nil {
		return false
	}
	if tag != mk.tag {
		// p9 answers a request it could not decode with tag NOTAG: if that
		// was the making request, its reply will never come. (The shim's
		// own walks always decode.)
		if tag == noTag && typ == msgRlerror && !mk.early {
			c.fs.mk = nil
			close(mk.done)
		}
		return false
	}
	if a := c.fs.adopt; a != nil && mk.early {
		// The shim's Tlcreate was refused before file.Create took the file.
		c.fs.adopt = nil
		go a.f.Close()
	}
	switch typ {
	case msgRwalk, msgRwalkgetattr, msgRlcreate, msgRucreate, msgRattach, msgRlopen:
		// p9 installed a new reference under mk.fid, dropping any it held
		// (Rlopen: only ever the shim's own Tlopen, ghost.go adopt, whose
		// file.Open kept the reference the walk installed).
		delete(c.fs.deferred, mk.fid)
		c.discardLocked(c.delGhostLocked(mk.fid))
		if mk.made != nil && !mk.dropped {
			if c.fs.fids == nil {
				c.fs.fids = map[uint32]*file{}
			}
			if mk.early && mk.id != 0 {
				// p9 walked the ghost's names again, maybe onto another
				// file by now: the fid stays bound to the one the client
				// was told of.
				mk.made.id.Store(mk.id)
			}
			c.fs.fids[mk.fid] = mk.made
		}
	default:
		if mk.early {
			// The client was told this fid exists; p9 could not walk it (or
			// take the shim's Tlcreate).
			c.orphanLocked(mk.fid, mk.shadow)
			if g := c.fs.adopting[mk.fid]; g != nil {
				delete(c.fs.adopting, mk.fid)
				c.discardLocked(g)
			}
		}
	}
	c.fs.mk = nil
	close(mk.done)
	return mk.early
}

// forget drops a fid the client is about to clunk or remove.
func (c *conn) forget(fid uint32) {
	c.fmu.Lock()
	delete(c.fs.fids, fid)
	if mk := c.fs.mk; mk != nil && mk.fid == fid {
		mk.dropped = true
	}
	c.fmu.Unlock()
}

// lookup returns the *file the fast path answers for fid: p9's, or a ghost's.
func (c *conn) lookup(fid uint32) *file {
	c.fmu.Lock()
	defer c.fmu.Unlock()
	if g := c.fs.ghosts[fid]; g != nil {
		return g.f
	}
	return c.fs.fids[fid]
}

// isGhost reports whether fid is a ghost (ghost.go).
func (c *conn) isGhost(fid uint32) bool {
	c.fmu.Lock()
	defer c.fmu.Unlock()
	return c.fs.ghosts[fid] != nil
}

// peekFid returns the 32-bit field at off in the message whose header is
// buffered, if the message is long enough to hold it.
func (c *conn) peekFid(size, off int) (uint32, bool) {
	if size < off+4 {
		return 0, false
	}
	b, err := c.br.Peek(off + 4)
	if err != nil {
		return 0, false
	}
	return binary.LittleEndian.Uint32(b[off:]), true
}

// Fixed parts of the fast-path requests after the header.
const (
	getattrFixed = 4 + 8     // fid, request mask
	readFixed    = 4 + 8 + 4 // fid, offset, count
	writeFixed   = 4 + 8 + 4 // fid, offset, count; then the data
	rreadFixed   = headerLen + 4
)

// fast answers the request whose header is buffered if it is a Tgetattr, Tread
// or Twrite the shim can answer (see above). It reports whether it consumed the
// request; a non-nil error ends the connection (the client went away
// mid-request).
func (c *conn) fast(typ uint8, tag uint16, size int) (bool, error) {
	var fixed int
	switch typ {
	case msgTgetattr:
		fixed = getattrFixed
	case msgTread:
		fixed = readFixed
	case msgTwrite:
		fixed = writeFixed
	default:
		return false, nil
	}
	if size < headerLen+fixed {
		return false, nil
	}
	b, err := c.br.Peek(headerLen + fixed)
	if err != nil {
		return false, nil // p9 reads the same bytes and reports the error
	}
	fid := binary.LittleEndian.Uint32(b[headerLen:])
	f := c.lookup(fid)
	if f == nil {
		return false, nil
	}
	msize := int(c.msize.Load())
	switch typ {
	case msgTgetattr:
		if !c.srv.fs.Inline(f.p()) {
			return false, nil // the virtual tree's answers may run a query
		}
		c.srv.answered.Add(1)
		if _, err := c.br.Discard(size); err != nil {
			return true, io.ErrUnexpectedEOF
		}
		qid, valid, attr, err := f.getAttr(true)
		if err != nil {
			return true, c.reply(rlerror(tag, uint32(linux.ExtractErrno(err))))
		}
		return true, c.replyv(c.rgetattr(tag, qid, valid, attr), nil)

	case msgTread:
		off := binary.LittleEndian.Uint64(b[headerLen+4:])
		count := int(binary.LittleEndian.Uint32(b[headerLen+12:]))
		of := f.open.Load()
		if of == nil || of.mode == p9.WriteOnly || count > msize-rreadFixed || size != headerLen+fixed {
			return false, nil
		}
		if cap(c.rdata) < count {
			c.rdata = make([]byte, msize-rreadFixed)
		}
		n, ok, err := f.readCached(c.rdata[:count], int64(off))
		if !ok && c.isGhost(fid) {
			// Not all in the page cache, and p9 does not know the fid: read
			// from a goroutine, as p9 would.
			if _, err := c.br.Discard(size); err != nil {
				return true, io.ErrUnexpectedEOF
			}
			c.later(tag, func() []byte {
				buf := make([]byte, rreadFixed+count)
				n, err := f.ReadAt(buf[rreadFixed:], int64(off))
				if err != nil && !errors.Is(err, io.EOF) {
					return rlerror(tag, uint32(linux.ExtractErrno(err)))
				}
				binary.LittleEndian.PutUint32(buf, uint32(rreadFixed+n))
				buf[4] = msgRread
				binary.LittleEndian.PutUint16(buf[5:], tag)
				binary.LittleEndian.PutUint32(buf[headerLen:], uint32(n))
				return buf[:rreadFixed+n]
			})
			return true, nil
		}
		if !ok {
			return false, nil // not all in the page cache: p9 reads it, and this goroutine reads on
		}
		c.srv.answered.Add(1)
		if _, err := c.br.Discard(size); err != nil {
			return true, io.ErrUnexpectedEOF
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return true, c.reply(rlerror(tag, uint32(linux.ExtractErrno(err))))
		}
		hdr := c.ohdr[:rreadFixed]
		binary.LittleEndian.PutUint32(hdr, uint32(rreadFixed+n))
		hdr[4] = msgRread
		binary.LittleEndian.PutUint16(hdr[5:], tag)
		binary.LittleEndian.PutUint32(hdr[headerLen:], uint32(n))
		return true, c.replyv(hdr, c.rdata[:n])

	default: // msgTwrite
		off := binary.LittleEndian.Uint64(b[headerLen+4:])
		count := int(binary.LittleEndian.Uint32(b[headerLen+12:]))
		of := f.open.Load()
		if of == nil || of.mode == p9.ReadOnly || count != size-headerLen-fixed || size > msize {
			return false, nil
		}
		if _, err := c.br.Discard(headerLen + fixed); err != nil {
			return true, io.ErrUnexpectedEOF
		}
		if cap(c.wdata) < count {
			c.wdata = make([]byte, msize)
		}
		data := c.wdata[:count]
		if _, err := io.ReadFull(c.br, data); err != nil {
			// Torn: nothing of it is written, and the client was told nothing.
			return true, io.ErrUnexpectedEOF
		}
		n, ok, err := f.tryWrite(data, int64(off))
		if !ok && c.isGhost(fid) {
			// p9 does not know the fid: write from a goroutine, as p9 would.
			data := slices.Clone(data)
			c.later(tag, func() []byte {
				n, err := f.WriteAt(data, int64(off))
				if err != nil {
					return rlerror(tag, uint32(linux.ExtractErrno(err)))
				}
				w := newMessage(msgRwrite, tag)
				w.u32(uint32(n))
				return w.finish()
			})
			return true, nil
		}
		if !ok {
			// A snapshot holds writes: hand p9 the request as it came, to
			// wait in a goroutine of its own while this one reads on.
			m := make([]byte, 0, size)
			m = binary.LittleEndian.AppendUint32(m, uint32(size))
			m = append(m, msgTwrite)
			m = binary.LittleEndian.AppendUint16(m, tag)
			m = binary.LittleEndian.AppendUint32(m, fid)
			m = binary.LittleEndian.AppendUint64(m, off)
			m = binary.LittleEndian.AppendUint32(m, uint32(count))
			c.out = append(m, data...)
			return true, nil
		}
		c.srv.answered.Add(1)
		if err != nil {
			return true, c.reply(rlerror(tag, uint32(linux.ExtractErrno(err))))
		}
		w := c.ohdr[:headerLen+4]
		binary.LittleEndian.PutUint32(w, uint32(headerLen+4))
		w[4] = msgRwrite
		binary.LittleEndian.PutUint16(w[5:], tag)
		binary.LittleEndian.PutUint32(w[headerLen:], uint32(n))
		return true, c.replyv(w, nil)
	}
}

// rgetattr encodes an Rgetattr in c.ohdr, field for field as p9 does.
func (c *conn) rgetattr(tag uint16, qid p9.QID, valid p9.AttrMask, a p9.Attr) []byte {
	b := append(c.ohdr[:0], 0, 0, 0, 0, msgRgetattr)
	b = binary.LittleEndian.AppendUint16(b, tag)
	b = binary.LittleEndian.AppendUint64(b, maskBits(valid))
	b = append(b, uint8(qid.Type))
	b = binary.LittleEndian.AppendUint32(b, qid.Version)
	b = binary.LittleEndian.AppendUint64(b, qid.Path)
	b = binary.LittleEndian.AppendUint32(b, uint32(a.Mode))
	b = binary.LittleEndian.AppendUint32(b, uint32(a.UID))
	b = binary.LittleEndian.AppendUint32(b, uint32(a.GID))
	for _, v := range [...]uint64{uint64(a.NLink), uint64(a.RDev), a.Size, a.BlockSize, a.Blocks,
		a.ATimeSeconds, a.ATimeNanoSeconds, a.MTimeSeconds, a.MTimeNanoSeconds,
		a.CTimeSeconds, a.CTimeNanoSeconds, a.BTimeSeconds, a.BTimeNanoSeconds,
		a.Gen, a.DataVersion} {
		b = binary.LittleEndian.AppendUint64(b, v)
	}
	binary.LittleEndian.PutUint32(b, uint32(len(b)))
	return b
}

// maskBits is the wire form of an AttrMask (Linux's P9_STATS_* bits).
func maskBits(m p9.AttrMask) uint64 {
	var v uint64
	for i, set := range [...]bool{m.Mode, m.NLink, m.UID, m.GID, m.RDev, m.ATime, m.MTime,
		m.CTime, m.INo, m.Size, m.Blocks, m.BTime, m.Gen, m.DataVersion} {
		if set {
			v |= 1 << i
		}
	}
	return v
}
