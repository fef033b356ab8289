package ninep

import (
	"encoding/binary"
	"errors"
	"io"
	"slices"
	"time"

	"github.com/hugelgupf/p9/linux"
	"github.com/hugelgupf/p9/p9"
	"github.com/semfs/semfs/server"
)

// The fast path: the connection shim answers Tgetattr, Tread and Twrite itself,
// in the goroutine p9 is receiving with, by calling the very *file methods p9
// would call for that fid, answers the Tclunk of a fid that is not open, and
// answers Twalks itself (shim-only fids, shimfids.go), and a Tlcreate or Tlopen
// on a shim-only fid with the Tclunk of the file it opened (shimfids.go,
// Creates and opens). The terms are defined in fidtable.go. Everything
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
// (Rwalk, Rlcreate, Rattach; an Rlerror leaves the fid as it was). What the
// shim knows is one entry per fid in the fid table (fidtable.go), changed only
// by its transitions. A fid leaves the table when the shim reads a Tclunk or Tremove for it, before p9 sees it,
// so the shim never answers for a fid p9 has let go.
//
// p9's own checks are kept by handing p9 every request they would refuse: a fid
// not in the table, a file not opened (or a directory), a read on a write-only
// fid or a write on a read-only one, a count beyond the msize, a Twrite whose
// count and length disagree.
//
// Clunks of fids that are only walked, clunked here (the walk, getattr, clunk of every entry
// of `ls -l`, and of every stat on a cache=none mount) are answered here and
// not passed on: p9 keeps its reference, a few hundred bytes holding no
// descriptor (file.Close has nothing to do for such a fid), until the client
// reuses the number for a new fid, which replaces it in p9's table, or
// disconnects. Until then the shim answers every request naming that fid with
// p9's EBADF itself, so to the client the fid is gone exactly as if p9 had
// clunked it. At most maxClunkedHere of them per connection; past that, clunks go
// to p9 (a client that never reuses fid numbers gets no faster, and holds no
// more memory than it could by never clunking).

// makeWait bounds how long a client's fid-making request may stay unanswered
// before the next one stops waiting, on a connection whose tags the shim lost
// track of (tags.go; on any other the reply is sure to come, and it waits):
// the shim then gives up (fidtable.go): it stops answering for this
// connection's fids, since it can no longer tell whose *file is whose, logs a
// line and counts semfs_fast_path_given_up_total{protocol="9p"}. The cost: a
// fid the shim walked and p9 never learnt answers ESTALE from then on wherever
// p9 must learn it (a chmod, a create in it). The shim's own requests are
// never given up on (ownWait, await). Elsewhere it is how long a wait goes
// before it is logged.
const makeWait = 5 * time.Second

// ownWait bounds how long the shim waits for its own request on a connection
// whose tags it lost track of (await).
const ownWait = time.Minute

// fidRequest is the fid-making request in flight on a connection (fidtable.go).
type fidRequest struct {
	tag     uint16
	fid     uint32 // the fid its success binds (Twalk's newfid, else fid)
	made    *file  // the last *file its handler made
	dropped bool   // a Tclunk/Tremove for fid was read meanwhile
	ours    bool   // the shim's own request, teaching p9 fid: its reply is dropped
	done    chan struct{}
}

