package content

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/RoaringBitmap/roaring/v2"
)

// DefaultMax is the default size cap (--content-max): bigger files are not
// content-indexed.
const DefaultMax = 16 << 20

// binaryPrefix is how much of a file's start is looked at for a NUL byte, as
// GNU grep and git do.
const binaryPrefix = 8 << 10

// State says what the index holds of one regular file.
type State uint8

const (
	Indexed    State = iota + 1 // its trigrams are in the postings
	TooBig                      // over the size cap
	Binary                      // a NUL in its first 8 KiB
	NotUTF8                     // not valid UTF-8
	NotRegular                  // not a regular file (a symlink, a FIFO): never searched
)

func (s State) String() string {
	switch s {
	case Indexed:
		return "indexed"
	case TooBig:
		return "too big"
	case Binary:
		return "binary"
	case NotUTF8:
		return "not UTF-8"
	case NotRegular:
		return "not a regular file"
	}
	return "unknown"
}

// Files is how the index reads the export: the daemon's containment-safe core.
type Files interface {
	// Open opens p for reading as the daemon, never following a symlink nor
	// blocking (a FIFO), and calls use with the open file, closed when use
	// returns; an error (KindNotFound for a path that is gone) when p cannot
	// be opened, else use's.
	Open(ctx context.Context, p string, use func(FileReader) error) error
}

// FileReader is a file Files.Open opened, valid during the call it is
// handed to. The daemon's is not an *os.File: making one costs two system
// calls (fcntl, and an epoll registration a regular file refuses), and the
// indexers open every file written.
type FileReader interface {
	// Read reads as io.Reader does, from the file's start; it may return
	// fewer bytes than asked before the end (readAll counts on a short read
	// at the size Stat gave being the end).
	io.Reader
	Stat() (FileInfo, error)
}

// FileInfo is what the indexers need of an open file.
type FileInfo struct {
	Size    int64
	MTime   int64 // Unix ns
	Ino     uint64
	Links   uint64
	Regular bool
}

// Dir is a Files over a directory of the host, opened by path (a symlink
// on the way is followed): for tests and tools (index/eval). The daemon
// reads through its core.
type Dir string

// Open implements Files.
func (d Dir) Open(_ context.Context, p string, use func(FileReader) error) error {
	f, err := os.Open(filepath.Join(string(d), p))
	if err != nil {
		return err
	}
	defer f.Close()
	return use(osFile{f})
}

// osFile is an *os.File as a FileReader.
type osFile struct{ *os.File }

func (f osFile) Stat() (FileInfo, error) {
	fi, err := f.File.Stat()
	if err != nil {
		return FileInfo{}, err
	}
	out := FileInfo{Size: fi.Size(), MTime: fi.ModTime().UnixNano(), Regular: fi.Mode().IsRegular()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		out.Ino, out.Links = st.Ino, uint64(st.Nlink)
	}
	return out, nil
}

// Options configure Open.
type Options struct {
	Dir   string // where content.idx lives (the daemon's index directory)
	Max   int64  // size cap; 0 = DefaultMax
	Files Files
	Log   *slog.Logger
	// Requests, when set, counts the NFS and 9P requests the daemon has
	// answered: the worker waits for a pause in them before a batch
	// (Queue.Quiet).
	Requests func() uint64
}

// FileStat is one regular file as a walk of the backing directory saw it
// (Reconcile).
type FileStat struct {
	Path  string
	Size  int64
	MTime time.Time
}

// ChangeOp is the kind of a Change.
type ChangeOp uint8

const (
	Written ChangeOp = iota + 1 // Path was created or its bytes changed
	Renamed                     // Path (file or directory) moved to NewPath
	Removed                     // Path (file or directory) is gone
)

// Change is one event of the core's change stream, as the content index needs it.
type Change struct {
	Op      ChangeOp
	Path    string
	NewPath string
	IsDir   bool // Renamed: a directory moved
}

type entry struct {
	id    uint32 // valid when state == Indexed
	state State
	size  int64
	mtime int64  // UnixNano
	gen   uint64 // the dirty generation it was indexed at (Reconcile)
	ino   uint64 // inode number when read
	links bool   // it had other hard links when read: grep reads it directly, since a write through another name changes it unseen
}

