package passage

import (
	"context"
	"errors"
	"hash/fnv"
	"log/slog"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/semfs/semfs/embed"
	"github.com/semfs/semfs/index/content"
	"github.com/semfs/semfs/index/int8vec"
	"github.com/semfs/semfs/index/signcode"
	"golang.org/x/sys/unix"
)

// DefaultCPU is the default share of one core the worker's embedding may use.
const DefaultCPU = 0.25

// Options configure Open.
type Options struct {
	Dir   string        // where passages.gob lives; "" keeps nothing on disk
	Max   int64         // size cap, as the content index's; 0 = content.DefaultMax
	Files content.Files // how the worker reads the export (as the daemon)
	// Embedder computes passage vectors; nil: words only. EmbedderFrom, when
	// set, is called once by the worker before its first embedding (the
	// daemon's model loads in the background).
	Embedder     embed.Embedder
	EmbedderFrom func() embed.Embedder
	// CPU is the share of one core embedding may take (0 < CPU <= 1); 0 means
	// DefaultCPU, a negative value turns embedding off.
	CPU float64
	Log *slog.Logger
	// Requests, when set, counts the NFS and 9P requests the daemon has
	// answered: the worker waits for a pause in them before a batch
	// (content.Queue.Quiet).
	Requests func() uint64
}

// file is one indexed version of a path.
type file struct {
	path        string
	size, mtime int64
	pids        []uint32
	gen         uint64 // the dirty generation it was read at
	fid         uint32 // its number in Index.byFid
	// oldWords: its passages' words were analysed by an older build
	// (wordsVersion); it is queued to be read again.
	oldWords bool
}

// pass is one passage. path "" marks a dead pid.
type pass struct {
	path  string
	span  span
	words int32
	hash  uint64
	vec   []float32
	nv    float64 // |vec|
}

// pmeta is what a query's word stage reads of every matching passage, kept
// apart from pass so that a scan of many postings reads 8 bytes a passage.
type pmeta struct {
	fid   uint32 // its file's, 0: a dead pid
	words int32
}

// postings are a word's passages and its count in each (ids[i], tf[i]).
type postings struct {
	ids []uint32
	tf  []uint16
}

type termTF struct {
	term string
	tf   uint16
}

// Index is the passage index. Its methods are safe for concurrent use.
type Index struct {
	opt Options
	log *slog.Logger

	// mu guards files, passes, postings, the per-pid arrays and the
	// counters. Never held while a file is read or a text embedded.
	mu       sync.RWMutex
	files    content.Table[*file]
	passes   []pass   // by pid; pid 0 is never used
	meta     []pmeta  // by pid
	byFid    []*file  // by fid; fid 0 is never used
	freeFids []uint32 // fids of dropped files, for reuse
	post     map[string]*postings
	free     []uint32
	// A group is the passages whose vectors are equal (copies of one text:
	// copied files, a template, a page written over and over), of dims
	// components: the meaning scan compares the query with each group once.
	// groups are their passages by vid (0 is never used), in increasing
	// order when more than one (lead says), else nil; byHash finds the
	// groups of a text hash: its first group, then nextOfHash's (0: the
	// last) when the text's passages have more than one vector (a hash's
	// collision, an embedder not bit-exact from call to call, a test's own
	// vector); the vectors are compared before a passage joins; freeVids are
	// vids to reuse; vids is the groups in use.
	groups     [][]uint32
	byHash     map[uint64]uint32
	nextOfHash []uint32 // by vid
	freeVids   []uint32
	vids       int
	// lead is each vid's lowest pid (0: a free vid), with manyBit set when
	// the group has more, in groups: the meaning scan offers a group of one
	// (most groups) without reading groups.
	lead []uint32
	// vidOf is each pid's group (0: no vector, or one of another length);
	// apart from pass, so that the scan's sample reads 4 bytes a passage.
	vidOf []uint32
	// The groups' sign bits, codeWords a vid (bit j set when component j
	// is > 0), for the coarse pass of a large meaning scan (search.go); coded
	// says which vids are in use.
	codes []uint64
	coded []bool
	// The groups' int8 copies, dims a vid, and their factors (int8vec):
	// the approximate cosines of the meaning scan, for vids coded.
	q8            []int8
	q8f           []float32
	dims          int
	exhaustiveMax int // meaning scans of up to this many vectors read every one; 0: exhaustiveMax
	// scratchPool keeps queries' working memory (*scratch) between them.
	scratchPool sync.Pool
	dead        int
	words       int64 // of live passages, for BM25's average length
	live        int
	bytes       int64
	model       string // the vectors' model ("" none yet)
	embedded    int    // live passages with a vector
	changed     bool
	lastMod     time.Time

	// q is the dirty set, the work queue and the renames and removals not
	// yet applied to files (content's Queue). Order: mu, then q's lock.
	q *content.Queue

	// texts keeps the bytes answers read of their files' passages.
	texts texts

	emb     embed.Embedder // the worker's only (embedder)
	embOnce sync.Once
	damaged string
	stop    chan struct{}
	done    chan struct{}
}

