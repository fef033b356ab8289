package index

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/blevesearch/bleve/v2"
	"github.com/semfs/semfs/embed"
	"github.com/semfs/semfs/index/signcode"
	"github.com/tidwall/buntdb"
	"github.com/tidwall/gjson"
)

// Options configures Open and Load.
type Options struct {
	// Embedder computes tag and query embeddings in-process; nil = keyword-only
	// unless the query carries its own vector.
	Embedder embed.Embedder
	// Models are the models whose client-supplied vectors are accepted, with their
	// thresholds. nil means embed.KnownModels(). The in-process embedder's model is
	// added when absent; an entry of the same name overrides its threshold.
	Models []embed.Model
	// Logger receives the index's few log lines (rebuilds, keyword-only reason,
	// re-embedding progress). nil discards them.
	Logger *slog.Logger
	// Saver, when set, receives every tag (with the file's creator) before the
	// index commits it, so that the index can be rebuilt without its files.
	Saver Saver
	// Tagged, when set, is told of every tag write once it has committed:
	// ctx is the Tag or TagMany call's, paths the tagged files in request
	// order. It runs on the caller's goroutine, after the index lock is
	// released (the daemon's change feed records them, server/feed).
	Tagged func(ctx context.Context, paths []string)
	// EmbedderFrom, when set (and Embedder nil), gives the in-process
	// embedder: Open calls it once, after loading records, vectors and Bleve,
	// so that a model can load on another goroutine meanwhile. nil from it
	// means keyword-only. Its model must be one of Models (its vectors are
	// loaded before it is known).
	EmbedderFrom func() embed.Embedder
}

// Index is the tag index of one backing directory. All methods are safe for
// concurrent use; see each for its guarantee. Writers are serialised and each is
// durable (buntdb synced) when it returns; readers see either all or nothing of a
// write.
type Index struct {
	dir    string
	log    *slog.Logger
	emb    embed.Embedder
	models map[string]embed.Model

	// mu orders every access to db, bl, vecs and gen: writers hold it for writing
	// across the buntdb commit, the Bleve batch and the in-memory vector update, so
	// a reader holding it for reading sees the three in step.
	mu   sync.RWMutex
	db   *buntdb.DB // records.db: records and the m: keys
	vdb  *buntdb.DB // vectors.db: vectors (txn)
	lock *os.File   // flock on dir/lock: one process (one Index) per directory
	bl   bleve.Index
	gen  uint64

	// pending holds committed record changes not yet in Bleve (nil = delete),
	// up to pendingGen.
	pending    map[string]*stored
	pendingGen uint64
	// blMu orders Bleve batches (taken before mu, never inside it); a batch
	// is sent to Bleve without mu (bleve.go). bleveKicked: a batch forced by
	// bleveBatchMax is on its way and has not taken the pending changes yet
	// (mu); bleveFlushes counts those goroutines.
	blMu         sync.Mutex
	bleveKicked  bool
	bleveFlushes atomic.Int32
	// appliedGen is the generation of the last change queued for Bleve
	// (applyBleve), sentGen that of the last batch Bleve took: a query whose
	// changes (up to appliedGen when it began) a batch has already sent needs
	// no batch of its own (flushBleve).
	appliedGen    atomic.Uint64
	sentGen       atomic.Uint64
	onFlushWait   func()             // tests: called as a query's flush waits for blMu
	tags          tagQueue           // concurrent Tag calls' shared writes (tagqueue.go)
	onBleveBatch  func()             // tests: called as a batch is sent to Bleve
	onRecordsSync func()             // tests: called after syncRecordsFile's fsync
	vecs          map[string]*vecSet // by model name
	near          nearAutomata       // near words' automata, kept between queries (near.go)
	// hay holds each record's folded keyword fields, so that checking Bleve's
	// candidates against the exact rule costs a few strings.Contains, not a
	// record decode each. Records are read from buntdb only for the results.
	hay hayTable
	// candAt keeps best queries' candSet.at between them (*[]int32, zero):
	// one a query, a slot per record.
	candAt   sync.Pool
	plan     planMode // overrides the keyword planner; tests only (export_test.go)
	closed   bool
	degraded error // Bleve failed mid-run: queries scan buntdb

	keywordOnly string // why queries without a vector are keyword-only; "" if not

	saver      Saver                           // durable records outside the index; nil: none
	tagged     func(context.Context, []string) // Options.Tagged
	damage     Damage                          // what Open found wrong; set before x is shared
	bleveSeen  uint64                          // the generation Bleve held at Open (0: none)
	prevDamage string                          // damage recorded by an earlier Open and not yet cleared
	unsynced   bool                            // records.db holds commits not yet synced (apply.go)
	// recFile is records.db opened once more, read-only, for the syncs a
	// Bleve batch and Close need (syncRecordsFile); guarded by blMu. nil: not
	// open yet.
	recFile *os.File
	syncs   atomic.Int64 // records.db syncs (syncRecordsFile); tests only

	re     *reembedder
	stopBg context.CancelFunc
	bgDone sync.WaitGroup

	// guards are the open Guards (a reconcile running beside other writers):
	// every record path a committed write changes is added to each.
	guards []*Guard
}

