package ninep

import "fmt"

// The connection shim's fid table: what the shim knows of each fid number a
// client uses on one connection, one entry per fid, one state per entry. Every
// change of state is one of the transition methods below; a transition the
// table's state does not allow is refused with an error and changes nothing
// (the caller logs it, rate-limited, in conn.tableErr, and the request goes on
// as if the transition had not been asked for).
//
// Glossary (also docs/glossary.md):
//
//   - shim: the per-connection reader and writer in front of p9 (conn.go),
//     which answers the hot requests itself (fast.go, shimfids.go).
//   - p9's fid: a fid p9 holds in its own (private) table. The shim cannot read
//     that table; it learns which *file p9 holds for a fid by watching the
//     requests that make fids (see fid-making request) and their replies.
//   - fid-making request: a Tattach, Twalk, Tlcreate (and p9's Twalkgetattr,
//     Tucreate) whose success binds a fid to a new *file in p9's table. The
//     shim lets one be in flight per connection (fidRequest, fast.go).
//   - shim-only fid: a fid the shim walked (and perhaps created or opened)
//     itself, answering the client, and that p9 has not heard of
//     (shimfids.go). Its requests are the shim's until p9 must learn it.
//   - teaching p9 a fid: sending p9 the shim's own copy of the Twalk that made a
//     shim-only fid (and then of the Tlcreate or Tlopen the shim answered on
//     it), with the tag of a request held back, its replies dropped, so that p9
//     holds what it would have held had it answered those requests itself.
//   - hand-over: the second step of teaching p9 a created or opened shim-only
//     fid: p9's file.Create or file.Open is given the shim's open file instead
//     of creating or opening anything (handover, shimfids.go).
//   - clunked here: a fid whose Tclunk the shim answered while p9 still holds
//     a reference under that number (harmless: it holds no descriptor). The
//     shim answers EBADF for it until the number is made anew.
//   - stale fid: a fid the client was told exists but p9 could not be taught
//     (its walk failed, the tree changed meanwhile); answered ESTALE, as a file
//     that went away under an NFS handle, until the client clunks it.
//   - p9 holds an old reference (p9HoldsOld): under a shim-only or stale fid's
//     number, p9 still holds the reference of an earlier fid the shim clunked
//     here; when the client lets the fid go, the number is clunked here again.
//   - background reply: a reply to a request on a shim-only fid that a
//     goroutine of the shim's sends, because answering it waits (a disk read, a
//     write a snapshot holds, a close whose update has no room); p9 would have
//     answered it from a goroutine as well (shimfids.go, background).
//   - giving up: one fid-making request is in flight at a time, and the next
//     waits for its reply (fast.go, await), however long: p9 answers every
//     request the shim hands it (tags.go). Only on a connection whose tags
//     the shim lost (a malformed request) may the reply never come: there,
//     when a client's fid-making request goes unanswered for makeWait, the
//     shim can no longer tell which *file p9 holds for which fid; it stops
//     answering for the connection's fids, logs a line and counts
//     semfs_fast_path_given_up_total{protocol="9p"}. It never gives up on
//     its own requests (teaching, hand-over), whose replies it drops only
//     while they are in flight: such a connection whose own request p9
//     leaves unanswered for ownWait is closed instead.

// fidState is where one fid number stands between the client, the shim and p9.
type fidState uint8

const (
	// fidAbsent: no entry (the zero value of a lookup). p9 may still hold the
	// fid (one made before the shim gave up, an attribute fid): p9 decides.
	fidAbsent fidState = iota
	// fidP9: p9 holds the fid, and file is the *file it holds.
	fidP9
	// fidClunkedHere: the client clunked the fid and the shim answered; p9
	// still holds a reference under the number.
	fidClunkedHere
	// fidShimOnly: the shim walked the fid (walk) and p9 has not heard of it.
	fidShimOnly
	// fidTeachingWalk: the shim sent p9 its walk of a shim-only fid; the reply
	// decides (taught, teachFailed).
	fidTeachingWalk
	// fidHandingOver: p9 holds the walked fid (file) and is to be sent the
	// Tlcreate or Tlopen the shim answered on it (walk.opened) next.
	fidHandingOver
	// fidTeachingOpen: the shim sent p9 that Tlcreate or Tlopen; file is what
	// p9 held before it. The reply decides.
	fidTeachingOpen
	// fidStale: the client was told the fid exists; p9 could not be taught it.
	fidStale
)

var fidStateNames = [...]string{"absent", "p9", "clunked here", "shim-only", "teaching walk",
	"handing over", "teaching open", "stale"}

func (s fidState) String() string {
	if int(s) < len(fidStateNames) {
		return fidStateNames[s]
	}
	return fmt.Sprintf("fidState(%d)", uint8(s))
}