// Open loads the index from opt.Dir, or starts empty (Damaged says why), and
// starts the worker.
func Open(opt Options) (*Index, error) {
	if opt.Max <= 0 {
		opt.Max = content.DefaultMax
	}
	if opt.CPU == 0 {
		opt.CPU = DefaultCPU
	}
	if opt.CPU > 1 {
		opt.CPU = 1
	}
	if opt.Files == nil {
		return nil, errors.New("passage index: no Files")
	}
	x := &Index{opt: opt, log: opt.Log, q: content.NewQueue(), stop: make(chan struct{}), done: make(chan struct{}), emb: opt.Embedder}
	if x.log == nil {
		x.log = slog.Default()
	}
	x.reset()
	if opt.Dir != "" {
		if err := x.load(); err != nil {
			if errors.Is(err, os.ErrNotExist) {
				x.damaged = "missing"
			} else {
				x.damaged = err.Error()
				x.log.Warn("passage index unreadable; rebuilding it from the files", "err", err)
			}
			x.reset()
		} else if old := x.oldWordFiles(); len(old) > 0 {
			// Words analysed by an older build: each such file is read
			// again (its passages keep their vectors, by text hash:
			// index), and answers use the old words until then. Until the
			// last is, Save says so, and a restart reads them again.
			x.log.Info("passage index: words analysed by an older build; reading the files again", "files", len(old))
			x.q.Mark(old...)
		}
	}
	go x.run()
	return x, nil
}

// oldWordFiles lists the files whose words an older analysis made.
func (x *Index) oldWordFiles() []string {
	var out []string
	for p, e := range x.files.All() {
		if e.oldWords {
			out = append(out, p)
		}
	}
	return out
}

func (x *Index) reset() {
	x.files = content.Table[*file]{}
	x.passes = make([]pass, 1)
	x.meta = make([]pmeta, 1)
	x.byFid = make([]*file, 1)
	x.freeFids = nil
	x.post = map[string]*postings{}
	x.groups, x.byHash, x.freeVids, x.vids, x.lead = make([][]uint32, 1), map[uint64]uint32{}, nil, 0, make([]uint32, 1)
	x.nextOfHash = make([]uint32, 1)
	x.vidOf = make([]uint32, 1)
	x.codes, x.coded, x.q8, x.q8f, x.dims = nil, make([]bool, 1), nil, nil, 0
	x.free, x.dead, x.words, x.live, x.bytes, x.embedded = nil, 0, 0, 0, 0, 0
}

// Damaged is why the saved index was not used at Open ("" when it was,
// "missing" when there was none).
func (x *Index) Damaged() string { return x.damaged }

// Close stops the worker and saves the index.
func (x *Index) Close() error {
	close(x.stop)
	<-x.done
	if x.opt.Dir == "" {
		return nil
	}
	return x.Save()
}

// Apply takes changes of the core's change stream (content.Queue.Apply): it
// only queues paths and records moves; the worker does the rest.
func (x *Index) Apply(cs []content.Change) {
	x.texts.forget(cs)
	x.q.Apply(cs)
}