const (
	recordsFile = "records.db"
	vectorsFile = "vectors.db" // txn
)

// Open opens (creating if needed) the index stored under dir. It loads every
// vector into memory, rebuilds Bleve from buntdb if the two are out of step, and,
// with an embedder, starts re-embedding in the background the tagged records whose
// in-process vector is missing, stale or of another model.
func Open(dir string, opts Options) (*Index, error) {
	x, err := newIndex(dir, opts)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, ioErr("open", dir, err)
	}
	lock, err := lockDir(dir)
	if err != nil {
		return nil, ioErr("open", dir, err)
	}
	// records.db and vectors.db are parsed at once, one goroutine each, and
	// the records' tables are built while vectors.db is still being parsed
	// (txn). Each goroutine reads only its own file: vectors find their
	// records' slots afterwards, in placeVectors.
	t0 := time.Now()
	var wg sync.WaitGroup
	var recErr, vecErr, blErr, vdbErr error
	var dbTook, vdbTook, recTook, vecTook, blTook time.Duration
	var legacy bool // schema 1: vectors still in records.db
	timed := func(took *time.Duration, fn func() error) error {
		t := time.Now()
		err := fn()
		*took = time.Since(t)
		return err
	}
	wg.Add(2)
	go func() {
		defer wg.Done()
		recErr = timed(&dbTook, func() (err error) {
			x.db, err = x.openRecords()
			if err != nil {
				return err
			}
			legacy, err = x.readMeta()
			return err
		})
		if recErr != nil || legacy {
			return
		}
		recErr = timed(&recTook, x.loadRecords)
		blErr = timed(&blTook, func() error { return x.openBleve(x.gen) })
	}()
	go func() {
		defer wg.Done()
		vdbErr = timed(&vdbTook, func() (err error) {
			x.vdb, err = x.openVectors()
			return err
		})
		if vdbErr == nil {
			vecErr = timed(&vecTook, x.loadVectors)
		}
	}()
	wg.Wait()
	x.lock = lock
	fail := func(err error) (*Index, error) {
		if x.bl != nil {
			_ = x.bl.Close()
		}
		if x.db != nil {
			_ = x.db.Close()
		}
		if x.vdb != nil {
			_ = x.vdb.Close()
		}
		_ = lock.Close()
		return nil, ioErr("open", dir, err)
	}
	if err := errors.Join(recErr, vdbErr); err != nil {
		return fail(err)
	}
	if legacy {
		// An index written before vectors.db: move its vectors there once,
		// then load as usual.
		if err := x.migrateVectors(); err != nil {
			return fail(err)
		}
		x.vecs = map[string]*vecSet{}
		vecErr = timed(&vecTook, x.loadVectors)
		recErr = timed(&recTook, x.loadRecords)
		blErr = timed(&blTook, func() error { return x.openBleve(x.gen) })
	}
	if err := errors.Join(recErr, vecErr, blErr); err != nil {
		return fail(err)
	}
	t1 := t0.Add(max(dbTook, vdbTook))
	if err := x.placeVectors(); err != nil {
		return fail(err)
	}
	t2 := time.Now()
	if opts.EmbedderFrom != nil && opts.Embedder == nil {
		e := opts.EmbedderFrom()
		if m, ok := x.models[nameOf(e)]; e != nil && !ok {
			return fail(fmt.Errorf("%w: the in-process model %q is not among the index's models", ErrUnknownModel, e.Name()))
		} else if e != nil && m.Dims != e.Dims() {
			return fail(fmt.Errorf("%w: model %q has %d dimensions, embedder %d", ErrUnknownModel, m.Name, m.Dims, e.Dims()))
		}
		x.setEmbedder(e)
	}
	if x.bleveSeen > x.gen && x.damage.Records == "" {
		// Bleve only ever learns a generation after buntdb committed it: buntdb
		// lost committed writes (cut short, or replaced by an older copy).
		x.damage.Records = fmt.Sprintf("behind Bleve (generation %d, Bleve has %d): cut short or replaced", x.gen, x.bleveSeen)
	}
	if x.damage.Records == "" && x.prevDamage != "" {
		// An earlier start found it and did not complete (refused, or
		// crashed): the records it lost are still lost.
		x.damage.Records, x.damage.New = x.prevDamage, false
	}
	if x.damage.Records != "" {
		if err := x.markDamagedLocked(x.damage.Records); err != nil {
			return fail(err)
		}
	}
	if x.damage.Records != "" || x.damage.Bleve != "" {
		x.log.Warn("index: damage found at open", "dir", dir, "damage", x.damage.String())
	}
	x.start()
	x.log.Info("index: opened", "records", x.hay.len(), "records.db", dbTook.Round(time.Millisecond),
		"vectors.db", vdbTook.Round(time.Millisecond), "tables", t2.Sub(t1).Round(time.Millisecond), "recordTable", recTook.Round(time.Millisecond),
		"vectors", vecTook.Round(time.Millisecond), "bleve", blTook.Round(time.Millisecond),
		"model", time.Since(t2).Round(time.Millisecond))
	return x, nil
}