// fidEntry is one fid's entry. Which fields mean something depends on state.
type fidEntry struct {
	state fidState
	// file: fidP9, fidHandingOver, fidTeachingOpen: the *file p9 holds.
	file *file
	// walk: fidShimOnly, fidTeachingWalk, fidHandingOver: the shim's walk.
	walk *shimWalk
	// p9HoldsOld: fidShimOnly, fidTeachingWalk, fidStale: p9 holds an old
	// reference under this number (see the glossary).
	p9HoldsOld bool
	// children: fidP9: how many shim-only fids were walked from file.
	children int
}

// maxClunkedHere bounds the fids per connection clunked here (fast.go).
const maxClunkedHere = 1024

// fidTable is one connection's fid table, guarded by conn.fmu: every method
// has the precondition "c.fmu held".
type fidTable struct {
	m        map[uint32]fidEntry
	clunked  int  // entries in fidClunkedHere
	shimOnly int  // entries in fidShimOnly
	opens    int  // entries whose walk holds an open file p9 is to be handed: fidHandingOver, or fidTeachingWalk with walk.opened
	givenUp  bool // the shim answers for no fid of this connection any more (see giving up)
}

// fidTransitionError is a transition the entry's state does not allow.
type fidTransitionError struct {
	op   string
	fid  uint32
	from fidState
}

func (e *fidTransitionError) Error() string {
	return fmt.Sprintf("ninep: fid table: %s of fid %d refused in state %s", e.op, e.fid, e.from)
}

func refused(op string, fid uint32, from fidState) error {
	return &fidTransitionError{op: op, fid: fid, from: from}
}

// get returns fid's entry (state fidAbsent: none).
func (t *fidTable) get(fid uint32) fidEntry { return t.m[fid] }

// fileOf is the *file fid stands for where the shim knows it: p9's file of a
// fidP9, the shim's walk of a fidShimOnly; nil otherwise.
func (t *fidTable) fileOf(fid uint32) *file {
	switch e := t.m[fid]; e.state {
	case fidP9:
		return e.file
	case fidShimOnly:
		return e.walk.f
	}
	return nil
}

// put replaces fid's entry, keeping the counts. Every transition ends here.
func (t *fidTable) put(fid uint32, e fidEntry) {
	old := t.m[fid]
	t.count(old, -1)
	if e.state == fidAbsent {
		delete(t.m, fid)
		return
	}
	if t.m == nil {
		t.m = map[uint32]fidEntry{}
	}
	t.m[fid] = e
	t.count(e, +1)
}

func (t *fidTable) count(e fidEntry, d int) {
	switch e.state {
	case fidClunkedHere:
		t.clunked += d
	case fidShimOnly:
		t.shimOnly += d
	}
	if e.state == fidHandingOver || (e.state == fidTeachingWalk && e.walk.opened != nil) {
		t.opens += d
	}
}

// fileFor returns the *file the shim answers a request on fid with: a
// shim-only fid's, or p9's (nil: none the shim may use).
func (t *fidTable) fileFor(fid uint32) *file {
	switch e := t.m[fid]; e.state {
	case fidShimOnly:
		return e.walk.f
	case fidP9, fidHandingOver, fidTeachingOpen:
		return e.file
	}
	return nil
}

// p9File returns the *file p9 holds for fid, if the shim knows it.
func (t *fidTable) p9File(fid uint32) *file {
	switch e := t.m[fid]; e.state {
	case fidP9, fidHandingOver, fidTeachingOpen:
		return e.file
	}
	return nil
}

// bind records that p9 installed f under fid (an Rwalk, Rattach, Rlcreate… to
// a fid-making request of the client's), replacing whatever the number was;
// f nil: the client let the fid go meanwhile, so the shim knows nothing of it.
// It returns a shim-only walk it displaced, for the caller to discard. Refused
// while the shim is teaching p9 the fid (that request's reply is taught's).
func (t *fidTable) bind(fid uint32, f *file) (*shimWalk, error) {
	e := t.m[fid]
	switch e.state {
	case fidTeachingWalk, fidTeachingOpen:
		return nil, refused("bind", fid, e.state)
	}
	t.unlinkWalk(e)
	if f == nil {
		t.put(fid, fidEntry{})
	} else {
		t.put(fid, fidEntry{state: fidP9, file: f})
	}
	return e.walk, nil
}

// clunkHere records that the shim answered the client's Tclunk of p9's fid,
// which p9 keeps (see clunked here). Only a p9 fid no shim-only fid was walked
// from can be clunked here.
func (t *fidTable) clunkHere(fid uint32) error {
	e := t.m[fid]
	if e.state != fidP9 || e.children > 0 {
		return refused("clunk here", fid, e.state)
	}
	t.put(fid, fidEntry{state: fidClunkedHere})
	return nil
}