// Begin returns the generation a walk for Reconcile starts at.
func (x *Index) Begin() uint64 { return x.q.Begin() }

// Reconcile brings the index in line with a walk of the whole export begun at
// since (Begin), of scopes (directories or files; nil: the whole export): a file whose size or mtime differs from its entry, or that has
// none, is queued; an entry the walk did not see is dropped, unless a newer
// change touched it.
func (x *Index) Reconcile(since uint64, scopes []string, walked []content.FileStat) {
	x.mu.Lock()
	x.drainLocked()
	gone, stale := content.Compare(&x.files, func(e *file) content.Entry { return content.Entry{Size: e.size, MTime: e.mtime, Gen: e.gen} }, since, scopes, walked)
	x.q.Reconcile(since, gone, stale, x.dropLocked)
	x.mu.Unlock()
}

// drainLocked applies the pending renames and removals. Precondition: mu held
// for writing.
func (x *Index) drainLocked() {
	for _, c := range x.q.TakePending() {
		switch c.Op {
		case content.Renamed:
			if c.Path == c.NewPath {
				continue
			}
			x.files.Rename(c.Path, c.NewPath, x.dropLocked, func(_, np string, e *file) {
				e.path = np
				for _, id := range e.pids {
					x.passes[id].path = np
				}
			})
		case content.Removed:
			for _, p := range x.files.Within(c.Path) {
				x.dropLocked(p)
			}
		}
		x.changed, x.lastMod = true, time.Now()
	}
}

// dropLocked forgets p's entry; its pids are dead until compaction.
func (x *Index) dropLocked(p string) {
	e, ok := x.files.Get(p)
	if !ok {
		return
	}
	x.files.Delete(p)
	for _, id := range e.pids {
		ps := &x.passes[id]
		x.words -= int64(ps.words)
		if ps.vec != nil {
			x.embedded--
		}
		x.leaveGroupLocked(id)
		*ps = pass{}
		x.meta[id] = pmeta{}
		x.dead++
		x.live--
	}
	x.byFid[e.fid] = nil
	x.freeFids = append(x.freeFids, e.fid)
	x.bytes -= e.size
	x.changed, x.lastMod = true, time.Now()
}

// Settle waits until the worker has nothing left to do, vectors included
// (tests, evaluation).
func (x *Index) Settle(ctx context.Context) error { return x.q.Wait(ctx) }

const (
	settleQuiet = 50 * time.Millisecond
	settleMax   = time.Second
	saveQuiet   = 10 * time.Second
	saveEvery   = 5 * time.Minute
	embedBatch  = 16
	batchFiles  = 64
)

// run is the worker: off every protocol's reply path, one file at a time.
func (x *Index) run() {
	defer close(x.done)
	// A thread of its own at the lowest priority: the kernel gives the
	// protocols' threads the CPU first. Embedding runs on it too (embed.Serial).
	runtime.LockOSThread()
	_ = unix.Setpriority(unix.PRIO_PROCESS, unix.Gettid(), 19)
	saved := time.Now()
	tick := time.NewTicker(saveQuiet)
	defer tick.Stop()
	var w workspace
	for {
		if !x.q.Working() {
			w.owed = 0 // waiting for work is rest too
			select {
			case <-x.stop:
				return
			case <-x.q.Woken():
			case <-tick.C:
				if x.opt.Dir != "" && x.dueForSave(saved) {
					if err := x.Save(); err != nil {
						x.log.Warn("saving the passage index", "err", err)
					}
					saved = time.Now()
				}
			}
			continue
		}
		if !x.q.Quiet(x.stop, settleQuiet, settleMax, x.opt.Requests) {
			return
		}
		// Up to batchFiles files per settle: a burst is read after it
		// stops, then file after file.
		for range batchFiles {
			p, g, ok, more := x.q.Pop()
			if !more {
				break
			}
			if ok {
				x.index(p, g, &w)
			}
			select {
			case <-x.stop:
				return
			default:
			}
		}
	}
}

func (x *Index) dueForSave(saved time.Time) bool {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.changed && (time.Since(x.lastMod) >= saveQuiet || time.Since(saved) >= saveEvery)
}