// readMeta sets records.db's sync policy and reads its layout, generation and
// the damage an earlier Open recorded. legacy reports layout 1, whose vectors
// are still in records.db (migrateVectors).
func (x *Index) readMeta() (legacy bool, err error) {
	if err := setSync(x.db, buntdb.Always); err != nil { // each change is durable when it returns
		return false, err
	}
	err = x.db.Update(func(tx *buntdb.Tx) error {
		v, err := tx.Get(schemaKey)
		switch {
		case err == buntdb.ErrNotFound:
			_, _, err = tx.Set(schemaKey, schemaVers, nil)
			return err
		case err != nil:
			return err
		case v == schemaWithVectors:
			legacy = true
		case v != schemaVers:
			return fmt.Errorf("index layout %q, this build reads %q", v, schemaVers)
		}
		if d, err := tx.Get(damageKey); err == nil {
			x.prevDamage = d
		}
		x.gen, err = readGen(tx)
		return err
	})
	return legacy, err
}

// setSync sets db's sync policy.
func setSync(db *buntdb.DB, p buntdb.SyncPolicy) error {
	var cfg buntdb.Config
	if err := db.ReadConfig(&cfg); err != nil {
		return err
	}
	if cfg.SyncPolicy == p {
		return nil
	}
	cfg.SyncPolicy = p
	return db.SetConfig(cfg)
}

// openVectors opens vectors.db. A file buntdb cannot parse is set aside
// (openOrSetAside) and a new one started: no record is lost with it,
// in-process vectors are re-embedded in the background, and the start-up
// reconcile restores client vectors from the files' durable records.
func (x *Index) openVectors() (*buntdb.DB, error) {
	db, aside, err := openOrSetAside(filepath.Join(x.dir, vectorsFile))
	if err != nil {
		return nil, err
	}
	if aside != nil {
		x.log.Error("index: vectors.db unreadable; moved aside, vectors are re-embedded and restored from durable records", "err", aside.cause, "movedTo", aside.to)
	}
	if err := setSync(db, buntdb.Always); err != nil {
		_ = db.Close()
		return nil, err
	}
	return db, nil
}

// setAside is a buntdb file openOrSetAside could not parse: the error, and
// where the file went.
type setAside struct {
	cause error
	to    string
}

// openOrSetAside opens the buntdb file p. One buntdb cannot parse is renamed
// to p.damaged-<time> and a new one opened in its place (aside says so); a
// failure of the file system itself is returned as it is.
func openOrSetAside(p string) (*buntdb.DB, *setAside, error) {
	db, err := buntdb.Open(p)
	var pe *os.PathError
	if err == nil || errors.As(err, &pe) {
		return db, nil, err
	}
	to := p + ".damaged-" + time.Now().UTC().Format("20060102T150405Z")
	if rerr := os.Rename(p, to); rerr != nil {
		return nil, nil, fmt.Errorf("%s is unreadable (%v) and could not be moved aside: %w", filepath.Base(p), err, rerr)
	}
	db, err2 := buntdb.Open(p)
	return db, &setAside{cause: err, to: to}, err2
}