// intercept is the shim's look at every request before p9 sees it (called from
// Read at a message boundary, the header buffered). It reports whether it
// consumed the request; a request it consumed was answered, or handed to p9
// in c.out, or is still buffered behind a request the shim sent p9 first.
func (c *conn) intercept(typ uint8, tag uint16, size int) (bool, error) {
	named := c.namedFids(typ, size)
	c.awaitNamed(named)
	if fid, ok := c.openToHandOver(typ, named); ok {
		return c.sendOpen(fid, tag), nil
	}
	fid, st, w := c.classify(named)
	switch st {
	case fidClunkedHere:
		return c.answer(size, rlerror(tag, uint32(linux.EBADF)))
	case fidStale:
		if (typ == msgTclunk || typ == msgTremove) && fid == named[0] {
			c.fmu.Lock()
			err := c.fids.dropStale(fid)
			c.fmu.Unlock()
			c.tableErr(err)
			if typ == msgTclunk {
				return c.answer(size, c.rclunk(tag))
			}
		}
		return c.answer(size, rlerror(tag, uint32(linux.ESTALE)))
	}
	if c.notDir(typ, named) {
		errno := linux.ENOTDIR
		if typ == msgTsymlink {
			// The core's order: the target before the directory.
			if target, ok := c.symlinkTarget(size); ok {
				if err := server.CheckSymlinkTarget("", target); err != nil {
					errno = linux.ExtractErrno(toErrno(err))
				}
			}
		}
		return c.answer(size, rlerror(tag, uint32(errno)))
	}
	if dep, ok := c.dependent(typ, size); ok {
		// The request is about to take away or replace the fid a shim-only
		// fid was walked from: p9 learns it while it can still walk it.
		return c.teach(dep, tag), nil
	}
	switch {
	case w != nil && typ == msgTclunk && size == headerLen+4:
		return c.answerClunk(fid, tag, size)
	case w != nil && typ == msgTlcreate:
		if done, err := c.answerCreate(fid, w, tag, size); done || err != nil {
			return done, err
		}
		return c.teach(fid, tag), nil
	case w != nil && typ == msgTlopen:
		if done, err := c.answerOpen(fid, w, tag, size); done || err != nil {
			return done, err
		}
		return c.teach(fid, tag), nil
	case w != nil && w.opened != nil && (typ == msgTread || typ == msgTwrite):
		if done, err := c.fast(typ, tag, size); done || err != nil {
			return done, err
		}
		return c.teach(fid, tag), nil
	case w != nil && typ != msgTgetattr:
		return c.teach(fid, tag), nil
	}
	switch typ {
	case msgTflush:
		if size == headerLen+2 {
			if b, err := c.br.Peek(headerLen + 2); err == nil {
				c.awaitBackground(binary.LittleEndian.Uint16(b[headerLen:]))
			}
		}
	case msgTgetattr, msgTread, msgTwrite:
		if done, err := c.fast(typ, tag, size); done || err != nil {
			return done, err
		}
	case msgTrenameat, msgTrename, msgTunlinkat, msgTremove:
		if typ == msgTrenameat {
			if done, err := c.renameOntoItself(tag, size); done || err != nil {
				return done, err
			}
		}
		// p9 moves or marks the fids it knows below what changes; shim-only
		// fids are taught to it first.
		c.fmu.Lock()
		n, ok := c.fids.anyShimOnly()
		c.fmu.Unlock()
		if ok {
			return c.teach(n, tag), nil
		}
	}
	c.awaitOurs()
	switch typ {
	case msgTsetattr:
		c.noteSetattrMode(size)
	case msgTwalk:
		if done, err := c.answerWalk(tag, size); done || err != nil {
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
			if c.clunkHere(fid, size) {
				return c.answer(size, c.rclunk(tag))
			}
			c.forget(fid)
		}
	case msgTremove:
		if fid, ok := c.peekFid(size, headerLen); ok {
			c.forget(fid)
		}
	case msgTlopen:
		if fid, ok := c.peekFid(size, headerLen); ok {
			c.startOpening(tag, fid)
		}
	}
	return false, nil
}

// notDir says whether a request that acts in a directory names, as that
// directory, a fid the shim knows is not one: p9 refuses those with EINVAL
// before any file of ours is asked (its handlers test the fid's mode), where
// Linux, diod and the core answer ENOTDIR (mkdirat(2) in a file). The
// directory fids are Tlcreate's, Tsymlink's, Tmknod's, Tmkdir's and
// Tunlinkat's fid, Tlink's dfid (its first), Trename's dfid (its second)
// and both of Trenameat's. A fid whose type the shim does not know, or an
// open one (a misuse of the protocol, EINVAL), is left to p9, and so is
// Treaddir, which only an opened fid may send.
func (c *conn) notDir(typ uint8, named []uint32) bool {
	var dirs []uint32
	switch typ {
	case msgTlcreate, msgTsymlink, msgTmknod, msgTmkdir, msgTunlinkat, msgTlink, msgTrenameat:
		dirs = named
		if typ == msgTlink && len(dirs) > 1 {
			dirs = dirs[:1]
		}
	case msgTrename:
		if len(named) > 1 {
			dirs = named[1:2]
		}
	}
	c.fmu.Lock()
	defer c.fmu.Unlock()
	for _, fid := range dirs {
		if f := c.fids.fileOf(fid); f != nil && f.kind != 0 && !f.kind.IsDir() && f.open.Load() == nil {
			return true
		}
	}
	return false
}

// request is a reader of the buffered request's fields (after its header),
// when the whole request fits the read buffer; ok false otherwise, and the
// request is left to p9.
func (c *conn) request(size int) (r wireReader, ok bool) {
	if size > readBuffer {
		return wireReader{}, false
	}
	b, err := c.br.Peek(size)
	if err != nil {
		return wireReader{}, false
	}
	return wireReader{b: b[headerLen:]}, true
}