// workspace is what the worker keeps from file to file: the read buffer, the
// cutting's working memory and the rest its work has earned and not yet
// taken (rest). One goroutine owns it.
type workspace struct {
	buf  []byte
	cut  cutter
	owed time.Duration
}

// cut is one passage of a file as split and analysed before the index's lock
// is taken: its span, word count, text hash and distinct terms with their
// counts, in the order first met.
type cut struct {
	span  span
	words int32
	hash  uint64
	terms []termTF
}

// cutter is cutText's memory, kept from file to file so that a file's cutting
// allocates next to nothing (new files come in bursts of thousands): the
// words' analyses, a passage's terms seen so far, every passage's terms one
// after the other, and the cuts. What one call returns is valid until the
// next.
type cutter struct {
	memo  wordMemo
	seen  map[string]int32 // a term's index in terms, within the passage being cut
	terms []termTF
	cuts  []cut
}

// cutText splits text into passages and analyses each.
func (c *cutter) cutText(text []byte) []cut {
	spans := split(text)
	if c.seen == nil {
		c.seen = make(map[string]int32, 64)
	}
	c.terms, c.cuts = c.terms[:0], c.cuts[:0]
	s := string(text) // one copy for all the passages: the terms cut from it outlive text's buffer
	for _, sp := range spans {
		body := s[sp.start:sp.end]
		k := cut{span: sp}
		first := len(c.terms)
		clear(c.seen)
		c.memo.terms(body, func(t string) {
			k.words++
			if i, ok := c.seen[t]; ok {
				if c.terms[i].tf < 0xffff {
					c.terms[i].tf++
				}
				return
			}
			c.seen[t] = int32(len(c.terms))
			c.terms = append(c.terms, termTF{t, 1})
		})
		k.terms = c.terms[first:len(c.terms):len(c.terms)]
		h := fnv.New64a()
		h.Write(text[sp.start:sp.end])
		k.hash = h.Sum64()
		c.cuts = append(c.cuts, k)
	}
	return c.cuts
}

// index reads p (dirty at generation g), splits and analyses it, installs its
// passages' words at once, then embeds them under the CPU budget and installs
// the vectors.
func (x *Index) index(p string, g uint64, w *workspace) {
	start := time.Now()
	defer func() { x.rest(w, time.Since(start)) }() // reading and splitting, within the budget too
	size, mtime, text, ok, err := x.read(p, w.buf)
	w.buf = text[:0]
	var cuts []cut
	if err == nil && ok {
		cuts = w.cut.cutText(text) // outside the lock: searches go on meanwhile
	}
	x.mu.Lock()
	x.drainLocked()
	if !x.q.Done(p, g) {
		x.mu.Unlock()
		return
	}
	old := map[uint64][]float32{} // by text hash: passages that did not change keep their vectors
	oldModel := x.model
	if e := x.files.At(p); e != nil {
		for _, id := range e.pids {
			if v := x.passes[id].vec; v != nil {
				old[x.passes[id].hash] = v
			}
		}
	}
	x.dropLocked(p)
	if err != nil || !ok {
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			x.log.Debug("passage index: file unreadable", "path", p, "err", err)
		}
		x.mu.Unlock()
		return
	}
	e := &file{path: p, size: size, mtime: mtime, gen: g, pids: make([]uint32, 0, len(cuts))}
	x.newFidLocked(e)
	var need []uint32
	for _, c := range cuts {
		n := c.words
		ps := pass{path: p, span: c.span, words: n, hash: c.hash}
		id := x.newPidLocked()
		x.passes[id] = ps
		x.meta[id] = pmeta{fid: e.fid, words: n}
		for _, t := range c.terms {
			x.postLocked(t.term, id, t.tf)
		}
		if v, ok := old[ps.hash]; ok && oldModel == x.model {
			x.setVecLocked(id, v)
		} else if vid := x.byHash[ps.hash]; vid != 0 {
			// A copy of a text the index holds: its vector, not another
			// forward pass (setVecLocked finds the group again).
			x.setVecLocked(id, x.passes[x.lead[vid]&^manyBit].vec)
		}
		e.pids = append(e.pids, id)
		x.words += int64(n)
		x.live++
		if x.passes[id].vec == nil {
			need = append(need, id)
		}
	}
	x.files.Put(p, e)
	x.bytes += size
	x.changed, x.lastMod = true, time.Now()
	x.maybeCompactLocked()
	x.mu.Unlock()
	x.rest(w, time.Since(start))
	x.embed(w, p, e, need, text)
	start = time.Now()
}