// migrateVectors moves the vectors of a layout-1 index from records.db to
// vectors.db, once, and compacts records.db (its log still holds them).
// vectors.db commits first: a crash before records.db's commit leaves both
// copies and layout 1, and the next Open moves them again.
func (x *Index) migrateVectors() error {
	var vecs []kv
	err := x.db.View(func(tx *buntdb.Tx) (err error) {
		vecs, err = scanRange(tx, vecPrefix, "v;")
		return err
	})
	if err != nil {
		return err
	}
	err = x.vdb.Update(func(tx *buntdb.Tx) error {
		for _, v := range vecs {
			if _, _, err := tx.Set(v.key, v.val, nil); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	err = x.db.Update(func(tx *buntdb.Tx) error {
		for _, v := range vecs {
			if _, err := tx.Delete(v.key); err != nil {
				return err
			}
		}
		_, _, err := tx.Set(schemaKey, schemaVers, nil)
		return err
	})
	if err != nil {
		return err
	}
	if len(vecs) > 0 {
		if err := x.db.Shrink(); err != nil {
			return err
		}
	}
	x.log.Info("index: vectors moved from records.db to vectors.db", "vectors", len(vecs))
	return nil
}

// openRecords opens records.db, noting in x.damage what it finds wrong. A file
// buntdb cannot parse is moved aside (records.db.damaged-<time>) and a new one
// started: its records come back from the durable records (Reconcile), and the
// damaged copy stays for inspection. A file cut mid-command buntdb itself cuts
// back to the last whole command, silently; Open detects that afterwards by
// comparing generations with Bleve.
func (x *Index) openRecords() (*buntdb.DB, error) {
	p := filepath.Join(x.dir, recordsFile)
	fi, err := os.Stat(p)
	_, blErr := os.Stat(filepath.Join(x.dir, bleveDir))
	switch {
	case err != nil && blErr == nil:
		x.damage.Records = "missing"
	case err != nil:
		x.damage.New = true
	case fi.Size() == 0:
		x.damage.Records = "empty"
	}
	db, aside, err := openOrSetAside(p)
	if aside != nil {
		x.damage.Records = fmt.Sprintf("unreadable (%v), moved aside to %s", aside.cause, aside.to)
		x.log.Error("index: records.db unreadable; moved aside, rebuilding", "err", aside.cause, "movedTo", aside.to)
	}
	return db, err
}

func newIndex(dir string, opts Options) (*Index, error) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	x := &Index{dir: dir, log: log, emb: opts.Embedder, saver: opts.Saver, tagged: opts.Tagged, models: map[string]embed.Model{}, vecs: map[string]*vecSet{}, hay: hayTable{pos: map[string]int{}}}
	models := opts.Models
	if models == nil {
		models = embed.KnownModels()
	}
	for _, m := range models {
		if m.Name == "" || m.Dims <= 0 {
			return nil, errorf("open", KindInvalid, dir, fmt.Errorf("%w: model %q with %d dimensions", ErrUnknownModel, m.Name, m.Dims))
		}
		x.models[m.Name] = m
	}
	if x.emb != nil {
		m, ok := x.models[x.emb.Name()]
		if ok && m.Dims != x.emb.Dims() {
			return nil, errorf("open", KindInvalid, dir, fmt.Errorf("%w: model %q has %d dimensions, embedder %d", ErrUnknownModel, m.Name, m.Dims, x.emb.Dims()))
		}
	}
	if opts.EmbedderFrom == nil || opts.Embedder != nil {
		x.setEmbedder(x.emb)
	}
	return x, nil
}

// setEmbedder makes e (nil: none) the in-process embedder. Precondition: x
// not yet shared (x.emb is read without x.mu), and e's dimensions checked.
func (x *Index) setEmbedder(e embed.Embedder) {
	x.emb = e
	if e == nil {
		x.keywordOnly = "no in-process embedder loaded; queries without a client vector rank by keywords only"
		x.log.Warn("index: keyword-only", "reason", x.keywordOnly)
		return
	}
	if _, ok := x.models[e.Name()]; !ok {
		x.models[e.Name()] = embed.Model{Name: e.Name(), Dims: e.Dims(), Threshold: e.Threshold()}
	}
}

func nameOf(e embed.Embedder) string {
	if e == nil {
		return ""
	}
	return e.Name()
}

type hayEntry struct {
	path   string
	joined string   // folded path, creator, task and apps joined by fieldSep
	names  []string // the record's whole names (names()), for hayTable.byName
	own    int      // names[:own] are the path's (full path, basename), the rest its apps'
	tagged bool
}

func newHay(path string, s *stored) hayEntry {
	if e, ok := newHayASCII(path, s); ok {
		return e
	}
	ns, own := nameParts(path, s.CreatedBy, s.RelatedApps)
	return hayEntry{path: path, joined: joinHay(haystack(path, s)), names: ns, own: own, tagged: s.tagged()}
}

// newHayASCII is newHay for a record whose path, creator, task and apps are
// all ASCII (nearly every record), built with one allocation for the joined
// haystack and one for the names, which are substrings of it: for ASCII, NFKC
// changes nothing and folding is upper-casing, so the folded path's basename
// is the folded basename. Open builds 100k of these; the general path cost
// about 5 µs of CPU each. ok is false for any other record.
func newHayASCII(p string, s *stored) (e hayEntry, ok bool) {
	fields := make([]string, 0, 3+len(s.RelatedApps))
	fields = append(fields, p)
	if s.CreatedBy != "" {
		fields = append(fields, s.CreatedBy)
	}
	if s.Task != "" {
		fields = append(fields, s.Task)
	}
	for _, a := range s.RelatedApps {
		if a != "" {
			fields = append(fields, a)
		}
	}
	n := len(fields) - 1
	for _, f := range fields {
		n += len(f)
		for i := 0; i < len(f); i++ {
			if f[i] >= utf8.RuneSelf {
				return hayEntry{}, false
			}
		}
	}
	b := make([]byte, 0, n)
	at := make([]int, len(fields)) // where each field starts in b
	for i, f := range fields {
		if i > 0 {
			b = append(b, fieldSep...)
		}
		at[i] = len(b)
		for j := 0; j < len(f); j++ {
			c := f[j]
			if 'a' <= c && c <= 'z' {
				c = c - 'a' + 'A' // as fold does
			}
			b = append(b, c)
		}
	}
	joined := unsafe.String(unsafe.SliceData(b), len(b)) // b is not used after
	field := func(i int) string { return joined[at[i] : at[i]+len(fields[i])] }
	// The names, in names()'s order, each once in its group.
	out := make([]string, 0, 8+len(s.RelatedApps))
	from := 0 // where the current group starts
	add := func(x string) {
		if x != "" && !slices.Contains(out[from:], x) {
			out = append(out, x)
		}
	}
	fp := field(0)
	add(fp)
	base := path.Base(fp)
	add(base)
	if ext := path.Ext(base); ext != "" && ext != base {
		add(base[:len(base)-len(ext)])
	}
	own := len(out)
	from = own
	i := 1
	if s.CreatedBy != "" {
		add(field(i))
		i++
	}
	if s.Task != "" {
		i++
	}
	for _, a := range s.RelatedApps {
		if a != "" {
			add(field(i))
			i++
		}
	}
	return hayEntry{path: p, joined: joined, names: out, own: own, tagged: s.tagged()}, true
}

// hayTable is every record's hayEntry in one slice (a scan walks memory in
// order) with a position map, and the exact-name map of the best rank: each
// whole name to the slots of the records that bear it. The best rank used to
// ask Bleve's name field for them, 8 ms a query when an app names 18k files;
// the map answers in a lookup and stays exact because every put and del
// keeps it (and Open rebuilds it with the table). Precondition for every
// method: Index.mu held (read for get, write otherwise).
type hayTable struct {
	entries []hayEntry
	pos     map[string]int
	byName  map[string]nameSlots
}

// nameSlots is one name's entry in hayTable.byName. Entries' names point at
// name, so a name many records share (an app, a directory) is kept once.
type nameSlots struct {
	name  string
	slots []int32
}

func (t *hayTable) len() int { return len(t.entries) }

func (t *hayTable) put(e hayEntry) {
	if i, ok := t.pos[e.path]; ok {
		if slices.Equal(t.entries[i].names, e.names) {
			e.names = t.entries[i].names // the shared copies
			t.entries[i] = e
			return
		}
		t.unname(i)
		t.entries[i] = e
		t.name(i)
		return
	}
	i := len(t.entries)
	t.pos[e.path] = i
	t.entries = append(t.entries, e)
	t.name(i)
}

// del swaps the last entry into the hole and returns the path it moved ("" if
// none) so that vector sets can follow it to its new slot.
func (t *hayTable) del(path string) (moved string) {
	i, ok := t.pos[path]
	if !ok {
		return ""
	}
	t.unname(i)
	last := len(t.entries) - 1
	if i != last {
		for _, n := range t.entries[last].names {
			l := t.byName[n].slots
			l[slices.Index(l, int32(last))] = int32(i)
		}
		t.entries[i] = t.entries[last]
		moved = t.entries[i].path
		t.pos[moved] = i
	}
	t.entries[last] = hayEntry{}
	t.entries = t.entries[:last]
	delete(t.pos, path)
	return moved
}

// name adds slot i to the lists of its entry's names.
func (t *hayTable) name(i int) {
	if t.byName == nil {
		t.byName = map[string]nameSlots{}
	}
	ns := t.entries[i].names
	for j, n := range ns {
		e, ok := t.byName[n]
		if ok {
			ns[j] = e.name
		} else {
			e.name = n
		}
		e.slots = append(e.slots, int32(i))
		t.byName[n] = e
	}
}

// unname removes slot i from the lists of its entry's names (order within a
// list is free: the query only counts and visits them).
func (t *hayTable) unname(i int) {
	for _, n := range t.entries[i].names {
		e := t.byName[n]
		j := slices.Index(e.slots, int32(i))
		if j < 0 {
			continue
		}
		e.slots[j] = e.slots[len(e.slots)-1]
		if e.slots = e.slots[:len(e.slots)-1]; len(e.slots) == 0 {
			delete(t.byName, n)
		} else {
			t.byName[n] = e
		}
	}
}

// loadRecords builds x.hay from every record. It reads only the keyword fields
// (gjson, without decoding whole records): at 100k records that halves the time.
// Parsing and folding names run on every core, in chunks of records; the
// tables, sized once, are filled in path order afterwards.
func (x *Index) loadRecords() error {
	return x.db.View(func(tx *buntdb.Tx) error {
		var recs []kv
		if err := tx.AscendRange("", recPrefix, "r;", func(k, v string) bool {
			recs = append(recs, kv{k, v})
			return true
		}); err != nil {
			return err
		}
		hay := make([]hayEntry, len(recs))
		errs := make([]error, len(recs))
		workers := min(runtime.GOMAXPROCS(0), 1+len(recs)/4096)
		var wg sync.WaitGroup
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := w * len(recs) / workers; i < (w+1)*len(recs)/workers; i++ {
					hay[i], errs[i] = hayOf(recs[i].key, recs[i].val)
				}
			}()
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return err
		}
		x.hay.entries = make([]hayEntry, 0, len(hay))
		x.hay.pos = make(map[string]int, len(hay))
		// Each record has about three names of its own (path, basename,
		// basename without extension) besides those it shares.
		x.hay.byName = make(map[string]nameSlots, 3*len(hay))
		for _, e := range hay {
			x.hay.put(e)
		}
		return nil
	})
}