// Index is the content index. Its methods are safe for concurrent use.
type Index struct {
	opt Options
	log *slog.Logger

	// mu guards the postings and entries. Never held while a file is read.
	mu         sync.RWMutex
	files      Table[*entry]
	paths      []string // id -> path, "" for a free or dead id
	post       *postings
	live       *roaring.Bitmap
	dead       *roaring.Bitmap
	free       []uint32
	bytes      int64               // text bytes of the indexed files
	states     [NotRegular + 1]int // entries by state: Stats reads the skipped counts here instead of walking every entry at each status poll
	byIno      map[uint64][]string // inode -> paths of entries with it (hard links)
	linked     map[string]bool     // paths of entries with links set
	changed    bool                // since the last Save
	lastChange time.Time           // of the entries (dueForSave)

	// q is the dirty set, the work queue and the renames and removals not
	// yet applied to files. Order: mu, then q's lock.
	q *Queue

	damaged string
	stop    chan struct{}
	done    chan struct{}
}

// Open loads the index from opt.Dir/content.idx, or starts an empty one when
// it is missing or damaged (Damaged says why); call Reconcile with a walk of
// the backing directory to bring it in line. The indexer goroutine runs until
// Close.
func Open(opt Options) (*Index, error) {
	if opt.Max <= 0 {
		opt.Max = DefaultMax
	}
	if opt.Files == nil {
		return nil, errors.New("content index: no Files")
	}
	x := &Index{opt: opt, log: opt.Log, q: NewQueue(), stop: make(chan struct{}), done: make(chan struct{})}
	if x.log == nil {
		x.log = slog.Default()
	}
	x.reset()
	if opt.Dir != "" {
		if err := x.load(); err != nil {
			if !errors.Is(err, os.ErrNotExist) {
				x.damaged = err.Error()
				x.log.Warn("content index unreadable; rebuilding it from the files", "err", err)
			} else {
				x.damaged = "missing"
			}
			x.reset()
		}
	}
	go x.run()
	return x, nil
}

func (x *Index) reset() {
	x.files = Table[*entry]{}
	x.paths = []string{""} // id 0 is never used
	x.post = newPostings()
	x.live = roaring.New()
	x.dead = roaring.New()
	x.free = nil
	x.bytes = 0
	x.states = [NotRegular + 1]int{}
	x.byIno = map[uint64][]string{}
	x.linked = map[string]bool{}
}

// Damaged is why the saved index was not used at Open ("" when it was,
// "missing" when there was none).
func (x *Index) Damaged() string { return x.damaged }

// Close stops the indexer and saves the index.
func (x *Index) Close() error {
	close(x.stop)
	<-x.done
	if x.opt.Dir == "" {
		return nil
	}
	return x.Save()
}

// Apply takes changes of the core's change stream (Queue.Apply). It never
// reads a file and never waits for a search.
func (x *Index) Apply(cs []Change) { x.q.Apply(cs) }

// drainLocked applies the pending renames and removals to the entries.
// Precondition: mu held for writing.
func (x *Index) drainLocked() {
	for _, c := range x.q.TakePending() {
		switch c.Op {
		case Renamed:
			if c.Path == c.NewPath {
				continue
			}
			x.files.Rename(c.Path, c.NewPath, x.dropLocked, func(p, np string, e *entry) {
				x.unlinkLocked(p, e)
				x.linkLocked(np, e)
				if e.state == Indexed {
					x.paths[e.id] = np
				}
			})
		case Removed:
			for _, p := range x.files.Within(c.Path) {
				x.dropLocked(p)
			}
		}
		x.changed = true
	}
}

// dropLocked forgets p's entry; its id is dead until compaction.
func (x *Index) dropLocked(p string) {
	e, ok := x.files.Get(p)
	if !ok {
		return
	}
	x.files.Delete(p)
	x.unlinkLocked(p, e)
	x.states[e.state]--
	if e.state == Indexed {
		x.live.Remove(e.id)
		x.dead.Add(e.id)
		x.paths[e.id] = ""
		x.bytes -= e.size
	}
	x.changed = true
}

// Begin returns the generation a walk for Reconcile starts at: changes newer
// than it win over what the walk saw.
func (x *Index) Begin() uint64 { return x.q.Begin() }

// Reconcile brings the index in line with a walk of the backing directory
// (scopes: the directories or files walked, nil for the whole export) begun at
// since (Begin): a file whose size, mtime or identity differs from its entry,
// or that has none, is queued; an entry the walk did not see, in a walked
// scope, is dropped, unless a change newer than the walk touched it.
func (x *Index) Reconcile(since uint64, scopes []string, walked []FileStat) {
	x.mu.Lock()
	x.drainLocked()
	gone, stale := Compare(&x.files, func(e *entry) Entry { return Entry{Size: e.size, MTime: e.mtime, Gen: e.gen} }, since, scopes, walked)
	x.q.Reconcile(since, gone, stale, x.dropLocked)
	x.mu.Unlock()
}