// forget records that the client's Tclunk or Tremove of fid goes to p9.
func (t *fidTable) forget(fid uint32) error {
	switch e := t.m[fid]; e.state {
	case fidAbsent:
		return nil
	case fidP9:
		if e.children > 0 {
			return refused("forget", fid, e.state)
		}
		t.put(fid, fidEntry{})
		return nil
	default:
		return refused("forget", fid, e.state)
	}
}

// p9Took records that p9 makes fid something the shim does not follow (an
// attribute fid of Txattrwalk), or, after giving up, anything at all: the
// entry goes, and a shim-only walk it held is returned for the caller to
// discard. Refused while the shim is teaching p9 the fid.
func (t *fidTable) p9Took(fid uint32) (*shimWalk, error) {
	e := t.m[fid]
	switch e.state {
	case fidTeachingWalk, fidTeachingOpen:
		return nil, refused("p9 took", fid, e.state)
	}
	t.unlinkWalk(e)
	t.put(fid, fidEntry{})
	return e.walk, nil
}

// walkHere records w, the shim's own walk, under fid (see shim-only fid). The
// number must be free as far as p9 can tell (absent, clunked here, stale, or
// shim-only, which the walk replaces as p9 would); w's source must be a p9 fid
// holding w.src. It returns a shim-only walk it replaced, for the caller to
// discard.
func (t *fidTable) walkHere(fid uint32, w *shimWalk) (*shimWalk, error) {
	e := t.m[fid]
	old := false
	switch e.state {
	case fidAbsent:
	case fidClunkedHere:
		old = true
	case fidStale, fidShimOnly:
		old = e.p9HoldsOld
	default:
		return nil, refused("walk here", fid, e.state)
	}
	src := t.m[w.from]
	if src.state != fidP9 || src.file != w.src || fid == w.from {
		return nil, refused("walk here from", w.from, src.state)
	}
	t.unlinkWalk(e)
	src = t.m[w.from] // unlinkWalk may have changed it
	src.children++
	t.m[w.from] = src
	t.put(fid, fidEntry{state: fidShimOnly, walk: w, p9HoldsOld: old})
	return e.walk, nil
}

// opened records that the shim answered a Tlcreate or Tlopen on shim-only fid
// (the walk's file is now nf, opened as o).
func (t *fidTable) opened(fid uint32, nf *file, o *opening) error {
	e := t.m[fid]
	if e.state != fidShimOnly || e.walk.opened != nil {
		return refused("open here", fid, e.state)
	}
	e.walk.f, e.walk.opened = nf, o
	return nil
}

// dropShimOnly records the client's Tclunk of shim-only fid, which p9 never
// hears of, and returns its walk.
func (t *fidTable) dropShimOnly(fid uint32) (*shimWalk, error) {
	e := t.m[fid]
	if e.state != fidShimOnly {
		return nil, refused("drop shim-only", fid, e.state)
	}
	t.unlinkWalk(e)
	t.put(fid, t.letGo(e.p9HoldsOld))
	return e.walk, nil
}

// dropStale records the client's Tclunk or Tremove of a stale fid.
func (t *fidTable) dropStale(fid uint32) error {
	e := t.m[fid]
	if e.state != fidStale {
		return refused("drop stale", fid, e.state)
	}
	t.put(fid, t.letGo(e.p9HoldsOld))
	return nil
}

// letGo is the entry of a number the client let go: clunked here if p9 still
// holds a reference under it, else none.
func (t *fidTable) letGo(p9HoldsOld bool) fidEntry {
	if p9HoldsOld {
		return fidEntry{state: fidClunkedHere}
	}
	return fidEntry{}
}

// teachWalk records that the shim sends p9 its walk of shim-only fid.
func (t *fidTable) teachWalk(fid uint32) error {
	e := t.m[fid]
	if e.state != fidShimOnly {
		return refused("teach walk", fid, e.state)
	}
	t.unlinkWalk(e)
	e.state = fidTeachingWalk
	t.put(fid, e)
	return nil
}

// handOver records that the shim sends p9 the Tlcreate or Tlopen it answered
// on fid, whose walk p9 holds.
func (t *fidTable) handOver(fid uint32) error {
	e := t.m[fid]
	if e.state != fidHandingOver {
		return refused("hand over", fid, e.state)
	}
	t.put(fid, fidEntry{state: fidTeachingOpen, file: e.file})
	return nil
}