// hayOf is the hayEntry of the record stored under key k with value v.
func hayOf(k, v string) (hayEntry, error) {
	s, ok := keywordFields(v)
	if !ok {
		return hayEntry{}, fmt.Errorf("record %q: malformed JSON", k)
	}
	return newHay(k[len(recPrefix):], s), nil
}

// keywordFields reads a stored record's creator, task and related apps
// without decoding the rest (gjson): Open's record table and the start-up
// re-embed scan read every record, and encoding/json's decode of each cost
// seconds of CPU at 100k. ok is false for a record that is not JSON.
func keywordFields(v string) (s *stored, ok bool) {
	if !gjson.Valid(v) {
		return nil, false
	}
	f := gjson.GetMany(v, "createdBy", "task", "relatedApps")
	s = &stored{CreatedBy: f[0].String(), Task: f[1].String()}
	for _, a := range f[2].Array() {
		s.RelatedApps = append(s.RelatedApps, a.String())
	}
	return s, true
}

// loadVectors reads every stored vector of a known model into memory, straight
// into one preallocated slice per model (a first pass counts them): at 100k x 512
// d, growing the slices and decoding into temporaries cost seconds at start.
// Vectors of models this process does not know stay in buntdb untouched. It
// runs beside loadRecords, so it leaves slots to placeVectors.
func (x *Index) loadVectors() error {
	return x.vdb.View(func(tx *buntdb.Tx) error {
		count := map[string]int{}
		err := tx.AscendRange("", vecPrefix, "v;", func(k, _ string) bool {
			if _, model, ok := splitVecKey(k); ok {
				count[model]++
			}
			return true
		})
		if err != nil {
			return err
		}
		for model, n := range count {
			if m, known := x.models[model]; known {
				s := newVecSet(m.Dims)
				s.paths = make([]string, 0, n)
				s.slots = make([]int, n)
				s.kinds = make([]byte, 0, n)
				s.norms = make([]float64, 0, n)
				s.data = make([]float32, 0, n*m.Dims)
				s.pos = make(map[string]int, n)
				if n > exactMax {
					// The coarse scan's sign codes, which the first query
					// of a large set would otherwise build (signCodes).
					s.signs = make([]uint64, 0, n*s.codeWords())
				}
				x.vecs[model] = s
			}
		}
		var bad error
		err = tx.AscendRange("", vecPrefix, "v;", func(k, v string) bool {
			path, model, ok := splitVecKey(k)
			s := x.vecs[model]
			if !ok || s == nil {
				return true
			}
			if len(v) != vecHeader+4*s.dims || (v[0] != vecInProcess && v[0] != vecClient) {
				bad = fmt.Errorf("vector %q: %d bytes, model %s has %d dims", k, len(v), model, s.dims)
				return false
			}
			if _, dup := s.pos[path]; dup {
				return true // cannot happen: one key per path and model
			}
			i := len(s.paths)
			s.pos[path] = i
			s.paths = append(s.paths, path)
			s.kinds = append(s.kinds, v[0])
			s.data = s.data[:(i+1)*s.dims]
			vec := s.data[i*s.dims:]
			decodeFloats(vec, v[vecHeader:])
			s.norms = append(s.norms, norm(vec))
			if s.signs != nil {
				w := s.codeWords()
				s.signs = s.signs[:(i+1)*w]
				signcode.Put(s.signs[i*w:], vec)
			}
			return true
		})
		if err != nil {
			return err
		}
		return bad
	})
}

