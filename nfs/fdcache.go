package nfs

import (
	"container/list"
	"context"
	"errors"
	"io/fs"
	"os"
	"sync"
	"sync/atomic"

	"github.com/semfs/semfs/server"
)

// fdCache keeps regular files open between READ and WRITE calls: NFSv3 has no
// open or close, and opening per call costs an openat+close pair and, for writes,
// an index notification each. Entries are keyed by core path and checked against
// the inode the call's handle resolved to, so a path reused by another file never
// reads the wrong data. At most max entries stay open (least recently used are
// closed first); an entry in use is closed only when its last user releases it.
// Renames and removes through NFS or reported by the core's change stream evict
// the paths they touch, because a server.File reports writes under the path it
// was opened at. Safe for concurrent use.
type fdCache struct {
	fsys *server.FS
	max  int

	mu      sync.Mutex
	entries map[string]*fdEntry
	lru     *list.List // of *fdEntry, front = most recent

	// closing counts the closes evictLater handed to goroutines; closeAll
	// waits for them. Add is called under mu, and closeAll takes mu before it
	// waits, so every Add it can miss comes after the cache was emptied (and
	// an empty cache has nothing left to hand over).
	closing sync.WaitGroup
}

type fdEntry struct {
	path     string
	ino      uint64
	f        *server.File
	writable bool
	refs     int
	dirty    atomic.Bool // written since the last sync
	gone     bool        // evicted; close when refs drops to 0
	elem     *list.Element
}

func newFDCache(fsys *server.FS, max int) *fdCache {
	return &fdCache{fsys: fsys, max: max, entries: map[string]*fdEntry{}, lru: list.New()}
}

// acquire returns an open file for p (whose inode is ino), opening it read-write
// (read-only if that is refused) when not cached, for a read or (write) a write
// by ctx's caller. Descriptors are opened as the daemon and shared by every
// caller, so the caller's right to read or write is checked here, on every
// call, as Linux's nfsd checks each READ and WRITE (server.File.CheckIO). The
// caller releases the entry.
func (c *fdCache) acquire(ctx context.Context, p string, ino uint64, write bool) (*fdEntry, error) {
	if !write && !c.fsys.Inline(p) {
		// A file of the virtual tree answers for its caller (a query's
		// results, .semfs/changes): opened for this call by its caller and
		// never shared. Writes (tags files) keep the shared open: their
		// pending bytes must outlive one WRITE.
		f, err := c.fsys.Open(ctx, p, os.O_RDONLY)
		if err != nil {
			return nil, err
		}
		return &fdEntry{path: p, ino: ino, f: f, refs: 1, gone: true}, nil
	}
	e, err := c.get(p, ino, write)
	if err != nil {
		return nil, err
	}
	if err := e.f.CheckIO(ctx, write); err != nil {
		c.release(e)
		return nil, err
	}
	if write {
		e.f.Attribute(ctx) // the change feed names this WRITE's app, not the opener's
	}
	return e, nil
}

// get is acquire without the caller's check.
func (c *fdCache) get(p string, ino uint64, write bool) (*fdEntry, error) {
	c.mu.Lock()
	if e := c.entries[p]; e != nil && e.ino == ino && (e.writable || !write) {
		e.refs++
		c.lru.MoveToFront(e.elem)
		c.mu.Unlock()
		return e, nil
	}
	c.mu.Unlock()

	// No identity: the daemon's own open, whoever asked first.
	ctx := context.Background()
	f, err := c.fsys.Open(ctx, p, os.O_RDWR)
	writable := true
	if err != nil && !write && errors.Is(err, fs.ErrPermission) {
		f, err = c.fsys.Open(ctx, p, os.O_RDONLY)
		writable = false
	}
	if err != nil {
		return nil, err
	}
	if ino == 0 {
		if a, err := f.Stat(); err == nil {
			ino = a.Ino
		}
	}
	return c.insert(p, ino, f, writable), nil
}

// adopt caches a file the caller just opened (CREATE), acquired once.
func (c *fdCache) adopt(p string, ino uint64, f *server.File) *fdEntry {
	return c.insert(p, ino, f, true)
}