// restMin is the shortest rest the worker takes: below it, rest is owed and
// taken with the next. A sleep of the worker's locked thread costs a timer and
// two thread switches; a small file's reading and splitting (tens of µs) each
// paid one or two.
const restMin = 10 * time.Millisecond

// rest sleeps after took of work so that the worker's work takes at most the
// budget's share of a core (Options.CPU; DefaultCPU for words alone when
// embedding is off), over spans of restMin or more.
func (x *Index) rest(w *workspace, took time.Duration) {
	f := x.opt.CPU
	if f <= 0 {
		f = DefaultCPU
	}
	var d time.Duration
	if d, w.owed = owe(w.owed, took, f); d == 0 {
		return
	}
	select {
	case <-x.stop:
	case <-time.After(d):
	}
}

// owe adds the rest took of work earns at a budget of f of a core to owed,
// and says how long to sleep now (0 while the total is below restMin) and
// what stays owed.
func owe(owed, took time.Duration, f float64) (sleep, left time.Duration) {
	if f >= 1 {
		return 0, 0
	}
	owed += time.Duration(float64(took) * (1 - f) / f)
	if owed < restMin {
		return 0, owed
	}
	return owed, 0
}

// embed computes the vectors of p's passages need (of version e, whose text
// is text) in batches, sleeping after each so that embedding takes at most
// opt.CPU of a core, and installs them if e is still p's version.
func (x *Index) embed(w *workspace, p string, e *file, need []uint32, text []byte) {
	emb := x.embedder()
	if emb == nil || len(need) == 0 {
		return
	}
	for len(need) > 0 {
		n := min(len(need), embedBatch)
		batch := need[:n]
		need = need[n:]
		texts := make([]string, 0, n)
		x.mu.RLock()
		if x.files.At(p) != e {
			x.mu.RUnlock()
			return // written, moved or removed meanwhile: its next version is queued
		}
		for _, id := range batch {
			sp := x.passes[id].span
			texts = append(texts, string(text[sp.start:sp.end]))
		}
		x.mu.RUnlock()
		start := time.Now()
		// Serial: the forward passes run here, on the worker's nice-19 thread.
		vecs, err := emb.Embed(embed.Serial(context.Background()), texts)
		took := time.Since(start)
		if err != nil {
			x.log.Warn("passage index: embedding", "path", p, "err", err)
			return
		}
		x.mu.Lock()
		if x.model != emb.Name() {
			x.dropVectorsLocked()
			x.model = emb.Name()
		}
		if x.files.At(p) == e {
			for i, id := range batch {
				x.setVecLocked(id, vecs[i])
			}
			x.changed, x.lastMod = true, time.Now()
		}
		x.mu.Unlock()
		x.rest(w, took)
	}
}

// embedder is the model, once loaded; nil when embedding is off or there is
// none.
func (x *Index) embedder() embed.Embedder {
	if x.opt.CPU < 0 {
		return nil
	}
	x.embOnce.Do(func() {
		if x.emb == nil && x.opt.EmbedderFrom != nil {
			x.emb = x.opt.EmbedderFrom()
		}
	})
	return x.emb
}