// Settle waits until the indexer has nothing left to do (tests, Close).
func (x *Index) Settle(ctx context.Context) error { return x.q.Wait(ctx) }

// Batch bounds: the indexer reads up to batchFiles queued files, or until
// their trigrams reach batchPairs, then installs them at once, one posting at
// a time (install): adding each file's trigrams to the postings one by one
// touched a different bitmap at every step, a cache miss each, and was most
// of the indexer's CPU. Each posting then takes one AddMany per batch, whose
// cost (finding the bitmap's container, growing its array) is per call, not
// per id: 2,048 files a batch instead of 256 took the indexer alone from 38–47
// to 63–70 MB of text per CPU-second on the corpus's Go tree (go test -bench
// IndexBuildCorpus, alternating). Bounds: 4 Mi pairs are 32 MiB, twice (the
// radix sort's scratch), released when the queue is empty (idle); an install
// holds the index's write lock a few times longer (greps wait for it, but
// never for a file's read).
const (
	batchFiles = 2048
	batchPairs = 4 << 20
)

// A Save holds the postings for as long as encoding them takes (greps wait),
// so the index is saved when its changes have stopped for saveQuiet, or at
// the latest saveEvery after the last save while they go on; and at Close.
// A crash loses nothing but indexing work: the start-up reconcile reads again
// what changed since the file was written.
// settleQuiet and settleMax bound the wait before a batch (Queue.Quiet): a file written through a
// mount is findable by contents (for meaning, later) within settleMax plus
// its read, and by grep at once, whatever else the daemon is asked.
const (
	settleQuiet = 50 * time.Millisecond
	settleMax   = time.Second
)

const (
	saveQuiet = 10 * time.Second
	saveEvery = 5 * time.Minute
)

func (x *Index) dueForSave(saved time.Time) bool {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.changed && (time.Since(x.lastChange) >= saveQuiet || time.Since(saved) >= saveEvery)
}

// run is the indexer: off every protocol's reply path, a batch at a time.
func (x *Index) run() {
	defer close(x.done)
	ix := newIndexer(x.opt.Max)
	saved := time.Now()
	tick := time.NewTicker(saveQuiet)
	defer tick.Stop()
	for {
		if !x.q.Working() {
			ix.release()
			select {
			case <-x.stop:
				return
			case <-x.q.Woken():
			case <-tick.C:
				if x.opt.Dir != "" && x.dueForSave(saved) {
					if err := x.Save(); err != nil {
						x.log.Warn("saving the content index", "err", err)
					}
					saved = time.Now()
				}
			}
			continue
		}
		if !x.q.Quiet(x.stop, settleQuiet, settleMax, x.opt.Requests) {
			return
		}
		ix.reset()
		for len(ix.batch) < batchFiles && len(ix.pairs) < batchPairs {
			p, g, ok, more := x.q.Pop()
			if !more {
				break
			}
			if ok {
				ix.add(x.opt.Files, p, g)
			}
		}
		select {
		case <-x.stop:
			return
		default:
		}
		x.install(ix)
	}
}

// install puts a batch read by the indexer into the postings: each file still
// at the generation it was read at gets a new id, then every trigram's new ids
// are added to its posting at once.
func (x *Index) install(ix *indexer) {
	ids := ix.ids[:0]
	x.mu.Lock()
	defer x.mu.Unlock()
	x.drainLocked()
	for i := range ix.batch {
		f := &ix.batch[i]
		ids = append(ids, 0)
		if !x.q.Done(f.path, f.gen) {
			continue // renamed, removed or written again: queued anew if it still matters
		}
		x.dropLocked(f.path)
		if f.err != nil {
			if !errors.Is(f.err, os.ErrNotExist) {
				x.log.Debug("content index: file unreadable", "path", f.path, "err", f.err)
			}
			continue
		}
		e := f.e
		e.gen = f.gen
		if e.state == Indexed {
			e.id = x.newIDLocked(f.path)
			ids[i] = e.id
			x.live.Add(e.id)
			x.bytes += e.size
		}
		x.files.Put(f.path, &e)
		x.states[e.state]++
		x.lastChange = time.Now()
		x.linkLocked(f.path, &e)
		if e.links {
			// Other names of this inode hold these bytes too: read them
			// again (a write through this name changed them unseen).
			for _, q := range x.byIno[e.ino] {
				if q != f.path {
					if o := x.files.At(q); o != nil && (o.size != e.size || o.mtime != e.mtime || !o.links) {
						x.q.Mark(q)
					}
				}
			}
		}
		x.changed = true
	}
	ix.ids = ids
	pairs := ix.sortPairs()
	buf := ix.idbuf[:0]
	for k := 0; k < len(pairs); {
		t := uint32(pairs[k] >> 32)
		buf = buf[:0]
		for ; k < len(pairs) && uint32(pairs[k]>>32) == t; k++ {
			if id := ids[uint32(pairs[k])]; id != 0 {
				buf = append(buf, id)
			}
		}
		if len(buf) == 0 {
			continue
		}
		x.post.getOrNew(t).AddMany(buf)
	}
	ix.idbuf = buf
	x.maybeCompactLocked()
}