// symlinkTarget is the target of the buffered Tsymlink (fid[4] name[s]
// symtgt[s] gid[4]); ok false when it cannot be read whole.
func (c *conn) symlinkTarget(size int) (target string, ok bool) {
	r, ok := c.request(size)
	if !ok {
		return "", false
	}
	r.u32()
	r.str()
	target = r.str()
	r.u32()
	return target, !r.bad && len(r.b) == 0
}

// renameOntoItself answers a Trenameat of a name onto itself (one directory,
// one name), which p9 answers OK without asking any file of ours (its handler
// takes it for a no-op) even where no such name exists: the core's Rename
// answers as rename(2) does, ENOENT then. It runs in a goroutine, as p9's
// would: the lookup may wait for the disk. Anything else is p9's.
func (c *conn) renameOntoItself(tag uint16, size int) (bool, error) {
	r, ok := c.request(size)
	if !ok {
		return false, nil
	}
	ofid, oname, nfid, nname := r.u32(), r.str(), r.u32(), r.str()
	if r.bad || len(r.b) != 0 || oname != nname || server.CheckName("rename", oname) != nil {
		return false, nil
	}
	c.fmu.Lock()
	od, nd := c.fids.fileOf(ofid), c.fids.fileOf(nfid)
	c.fmu.Unlock()
	if od == nil || nd == nil || !od.kind.IsDir() || od.p() != nd.p() || od.dirOpen.Load() {
		return false, nil
	}
	p := server.Join(od.p(), oname)
	if _, err := c.br.Discard(size); err != nil {
		return true, io.ErrUnexpectedEOF
	}
	c.background(tag, func() []byte {
		if err := od.srv.fs.Rename(od.ctx, p, p); err != nil {
			return rlerror(tag, uint32(linux.ExtractErrno(toErrno(err))))
		}
		return []byte{headerLen, 0, 0, 0, msgRrenameat, byte(tag), byte(tag >> 8)}
	})
	return true, nil
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

// tableErr logs a transition the fid table refused (rate-limited: a client
// reusing a fid in flight can cause one): the request then goes on as if the
// transition had not been asked for, and the table is as it was.
func (c *conn) tableErr(err error) {
	if err == nil {
		return
	}
	if ok, held := c.srv.tableLog.allow(); ok {
		c.srv.log.Error("ninep: fid table refused a transition", "err", err,
			"remote", c.nc.RemoteAddr().String(), "similar_lines_held_back", held)
	}
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

// classify looks the named fids up: the first that is gone as far as the
// client can tell (clunked here: p9 would answer EBADF; stale: ESTALE), else
// the first shim-only one with its walk, else fidAbsent.
func (c *conn) classify(named []uint32) (uint32, fidState, *shimWalk) {
	c.fmu.Lock()
	defer c.fmu.Unlock()
	var w *shimWalk
	var wfid uint32
	for _, fid := range named {
		switch e := c.fids.get(fid); e.state {
		case fidClunkedHere, fidStale:
			return fid, e.state, nil
		case fidShimOnly:
			if w == nil {
				w, wfid = e.walk, fid
			}
		}
	}
	if w != nil {
		return wfid, fidShimOnly, w
	}
	return 0, fidAbsent, nil
}

// clunkHere decides whether the shim answers a Tclunk of fid itself (see
// above): the fid is p9's, not open, not the target of the fid-making request
// in flight, and the connection has room.
func (c *conn) clunkHere(fid uint32, size int) bool {
	if size != headerLen+4 {
		return false
	}
	c.fmu.Lock()
	defer c.fmu.Unlock()
	e := c.fids.get(fid)
	if e.state != fidP9 || e.children > 0 || e.file.open.Load() != nil || e.file.dirOpen.Load() || c.fids.clunked >= maxClunkedHere {
		return false
	}
	if mk := c.inflight; mk != nil && mk.fid == fid {
		return false
	}
	return c.fids.clunkHere(fid) == nil
}

// startMaking waits until no fid-making request is in flight and records this
// one. Called from Read (p9's receiving goroutine), before p9 receives it.
func (c *conn) startMaking(tag uint16, fid uint32) {
	c.claim(&c.inflight, tag, fid, func() error {
		// Untracked from now on: whatever the number was, p9 makes it
		// anew, and the shim follows no more.
		gone, err := c.fids.p9Took(fid)
		c.discardLocked(gone)
		return err
	})
}

// claim records the client's request tag, about fid, in slot (c.inflight for
// the fid-making requests, c.opening for a Tlopen p9 handles) once no other
// request holds it, waiting for that one's reply (awaitIn). Called from Read,
// before p9 receives the request. On a connection the shim no longer tracks
// (fids.givenUp: its tags were lost, or, in the decoder's fuzz test, no p9
// answers at all) it records nothing and calls untracked, if not nil, under
// fmu.
func (c *conn) claim(slot **fidRequest, tag uint16, fid uint32, untracked func() error) {
	for {
		c.fmu.Lock()
		if c.fids.givenUp {
			var err error
			if untracked != nil {
				err = untracked()
			}
			c.fmu.Unlock()
			c.tableErr(err)
			return
		}
		held := *slot
		if held == nil {
			*slot = &fidRequest{tag: tag, fid: fid, done: make(chan struct{})}
			c.fmu.Unlock()
			return
		}
		c.fmu.Unlock()
		c.awaitIn(slot, held)
	}
}

// awaitIn waits for r's reply (await: for as long as it takes, unless the
// connection's tags were lost) and, if await gave up on it, empties slot,
// so that the requests after it wait no more.
func (c *conn) awaitIn(slot **fidRequest, r *fidRequest) {
	c.await(r)
	c.fmu.Lock()
	if *slot == r {
		*slot = nil
	}
	c.fmu.Unlock()
}

// await waits for mk's reply. p9 answers every request it receives but one
// reusing a tag it has in flight, which the shim drops before p9 sees it
// (tags.go): so the reply comes, and await waits for it however long it takes
// (a snapshot holding a create), logging once that it waits. Giving up would
// cost more: the shim can no longer tell which *file p9 holds for which fid,
// and the fids it walked then answer ESTALE where p9 must learn them.
//
// On a connection whose tags the shim lost track of (a malformed request p9
// answered with NOTAG) the reply may never come, and the wait is bounded. For
// a client's request, by makeWait: the shim then gives up for this connection
// (see makeWait), with a log line and a count. For the shim's own request, by
// ownWait: given up on, its reply would reach the client under the tag of the
// request held back behind it, which p9 then answers too, so the connection
// is closed instead, with a log line.
func (c *conn) await(mk *fidRequest) {
	wait := time.Duration(c.srv.makeWait.Load())
	if mk.ours {
		wait = time.Duration(c.srv.ownWait.Load())
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	logged := false
	for {
		select {
		case <-mk.done:
			return
		case <-t.C:
		}
		if c.p9tags.lost.Load() {
			break
		}
		if !logged {
			logged = true
			c.srv.log.Warn("ninep: a walk, create, attach or open is taking long; this connection's requests wait for it",
				"remote", c.nc.RemoteAddr().String(), "tag", mk.tag, "waited", wait)
		}
		t.Reset(wait)
	}
	c.fmu.Lock()
	defer c.fmu.Unlock()
	if c.inflight != mk {
		return
	}
	c.inflight = nil
	c.fids.giveUp()
	if mk.ours {
		c.srv.log.Error("ninep: p9 did not answer the shim's own walk or open; the connection is closed (its tags were lost to a malformed request)",
			"remote", c.nc.RemoteAddr().String(), "tag", mk.tag, "waited", wait)
		c.nc.Close()
		return
	}
	c.srv.gaveUp.Add(1)
	c.srv.log.Warn("ninep: a walk, create or attach went unanswered on a connection that sent a malformed request; its reads, writes and stats go through p9 from now on (counted in semfs_fast_path_given_up_total)",
		"remote", c.nc.RemoteAddr().String(), "tag", mk.tag, "waited", wait)
}

// startOpening records the client's Tlopen of fid that p9 is about to
// handle, after any other still in flight. p9 v0.4.1 marks a fid opened
// (ref.opened, ref.openFlags) after its open returns, outside the fid's lock,
// while it serves the connection's next requests on other goroutines: a
// Treaddir or Tread of the same fid sent before the Rlopen (no kernel does;
// a pipelining or hostile client may) read that field as it was written, a
// data race inside p9 (FuzzServerConn's seed 3 under -race). So a request
// naming a fid p9 is opening waits for the open's reply (awaitNamed), as
// fid-making requests wait for each other (startMaking).
func (c *conn) startOpening(tag uint16, fid uint32) { c.claim(&c.opening, tag, fid, nil) }

// awaitNamed waits for the requests in flight that a request naming these
// fids must follow: the shim's own request about one of them (it teaches p9
// the fid), then the client's Tlopen p9 is handling of one of them
// (startOpening). Only this goroutine (Read's) starts either, so one look
// under fmu sees every one that can concern this request.
func (c *conn) awaitNamed(named []uint32) {
	c.fmu.Lock()
	mk, o := c.inflight, c.opening
	c.fmu.Unlock()
	if mk != nil && mk.ours && slices.Contains(named, mk.fid) {
		c.await(mk)
	}
	if o != nil && slices.Contains(named, o.fid) {
		c.awaitIn(&c.opening, o)
	}
}

// inFlight reads one of the connection's requests in flight (c.inflight or
// c.opening) under fmu.
func (c *conn) inFlight(slot **fidRequest) *fidRequest {
	c.fmu.Lock()
	defer c.fmu.Unlock()
	return *slot
}

// awaitIdle waits until no fid-making request is in flight.
func (c *conn) awaitIdle() {
	for mk := c.inFlight(&c.inflight); mk != nil; mk = c.inFlight(&c.inflight) {
		c.await(mk)
	}
}

// awaitOurs waits for the reply to the shim's own request, if one is in
// flight: every request that needs p9 comes after it (it carries the tag of a
// request still held back, see teach).
func (c *conn) awaitOurs() {
	if mk := c.inFlight(&c.inflight); mk != nil && mk.ours {
		c.await(mk)
	}
}

// made records a *file made for the fid-making request in flight.
func (c *conn) made(f *file) {
	c.fmu.Lock()
	if mk := c.inflight; mk != nil {
		mk.made = f
	}
	c.fmu.Unlock()
}

// replied sees the header of every reply p9 sends, before the client can, and
// reports whether to drop it (the reply to the shim's own request).
func (c *conn) replied(typ uint8, tag uint16) bool {
	c.fmu.Lock()
	defer c.fmu.Unlock()
	if o := c.opening; o != nil && tag == o.tag {
		c.opening = nil
		close(o.done)
	}
	mk := c.inflight
	if mk == nil {
		return false
	}
	if tag != mk.tag {
		// p9 answers a request it could not decode with tag NOTAG: if that
		// was the making request, its reply will never come. (The shim's
		// own requests always decode.)
		if tag == noTag && typ == msgRlerror && !mk.ours {
			c.inflight = nil
			close(mk.done)
		}
		return false
	}
	if h := c.handover; h != nil && mk.ours {
		// The shim's Tlcreate was refused before file.Create took the file.
		c.handover = nil
		go h.f.Close()
	}
	var gone *shimWalk
	var err error
	switch typ {
	case msgRwalk, msgRwalkgetattr, msgRlcreate, msgRucreate, msgRattach, msgRlopen:
		// p9 installed a new reference under mk.fid, dropping any it held
		// (Rlopen: only ever the shim's own Tlopen, whose file.Open kept the
		// reference the walk installed).
		f := mk.made
		if mk.dropped {
			f = nil
		}
		if mk.ours {
			err = c.fids.taught(mk.fid, f)
		} else {
			gone, err = c.fids.bind(mk.fid, f)
		}
	default:
		if mk.ours {
			// The client was told this fid exists; p9 could not walk it (or
			// take the shim's Tlcreate).
			gone, err = c.fids.teachFailed(mk.fid)
		}
	}
	c.discardLocked(gone)
	c.inflight = nil
	close(mk.done)
	c.tableErr(err)
	return mk.ours
}

// forget drops a fid the client is about to clunk or remove through p9.
func (c *conn) forget(fid uint32) {
	c.fmu.Lock()
	err := c.fids.forget(fid)
	if mk := c.inflight; mk != nil && mk.fid == fid {
		mk.dropped = true
	}
	c.fmu.Unlock()
	c.tableErr(err)
}

// lookup returns the *file the fast path answers for fid: p9's, or a
// shim-only fid's.
func (c *conn) lookup(fid uint32) *file {
	c.fmu.Lock()
	defer c.fmu.Unlock()
	return c.fids.fileFor(fid)
}

// isShimOnly reports whether fid is a shim-only fid (fidtable.go).
func (c *conn) isShimOnly(fid uint32) bool {
	c.fmu.Lock()
	defer c.fmu.Unlock()
	return c.fids.get(fid).state == fidShimOnly
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
		if !ok && c.isShimOnly(fid) {
			// Not all in the page cache, and p9 does not know the fid: read
			// from a goroutine, as p9 would.
			if _, err := c.br.Discard(size); err != nil {
				return true, io.ErrUnexpectedEOF
			}
			c.background(tag, func() []byte {
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
		if !ok && c.isShimOnly(fid) {
			// p9 does not know the fid: write from a goroutine, as p9 would.
			data := slices.Clone(data)
			c.background(tag, func() []byte {
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
			c.p9tags.add(tag)
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