// placeVectors gives each loaded vector its record's slot, after loadRecords
// and loadVectors, and deletes vectors whose record is missing: a write
// commits vectors.db before records.db (txn), so a crash between the two
// leaves them, and so does a records.db lost or cut short. Deleted, they are
// made again where the record comes back: re-embedded in the background, or
// restored with a client's vector from the file's durable record.
func (x *Index) placeVectors() error {
	var orphans []string
	for model, s := range x.vecs {
		s.slots = s.slots[:len(s.paths)]
		for i := 0; i < len(s.paths); {
			slot, ok := x.hay.pos[s.paths[i]]
			if !ok {
				orphans = append(orphans, vecKey(s.paths[i], model))
				s.del(s.paths[i]) // the last one moves to i: look at i again
				continue
			}
			s.slots[i] = slot
			i++
		}
	}
	if len(orphans) == 0 {
		return nil
	}
	x.log.Warn("index: vectors without a record deleted", "count", len(orphans))
	return x.vdb.Update(func(tx *buntdb.Tx) error {
		for _, k := range orphans {
			if _, err := tx.Delete(k); err != nil && err != buntdb.ErrNotFound {
				return err
			}
		}
		return nil
	})
}

// set returns the vector set of model, creating it. Precondition: x.mu held for
// writing (or x not yet shared).
func (x *Index) set(model string) *vecSet {
	s := x.vecs[model]
	if s == nil {
		s = newVecSet(x.models[model].Dims)
		x.vecs[model] = s
	}
	return s
}