func (x *Index) newIDLocked(p string) uint32 {
	if n := len(x.free); n > 0 {
		id := x.free[n-1]
		x.free = x.free[:n-1]
		x.paths[id] = p
		return id
	}
	x.paths = append(x.paths, p)
	return uint32(len(x.paths) - 1)
}

// maybeCompactLocked removes dead ids from every posting once they are a
// quarter of the live ones, and frees them for reuse.
func (x *Index) maybeCompactLocked() {
	d := x.dead.GetCardinality()
	if d < 256 || d*4 < x.live.GetCardinality() {
		return
	}
	x.compactLocked()
}

func (x *Index) compactLocked() {
	if x.dead.IsEmpty() {
		return
	}
	x.post.each(func(_ uint32, b *roaring.Bitmap) bool {
		b.AndNot(x.dead)
		if b.IsEmpty() {
			return false
		}
		b.RunOptimize()
		return true
	})
	it := x.dead.Iterator()
	for it.HasNext() {
		x.free = append(x.free, it.Next())
	}
	x.dead.Clear()
}

// indexer holds the indexer goroutine's batch and reusable buffers.
type indexer struct {
	max   int64
	buf   []byte
	seen  []uint64 // a bitset of every trigram, 2 MiB
	tris  []uint32
	batch []readFile
	pairs []uint64 // trigram<<32 | index in batch
	tmp   []uint64 // sortPairs' scratch
	ids   []uint32 // per batch index: the id given, 0 for none
	idbuf []uint32
}

// readFile is one file of a batch as the indexer read it.
type readFile struct {
	path string
	gen  uint64
	e    entry
	err  error
}

func (ix *indexer) reset() {
	ix.batch = ix.batch[:0]
	ix.pairs = ix.pairs[:0]
}

// release drops the big buffers once the queue is empty: a build's are tens
// of MiB, and the next batch (a few written files) needs little. Small ones
// stay, so that each write's batch does not allocate them again.
func (ix *indexer) release() {
	const keep = 1 << 16
	if cap(ix.pairs) > keep || cap(ix.tmp) > keep {
		ix.pairs, ix.tmp = nil, nil
	}
	if cap(ix.buf) > 16*keep {
		ix.buf = nil
	}
	if cap(ix.tris) > keep {
		ix.tris = nil
	}
	if cap(ix.batch) > 256 {
		ix.batch, ix.ids, ix.idbuf = nil, nil, nil
	}
}

// add reads p (dirty at generation g) into the batch.
func (ix *indexer) add(files Files, p string, g uint64) {
	e, tris, err := ix.read(files, p)
	n := uint64(len(ix.batch))
	ix.batch = append(ix.batch, readFile{path: p, gen: g, e: e, err: err})
	for _, t := range tris {
		ix.pairs = append(ix.pairs, uint64(t)<<32|n)
	}
}

// sortPairs sorts the batch's pairs by trigram, stably (files stay in batch
// order within a trigram, so ids mostly come in increasing order): an LSD
// radix sort on the trigram's three bytes.
func (ix *indexer) sortPairs() []uint64 {
	src := ix.pairs
	if cap(ix.tmp) < len(src) {
		ix.tmp = make([]uint64, len(src))
	}
	dst := ix.tmp[:len(src)]
	for shift := uint(32); shift < 56; shift += 8 {
		var count [257]int
		for _, v := range src {
			count[(v>>shift)&0xff+1]++
		}
		for i := 1; i < 257; i++ {
			count[i] += count[i-1]
		}
		for _, v := range src {
			b := (v >> shift) & 0xff
			dst[count[b]] = v
			count[b]++
		}
		src, dst = dst, src
	}
	// Three passes: the sorted pairs are in what was tmp; keep both buffers.
	ix.pairs, ix.tmp = dst, src
	return src
}