// taught records p9's success for the shim's own request on fid: f is the
// *file p9 made (nil: none was reported). After the walk, a fid the shim
// opened is handed over next; the fid stays bound to the file the client was
// told of (file.id), even if p9's walk found another by now.
func (t *fidTable) taught(fid uint32, f *file) error {
	e := t.m[fid]
	switch {
	case e.state != fidTeachingWalk && e.state != fidTeachingOpen:
		return refused("taught", fid, e.state)
	case f == nil:
		t.put(fid, t.letGo(e.p9HoldsOld))
	case e.state == fidTeachingWalk:
		if id := e.walk.f.id.Load(); id != 0 {
			f.id.Store(id)
		}
		if e.walk.opened != nil {
			t.put(fid, fidEntry{state: fidHandingOver, file: f, walk: e.walk})
		} else {
			t.put(fid, fidEntry{state: fidP9, file: f})
		}
	default:
		t.put(fid, fidEntry{state: fidP9, file: f})
	}
	return nil
}

// teachFailed records p9's refusal of the shim's own request on fid: the fid
// is stale. It returns the walk whose open file nobody holds now (nil: none).
func (t *fidTable) teachFailed(fid uint32) (*shimWalk, error) {
	e := t.m[fid]
	switch e.state {
	case fidTeachingWalk:
		t.put(fid, fidEntry{state: fidStale, p9HoldsOld: e.p9HoldsOld})
		return e.walk, nil
	case fidTeachingOpen:
		// p9 holds what it walked to under the number.
		t.put(fid, fidEntry{state: fidStale, p9HoldsOld: true})
		return nil, nil
	}
	return nil, refused("teach failed", fid, e.state)
}

// lose records that a shim-only or handing-over fid cannot be taught to p9
// (the reference it was walked from is gone, or the shim gave up): it is
// stale. It returns the walk, for the caller to discard.
func (t *fidTable) lose(fid uint32) (*shimWalk, error) {
	e := t.m[fid]
	switch e.state {
	case fidShimOnly:
		t.unlinkWalk(e)
		t.put(fid, fidEntry{state: fidStale, p9HoldsOld: e.p9HoldsOld})
	case fidHandingOver:
		t.put(fid, fidEntry{state: fidStale, p9HoldsOld: true})
	default:
		return nil, refused("lose", fid, e.state)
	}
	return e.walk, nil
}

// giveUp records that the shim stops following p9's fids (see giving up): p9's
// fids leave the table, a fid being taught is stale; shim-only fids stay, to
// become stale when p9 must learn them.
func (t *fidTable) giveUp() {
	t.givenUp = true
	for fid, e := range t.m {
		switch e.state {
		case fidP9:
			t.put(fid, fidEntry{})
		case fidTeachingWalk:
			t.put(fid, fidEntry{state: fidStale, p9HoldsOld: true})
		case fidTeachingOpen:
			t.put(fid, fidEntry{state: fidStale, p9HoldsOld: true})
		}
	}
}

// unlinkWalk takes a shim-only entry's walk off its source's count.
func (t *fidTable) unlinkWalk(e fidEntry) {
	if e.state != fidShimOnly {
		return
	}
	src, ok := t.m[e.walk.from]
	if ok && src.state == fidP9 && src.file == e.walk.src && src.children > 0 {
		src.children--
		t.m[e.walk.from] = src
	}
}

// walkedFrom returns a shim-only fid walked from p9's fid src, if any.
func (t *fidTable) walkedFrom(src uint32) (uint32, bool) {
	if t.shimOnly == 0 {
		return 0, false
	}
	s := t.m[src]
	if s.state != fidP9 || s.children == 0 {
		return 0, false
	}
	for fid, e := range t.m {
		if e.state == fidShimOnly && e.walk.from == src && e.walk.src == s.file {
			return fid, true
		}
	}
	return 0, false
}

// anyShimOnly returns some shim-only fid.
func (t *fidTable) anyShimOnly() (uint32, bool) {
	if t.shimOnly == 0 {
		return 0, false
	}
	for fid, e := range t.m {
		if e.state == fidShimOnly {
			return fid, true
		}
	}
	return 0, false
}

// anyOpen returns some fid whose open file p9 is yet to be handed (see opens).
func (t *fidTable) anyOpen() (uint32, bool) {
	if t.opens == 0 {
		return 0, false
	}
	for fid, e := range t.m {
		if e.state == fidHandingOver || (e.state == fidTeachingWalk && e.walk.opened != nil) {
			return fid, true
		}
	}
	return 0, false
}

// openFiles returns the open files of shim-only fids p9 was never handed, for
// closing when the connection ends, and empties the table.
func (t *fidTable) openFiles() []*file {
	var fs []*file
	for _, e := range t.m {
		if e.walk != nil && e.walk.opened != nil {
			fs = append(fs, e.walk.f)
		}
	}
	*t = fidTable{givenUp: true}
	return fs
}