// Close stops background re-embedding, waits until Bleve has persisted everything
// (so the next Open need not rebuild it) and closes the stores. Methods called
// after Close return ErrClosed. Safe to call more than once.
func (x *Index) Close() error {
	x.stopBackground()
	x.blMu.Lock() // a Bleve batch in flight ends first
	defer x.blMu.Unlock()
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return nil
	}
	x.flushBleveLocked()
	x.closed = true
	var errs []error
	if err := x.syncRecordsLocked(); err != nil {
		errs = append(errs, err)
	} else if x.degraded == nil {
		if err := x.persistBleve(x.gen); err != nil {
			errs = append(errs, fmt.Errorf("%w; it will be rebuilt at the next open", err))
		}
	}
	if x.recFile != nil {
		errs = append(errs, x.recFile.Close())
	}
	errs = append(errs, x.bl.Close(), x.vdb.Close(), x.db.Close(), x.lock.Close())
	if err := errors.Join(errs...); err != nil {
		return ioErr("close", x.dir, err)
	}
	return nil
}

// Get returns the record at path. Read guarantee: sees every write that returned
// before it was called.
func (x *Index) Get(path string) (Record, error) {
	if err := checkPath("get", path); err != nil {
		return Record{}, err
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.closed {
		return Record{}, errorf("get", KindClosed, path, ErrClosed)
	}
	var rec Record
	err := x.db.View(func(tx *buntdb.Tx) error {
		s, ok, err := getRecord(tx, path)
		if err != nil {
			return err
		}
		if !ok {
			return errorf("get", KindNotFound, path, ErrNotFound)
		}
		rec = s.record(path)
		return nil
	})
	return rec, ioErr("get", path, err)
}

// effects collects what a buntdb transaction changes in the derived state, applied
// after the commit (and only if it commits).
type effects struct {
	docs    map[string]*stored // Bleve documents to index; nil = delete
	vecs    []vecOp
	dirty   []string // paths for the background re-embedder
	written []string // every record path put or deleted (for Guards)
	// put is every record this transaction wrote (a copy, as encoded), so
	// that a later change to it in the same transaction (the touch of a
	// COMMIT after its file's create, in one change-stream batch) need not
	// decode it back; putRecord and deleteRecord are the only writers of
	// record keys, and keep it in step.
	put map[string]stored
}

type vecOp struct {
	path, model string
	kind        byte
	values      []float32 // nil = delete
}

func (e *effects) putRecord(tx txn, path string, s *stored, reindex bool) error {
	if _, _, err := tx.Set(recKey(path), s.encode(), nil); err != nil {
		delete(e.put, path)
		return err
	}
	e.written = append(e.written, path)
	if e.put == nil {
		e.put = map[string]stored{}
	}
	e.put[path] = *s
	if reindex {
		e.docs[path] = s
	}
	return nil
}

// record is getRecord, from what this transaction wrote when it wrote path:
// a copy the caller may change (its slices are shared and must not be).
func (e *effects) record(tx txn, path string) (*stored, bool, error) {
	if s, ok := e.put[path]; ok {
		return &s, true, nil
	}
	return getRecord(tx.Tx, path)
}

func (e *effects) deleteRecord(tx txn, path string) error {
	delete(e.put, path)
	if _, err := tx.Delete(recKey(path)); err != nil && err != buntdb.ErrNotFound {
		return err
	}
	e.written = append(e.written, path)
	e.docs[path] = nil
	return nil
}

func (e *effects) putVector(tx txn, path, model string, kind byte, hash uint64, v []float32) error {
	if _, _, err := tx.vec.Set(vecKey(path, model), encodeVector(kind, hash, v), nil); err != nil {
		return err
	}
	e.vecs = append(e.vecs, vecOp{path: path, model: model, kind: kind, values: v})
	return nil
}

func (e *effects) deleteVectorKey(tx txn, key string) error {
	if _, err := tx.vec.Delete(key); err != nil && err != buntdb.ErrNotFound {
		return err
	}
	if p, m, ok := splitVecKey(key); ok {
		e.vecs = append(e.vecs, vecOp{path: p, model: m})
	}
	return nil
}

// update runs fn in one buntdb write transaction, synced to disk, and, once it
// has committed, mirrors its effects into Bleve, the in-memory vectors and the
// re-embed queue. An error from fn rolls everything back.
func (x *Index) update(op, path string, fn func(tx txn, e *effects) error) error {
	return x.write(op, path, true, fn)
}

// write is update; sync false leaves the commit in the page cache (Apply: see
// noSync in apply.go).
func (x *Index) write(op, path string, sync bool, fn func(tx txn, e *effects) error) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return errorf(op, KindClosed, path, ErrClosed)
	}
	if !sync {
		if err := x.syncPolicy(buntdb.Never); err != nil {
			return ioErr(op, path, err)
		}
		defer func() { _ = x.syncPolicy(buntdb.Always) }()
	}
	e := &effects{docs: map[string]*stored{}}
	gen := x.gen
	err := updateBoth(x.db, x.vdb, func(tx txn) error {
		if err := fn(tx, e); err != nil {
			return err
		}
		if len(e.docs) > 0 {
			gen++
			_, _, err := tx.Set(genKey, strconv.FormatUint(gen, 10), nil)
			return err
		}
		return nil
	})
	if err != nil {
		return ioErr(op, path, err)
	}
	if len(e.docs) > 0 {
		x.gen = gen
		// A synced commit flushes the whole file, earlier unsynced ones too.
		x.unsynced = !sync
		if x.degraded == nil {
			x.applyBleve(e.docs, gen)
		}
		for p, s := range e.docs {
			if s != nil {
				x.hay.put(newHay(p, s))
				continue
			}
			if moved := x.hay.del(p); moved != "" {
				for _, set := range x.vecs {
					set.reslot(moved, x.hay.pos[moved])
				}
			}
		}
	}
	// After the records: a vector points at its record's slot.
	for _, v := range e.vecs {
		if _, known := x.models[v.model]; !known {
			continue
		}
		if v.values == nil {
			if s := x.vecs[v.model]; s != nil {
				s.del(v.path)
			}
			continue
		}
		slot, ok := x.hay.pos[v.path]
		if !ok {
			x.log.Error("index: vector without a record; ignored", "path", v.path, "model", v.model)
			continue
		}
		x.set(v.model).put(v.path, v.kind, v.values, slot)
	}
	if x.re != nil && len(e.dirty) > 0 {
		x.re.add(e.dirty...)
	}
	for _, g := range x.guards {
		for _, p := range e.written {
			g.touched[p] = struct{}{}
		}
	}
	return nil
}

// Generation counts the index's committed record changes (creates, tags,
// renames, removes): it moves whenever any query's answer may have. It is
// kept on disk, so it never goes back across restarts; the mount's query
// directories show it as their change time (server/meta).
func (x *Index) Generation() uint64 {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.gen
}

// view runs fn in a buntdb read transaction. Precondition: x.mu held for reading.
func (x *Index) view(op, path string, fn func(tx txn) error) error {
	if x.closed {
		return errorf(op, KindClosed, path, ErrClosed)
	}
	return ioErr(op, path, viewBoth(x.db, x.vdb, fn))
}