func newIndexer(max int64) *indexer {
	return &indexer{max: max, seen: make([]uint64, 1<<24/64)}
}

// read reads p and classifies it; for a text file within the cap, tris is its
// distinct trigrams (valid until the next call).
func (ix *indexer) read(files Files, p string) (e entry, tris []uint32, err error) {
	err = files.Open(context.Background(), p, func(f FileReader) error {
		fi, data, st, err := ReadText(f, ix.buf, ix.max)
		ix.buf = data
		if err != nil {
			return err
		}
		e.size, e.mtime, e.ino, e.links, e.state = fi.Size, fi.MTime, fi.Ino, fi.Links > 1, st
		if st == Indexed {
			tris = ix.trigrams(data)
		}
		return nil
	})
	if err != nil {
		return e, nil, err
	}
	return e, tris, nil
}

// ReadText reads an open file as the content indexes read it (this one and
// the passage index): its attributes, then, for a regular file within max
// bytes, its bytes into buf (reused; valid until buf's next use) and their
// state (classify). fi.Size is the bytes read when they were read whole. A
// file over max, or not regular, is not read (TooBig, NotRegular).
func ReadText(f FileReader, buf []byte, max int64) (fi FileInfo, data []byte, st State, err error) {
	if fi, err = f.Stat(); err != nil {
		return fi, buf, 0, err
	}
	if !fi.Regular {
		return fi, buf, NotRegular, nil
	}
	if fi.Size > max {
		return fi, buf, TooBig, nil
	}
	if data, err = readAll(f, buf, fi.Size, max); err != nil {
		return fi, data, 0, err
	}
	if int64(len(data)) > max {
		return fi, data, TooBig, nil
	}
	fi.Size = int64(len(data))
	return fi, data, classify(data), nil
}

// classify is the state of a file of these bytes within the cap.
func classify(data []byte) State {
	if bytes.IndexByte(data[:min(len(data), binaryPrefix)], 0) >= 0 {
		return Binary
	}
	if !utf8.Valid(data) {
		return NotUTF8
	}
	return Indexed
}

// readAll reads f into buf (reused), at most limit+1 bytes. size is f's size
// when the indexer opened it (-1 for grep, which reads to EOF): a read that
// ends short once size bytes are in is taken as the end, sparing each file the
// read that would only return EOF (a file written meanwhile is marked dirty by
// that write and read again).
func readAll(f io.Reader, buf []byte, size, limit int64) ([]byte, error) {
	buf = buf[:0]
	if want := min(size, limit) + 1; int64(cap(buf)) < want {
		buf = make([]byte, 0, max(want, 2*int64(cap(buf))))
	}
	for int64(len(buf)) <= limit {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		end := min(int64(cap(buf)), limit+1)
		n, err := f.Read(buf[len(buf):end])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
		if int64(len(buf)) == size && int64(n) < end-int64(len(buf)-n) {
			return buf, nil
		}
	}
	return buf, nil
}

// trigrams lists the distinct trigrams of data, through the seen bitset (left
// clear for the next call).
func (ix *indexer) trigrams(data []byte) []uint32 {
	tris := ix.tris[:0]
	if len(data) >= 3 {
		t := uint32(data[0])<<8 | uint32(data[1])
		for _, c := range data[2:] {
			t = (t<<8 | uint32(c)) & 0xffffff
			w, bit := t>>6, uint64(1)<<(t&63)
			if ix.seen[w]&bit == 0 {
				ix.seen[w] |= bit
				tris = append(tris, t)
			}
		}
	}
	for _, t := range tris {
		ix.seen[t>>6] = 0
	}
	ix.tris = tris
	return tris
}

// linkLocked and unlinkLocked keep byIno and linked in step with files.
func (x *Index) linkLocked(p string, e *entry) {
	if e.ino != 0 {
		x.byIno[e.ino] = append(x.byIno[e.ino], p)
	}
	if e.links {
		x.linked[p] = true
	}
}

func (x *Index) unlinkLocked(p string, e *entry) {
	if ps := x.byIno[e.ino]; len(ps) > 0 {
		ps = slices.DeleteFunc(ps, func(q string) bool { return q == p })
		if len(ps) == 0 {
			delete(x.byIno, e.ino)
		} else {
			x.byIno[e.ino] = ps
		}
	}
	delete(x.linked, p)
}