// setVecLocked installs v as passage id's vector, with its norm; a vector
// of dims components joins the group of its equals, or starts one with its
// sign bits and int8 copy. Precondition: mu held for writing.
func (x *Index) setVecLocked(id uint32, v []float32) {
	ps := &x.passes[id]
	if ps.vec == nil {
		x.embedded++
	}
	x.leaveGroupLocked(id)
	ps.vec, ps.nv = v, norm(v)
	if x.dims == 0 {
		x.dims = len(v)
	}
	if len(v) != x.dims {
		return // the float32 scan of another length compares lengths itself
	}
	// The group of this vector among the text's: not only the first, or
	// each passage of a second vector would start a group of its own.
	vid := x.byHash[ps.hash]
	for ; vid != 0; vid = x.nextOfHash[vid] {
		if same := x.passes[x.lead[vid]&^manyBit].vec; slices.Equal(same, v) {
			ps.vec = same // one array for the copies: 4 bytes a component each saved
			break
		}
	}
	if vid == 0 {
		vid = x.newVidLocked(ps.hash, v)
	}
	x.joinLocked(vid, id)
	x.vidOf[id] = vid
}

// manyBit marks a lead entry whose group has more than one passage.
const manyBit = 1 << 31

// joinLocked adds passage id to group vid. A group of one is its lead
// alone, with no pids: no allocation a passage for the many that have no
// copy. Precondition: mu held for writing.
func (x *Index) joinLocked(vid, id uint32) {
	l := x.lead[vid]
	if l == 0 {
		x.lead[vid] = id
		return
	}
	g := &x.groups[vid]
	if l&manyBit == 0 {
		*g = append((*g)[:0], l)
	}
	// New pids come last but for reused ones.
	at, _ := slices.BinarySearch(*g, id)
	*g = slices.Insert(*g, at, id)
	x.lead[vid] = (*g)[0] | manyBit
}

// newVidLocked starts a group for vector v of dims components, for passages
// of text hash h. Precondition: mu held for writing.
func (x *Index) newVidLocked(h uint64, v []float32) uint32 {
	var vid uint32
	if n := len(x.freeVids); n > 0 {
		vid = x.freeVids[n-1]
		x.freeVids = x.freeVids[:n-1]
	} else {
		x.groups = append(x.groups, nil)
		x.coded = append(x.coded, false)
		x.lead = append(x.lead, 0)
		x.nextOfHash = append(x.nextOfHash, 0)
		vid = uint32(len(x.groups) - 1)
	}
	// The text's last group: its first stays first (index copies its
	// vector to a new copy of the text).
	if last := x.byHash[h]; last == 0 {
		x.byHash[h] = vid
	} else {
		for x.nextOfHash[last] != 0 {
			last = x.nextOfHash[last]
		}
		x.nextOfHash[last] = vid
	}
	// Room for half as many groups again when it grows: one allocation for
	// a load, a few as the index grows.
	w, d, n := signcode.Words(x.dims), x.dims, len(x.groups)+len(x.groups)/2
	x.codes = perPid(x.codes, vid, w, n)
	signcode.Put(x.codes[int(vid)*w:(int(vid)+1)*w], v)
	x.q8 = perPid(x.q8, vid, d, n)
	x.q8f = perPid(x.q8f, vid, 1, n)
	x.q8f[vid] = int8vec.Put(x.q8[int(vid)*d:(int(vid)+1)*d], v)
	x.coded[vid] = true
	x.vids++
	return vid
}

// leaveGroupLocked takes passage id out of its vector's group, and frees the
// group when it was the last. Precondition: mu held for writing.
func (x *Index) leaveGroupLocked(id uint32) {
	vid := x.vidOf[id]
	if vid == 0 {
		return
	}
	x.vidOf[id] = 0
	g := &x.groups[vid]
	if x.lead[vid]&manyBit != 0 {
		if at, ok := slices.BinarySearch(*g, id); ok && at == 0 {
			*g = (*g)[1:] // a tree removed in order: no copy of the rest each time
		} else if ok {
			*g = slices.Delete(*g, at, at+1)
		}
		if len(*g) > 1 {
			x.lead[vid] = (*g)[0] | manyBit
		} else {
			x.lead[vid], *g = (*g)[0], nil
		}
		return
	}
	// Its last passage: the group's hash is its (the callers leave a
	// passage before they change it). The text's other groups stay found.
	h, next := x.passes[id].hash, x.nextOfHash[vid]
	if first := x.byHash[h]; first == vid && next != 0 {
		x.byHash[h] = next
	} else if first == vid {
		delete(x.byHash, h)
	} else {
		for p := first; p != 0; p = x.nextOfHash[p] {
			if x.nextOfHash[p] == vid {
				x.nextOfHash[p] = next
				break
			}
		}
	}
	x.nextOfHash[vid] = 0
	x.lead[vid] = 0
	x.coded[vid] = false
	x.freeVids = append(x.freeVids, vid)
	x.vids--
}