// insert caches f. Every caller writes through it from now on, so a write
// clears setuid for its writer (fastWrite's DropPrivsAfterWrite), never for
// whoever opened it (a CREATE's caller: server.File.Share).
func (c *fdCache) insert(p string, ino uint64, f *server.File, writable bool) *fdEntry {
	f.Share()
	e := &fdEntry{path: p, ino: ino, f: f, writable: writable, refs: 1}
	var closeNow []*fdEntry
	c.mu.Lock()
	if old := c.entries[p]; old != nil {
		closeNow = append(closeNow, c.dropLocked(old)...)
	}
	c.entries[p] = e
	e.elem = c.lru.PushFront(e)
	for c.lru.Len() > c.max {
		closeNow = append(closeNow, c.dropLocked(c.lru.Back().Value.(*fdEntry))...)
	}
	c.mu.Unlock()
	closeEntries(closeNow, false)
	return e
}

// release ends one use of e.
func (c *fdCache) release(e *fdEntry) {
	c.mu.Lock()
	e.refs--
	closeIt := e.gone && e.refs == 0
	c.mu.Unlock()
	if closeIt {
		closeEntries([]*fdEntry{e}, false)
	}
}

// dropLocked removes e from the cache and returns it if it can be closed now.
// Precondition: c.mu held.
func (c *fdCache) dropLocked(e *fdEntry) []*fdEntry {
	if e.gone {
		return nil
	}
	e.gone = true
	if c.entries[e.path] == e {
		delete(c.entries, e.path)
	}
	c.lru.Remove(e.elem)
	if e.refs == 0 {
		return []*fdEntry{e}
	}
	return nil
}

// evict drops p and everything below it (a renamed or removed directory).
func (c *fdCache) evict(p string) { c.evictSync(p, false) }

func (c *fdCache) evictSync(p string, sync bool) {
	var closeNow []*fdEntry
	c.mu.Lock()
	for k, e := range c.entries {
		if server.Within(k, p) {
			closeNow = append(closeNow, c.dropLocked(e)...)
		}
	}
	c.mu.Unlock()
	closeEntries(closeNow, sync)
}

// evictLater is evict for a caller holding the core's namespace lock: the
// server's change-stream sink (Server.Apply), which the core calls inside
// every rename and remove. The entries leave the cache at once, so no later
// call finds them; those nobody uses are closed on a goroutine of their own,
// because closing a server.File it wrote through sends the file's pending
// ChangeWrite, which takes that same lock: closed here, a RENAME or REMOVE
// after a WRITE or a SETATTR of size waited for itself forever, holding the
// lock every other change needs (and the daemon's shutdown with it).
func (c *fdCache) evictLater(p string) {
	var closeNow []*fdEntry
	c.mu.Lock()
	for k, e := range c.entries {
		if server.Within(k, p) {
			closeNow = append(closeNow, c.dropLocked(e)...)
		}
	}
	if len(closeNow) > 0 {
		c.closing.Add(1)
	}
	c.mu.Unlock()
	if len(closeNow) > 0 {
		go func() {
			defer c.closing.Done()
			closeEntries(closeNow, false)
		}()
	}
}

// lookup returns the cached entry of p if it is open for inode ino, acquired.
func (c *fdCache) lookup(p string, ino uint64) *fdEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.entries[p]; e != nil && e.ino == ino {
		e.refs++
		return e
	}
	return nil
}

// closeAll syncs written files and closes everything (server shutdown),
// waiting also for the closes evictLater started.
func (c *fdCache) closeAll() {
	c.evictSync("", true)
	c.closing.Wait()
}

// closeEntries closes entries, first syncing those written since their last
// sync when sync is set (shutdown). Eviction does not sync: the data is in the
// page cache either way, and a later COMMIT's fsync through a new descriptor still
// flushes it and still sees a writeback error nobody has seen (errseq semantics).
func closeEntries(es []*fdEntry, sync bool) {
	for _, e := range es {
		if sync && e.dirty.Load() {
			_ = e.f.Sync()
		}
		_ = e.f.Close()
	}
}