// perPid grows s, an array of per entries a pid (or a vid), to hold entry
// id, and room for n entries when it grows (the entries the index has: one
// allocation for a load, not one an entry).
func perPid[T any](s []T, id uint32, per, n int) []T {
	if need := (int(id) + 1) * per; len(s) < need {
		s = append(s, make([]T, max(need, n*per)-len(s))...)
	}
	return s
}

// dropVectorsLocked forgets every vector (another model's).
func (x *Index) dropVectorsLocked() {
	for i := range x.passes {
		x.passes[i].vec, x.passes[i].nv = nil, 0
	}
	clear(x.vidOf)
	x.groups, x.byHash, x.freeVids, x.vids, x.lead = make([][]uint32, 1), map[uint64]uint32{}, nil, 0, make([]uint32, 1)
	x.nextOfHash = make([]uint32, 1)
	x.codes, x.coded, x.q8, x.q8f, x.dims = nil, make([]bool, 1), nil, nil, 0
	x.embedded = 0
}

func (x *Index) newPidLocked() uint32 {
	if n := len(x.free); n > 0 {
		id := x.free[n-1]
		x.free = x.free[:n-1]
		return id
	}
	x.passes = append(x.passes, pass{})
	x.meta = append(x.meta, pmeta{})
	x.vidOf = append(x.vidOf, 0)
	return uint32(len(x.passes) - 1)
}

// newFidLocked numbers e.
func (x *Index) newFidLocked(e *file) {
	if n := len(x.freeFids); n > 0 {
		e.fid = x.freeFids[n-1]
		x.freeFids = x.freeFids[:n-1]
	} else {
		x.byFid = append(x.byFid, nil)
		e.fid = uint32(len(x.byFid) - 1)
	}
	x.byFid[e.fid] = e
}

// postLocked adds passage id, holding term t tf times, to t's postings.
func (x *Index) postLocked(t string, id uint32, tf uint16) {
	pl := x.post[t]
	if pl == nil {
		// A copy: a word cut from the text would keep the text alive.
		pl = &postings{}
		x.post[strings.Clone(t)] = pl
	}
	pl.ids = append(pl.ids, id)
	pl.tf = append(pl.tf, tf)
}

// maybeCompactLocked removes dead pids from the postings once they are a
// quarter of the live ones, and frees them.
func (x *Index) maybeCompactLocked() {
	if x.dead < 1024 || x.dead*4 < x.live {
		return
	}
	for t, pl := range x.post {
		n := 0
		for i, id := range pl.ids {
			if x.meta[id].fid != 0 {
				pl.ids[n], pl.tf[n] = id, pl.tf[i]
				n++
			}
		}
		if n == 0 {
			delete(x.post, t)
		} else {
			pl.ids, pl.tf = pl.ids[:n], pl.tf[:n]
		}
	}
	x.free = x.free[:0]
	for id := 1; id < len(x.passes); id++ {
		if x.passes[id].path == "" {
			x.free = append(x.free, uint32(id))
		}
	}
	x.dead = 0
}

// read reads p as the daemon, as the content indexer does (content.ReadText);
// ok is false for a file the content rules skip (over the cap, binary, not
// UTF-8, not regular).
func (x *Index) read(p string, buf []byte) (size, mtime int64, text []byte, ok bool, err error) {
	text = buf
	err = x.opt.Files.Open(context.Background(), p, func(f content.FileReader) error {
		fi, data, st, err := content.ReadText(f, buf, x.opt.Max)
		size, mtime, text, ok = fi.Size, fi.MTime, data, st == content.Indexed
		return err
	})
	if err != nil {
		return size, mtime, text, false, err
	}
	return size, mtime, text, ok, nil
}
