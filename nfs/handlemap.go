package nfs

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/semfs/semfs/server"
	"github.com/tidwall/buntdb"
)

// handleMap is the persistent state behind file handles, one buntdb file in the
// state directory:
//
//	"k"         the handle MAC key (32 random bytes, made once)
//	"a:<app>"   the app id of a mount app; "n:<id>" the reverse
//	"i:<ino>"   the node of an inode: parent inode, generation and name
//
// Nodes form a tree by parent inode, so a directory rename rewrites one node and
// every handle below it follows. Resolving a handle walks the parent chain in
// memory (buntdb keeps everything in memory; the file is its append-only log),
// so it costs O(depth) map reads and no directory scans. Writes are synced once a
// second (buntdb's EverySecond policy) and on close: a crash can lose the last
// second of new nodes, whose handles then answer STALE and are looked up again.
//
// All methods are safe for concurrent use.
type handleMap struct {
	db   *buntdb.DB
	key  []byte
	macs *handleMACs // under key

	mu    sync.RWMutex
	apps  map[string]uint32
	names map[uint32]string
	next  uint32

	nodes nodeCache
}

// nodeCache holds the "i:" nodes read or written lately, so that resolving a
// handle (every call, one node per level) and put's comparison read a Go map
// instead of buntdb (a read transaction, a key string built and a btree walked
// per level: 2-4 % of an NFS create's CPU). Writes set it inside their buntdb
// transaction, which buntdb serialises, so it holds no value older than
// buntdb's; a read fills it only when no write came between the read and the
// fill. It holds at most max nodes and starts again empty when full. A stale
// node could only cost a lookup: every path found is checked against the
// handle's inode before use (Server.resolve).
type nodeCache struct {
	mu     sync.Mutex
	m      map[uint64]node
	writes uint64
	max    int
}

// defaultCachedNodes bounds nodeCache: about 6 MB at 64 K nodes.
const defaultCachedNodes = 1 << 16

func (c *nodeCache) lookup(ino uint64) (n node, ok bool, writes uint64) {
	c.mu.Lock()
	n, ok = c.m[ino]
	writes = c.writes
	c.mu.Unlock()
	return n, ok, writes
}

func (c *nodeCache) insertLocked(ino uint64, n node) {
	if c.m == nil || len(c.m) >= c.max {
		c.m = make(map[uint64]node, 64)
	}
	c.m[ino] = n
}

// fill caches what a read found, unless a write came since lookup said writes.
func (c *nodeCache) fill(ino uint64, n node, writes uint64) {
	c.mu.Lock()
	if c.writes == writes {
		c.insertLocked(ino, n)
	}
	c.mu.Unlock()
}

func (c *nodeCache) set(ino uint64, n node) {
	c.mu.Lock()
	c.writes++
	c.insertLocked(ino, n)
	c.mu.Unlock()
}

func (c *nodeCache) drop(inos ...uint64) {
	c.mu.Lock()
	c.writes++
	for _, ino := range inos {
		delete(c.m, ino)
	}
	c.mu.Unlock()
}

// node is where an inode was last seen: name in the directory whose inode is
// parent (0 for the root of the tree).
type node struct {
	parent uint64
	gen    uint64
	name   string
}

const handleDBName = "nfs-handles.db"

// keyLen is the size of the handle MAC key.
const keyLen = 32

// openHandleMap opens the handle map in dir, creating it if missing. The map is
// only a cache of where inodes live (a missing entry makes its handle answer
// STALE and the client look the name up again), so a map that cannot be read is
// no reason to refuse to serve: it is set aside as <name>.damaged-<time> for
// inspection, a new one is made, and the log says that handles clients hold may
// go stale.
func openHandleMap(dir string, log *slog.Logger) (*handleMap, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("nfs state directory: %w", err)
	}
	path := filepath.Join(dir, handleDBName)
	_, statErr := os.Lstat(path)
	m, err := loadHandleMap(path)
	if err == nil {
		if errors.Is(statErr, fs.ErrNotExist) {
			log.Info("no NFS handle map; made a new one (handles clients kept from an earlier run answer STALE)", "path", path)
		}
		return m, nil
	}
	aside := fmt.Sprintf("%s.damaged-%s", path, time.Now().UTC().Format("20060102T150405.000000000Z"))
	if rerr := os.Rename(path, aside); rerr != nil {
		return nil, fmt.Errorf("nfs handle map %s is unreadable (%v) and cannot be set aside: %w", path, err, rerr)
	}
	m, err2 := loadHandleMap(path)
	if err2 != nil {
		return nil, fmt.Errorf("nfs handle map %s: %w", path, err2)
	}
	log.Warn("NFS handle map was damaged; set it aside and made a new one. Handles clients hold may answer STALE until they look their files up again",
		"path", path, "damaged", aside, "err", err)
	return m, nil
}

// loadHandleMap opens the buntdb file at path and reads its key and apps; an
// error means the file is damaged (or cannot be opened at all).
func loadHandleMap(path string) (m *handleMap, err error) {
	defer func() {
		// buntdb replays its log on open; a damaged log must not take the
		// daemon down whatever shape it is in.
		if v := recover(); v != nil {
			m, err = nil, fmt.Errorf("reading the handle map: %v", v)
		}
	}()
	var size int64
	if fi, err := os.Stat(path); err == nil {
		size = fi.Size()
		// buntdb drops whatever follows its last complete command as a torn
		// tail, even when that is the whole file: refuse a file that does not
		// start like a buntdb log before buntdb truncates the evidence.
		if err := checkLogStart(path); err != nil {
			return nil, err
		}
	}
	db, err := buntdb.Open(path)
	if err != nil {
		return nil, err
	}
	m = &handleMap{db: db, apps: map[string]uint32{}, names: map[uint32]string{}, next: 1,
		nodes: nodeCache{max: defaultCachedNodes}}
	err = db.Update(func(tx *buntdb.Tx) error {
		k, err := tx.Get("k")
		if errors.Is(err, buntdb.ErrNotFound) && size > 0 {
			// buntdb reads a file with no complete command as a torn
			// tail and drops it: a map that had content but has no key
			// left was damaged, not new.
			return errors.New("handle key missing from a non-empty handle map")
		}
		if errors.Is(err, buntdb.ErrNotFound) {
			b := make([]byte, keyLen)
			if _, err := rand.Read(b); err != nil {
				return err
			}
			k = string(b)
			_, _, err = tx.Set("k", k, nil)
		}
		if err != nil {
			return err
		}
		if len(k) != keyLen {
			return fmt.Errorf("handle key is %d bytes, want %d", len(k), keyLen)
		}
		m.key = []byte(k)
		m.macs = newHandleMACs(m.key)
		return tx.AscendKeys("a:*", func(key, value string) bool {
			id, perr := strconv.ParseUint(value, 10, 32)
			if perr != nil {
				return true
			}
			app := strings.TrimPrefix(key, "a:")
			m.apps[app], m.names[uint32(id)] = uint32(id), app
			m.next = max(m.next, uint32(id)+1)
			return true
		})
	})
	if err != nil {
		db.Close()
		return nil, err
	}
	return m, nil
}

// checkLogStart says whether the file at path starts like a buntdb log: NUL
// padding, then a RESP array ('*'), or nothing.
func checkLogStart(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	var b [512]byte
	n, _ := f.Read(b[:])
	for _, c := range b[:n] {
		if c == 0 {
			continue
		}
		if c != '*' {
			return errors.New("not a buntdb log")
		}
		return nil
	}
	return nil
}

func (m *handleMap) close() error { return m.db.Close() }

// appID returns the persistent id of a mount app, allocating one on first use.
// The anonymous mount ("") is 0.
func (m *handleMap) appID(app string) (uint32, error) {
	if app == "" {
		return 0, nil
	}
	m.mu.RLock()
	id, ok := m.apps[app]
	m.mu.RUnlock()
	if ok {
		return id, nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if id, ok := m.apps[app]; ok {
		return id, nil
	}
	id = m.next
	err := m.db.Update(func(tx *buntdb.Tx) error {
		if _, _, err := tx.Set("a:"+app, strconv.FormatUint(uint64(id), 10), nil); err != nil {
			return err
		}
		_, _, err := tx.Set("n:"+strconv.FormatUint(uint64(id), 10), app, nil)
		return err
	})
	if err != nil {
		return 0, err
	}
	m.next++
	m.apps[app], m.names[id] = id, app
	return id, nil
}

// appName returns the app of an id from a handle.
func (m *handleMap) appName(id uint32) (string, bool) {
	if id == 0 {
		return "", true
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	app, ok := m.names[id]
	return app, ok
}

func inoKey(ino uint64) string { return "i:" + strconv.FormatUint(ino, 16) }

func (m *handleMap) get(ino uint64) (n node, ok bool) {
	n, ok, writes := m.nodes.lookup(ino)
	if ok {
		return n, true
	}
	_ = m.db.View(func(tx *buntdb.Tx) error {
		n, ok = getNode(tx, ino)
		return nil
	})
	if ok {
		m.nodes.fill(ino, n, writes)
	}
	return n, ok
}

func getNode(tx *buntdb.Tx, ino uint64) (node, bool) {
	v, err := tx.Get(inoKey(ino))
	if err != nil || len(v) < 16 {
		return node{}, false
	}
	return node{
		parent: binary.BigEndian.Uint64([]byte(v[:8])),
		gen:    binary.BigEndian.Uint64([]byte(v[8:16])),
		name:   v[16:],
	}, true
}

// put records where ino lives, writing only when that changed.
func (m *handleMap) put(ino uint64, n node) error {
	if old, ok := m.get(ino); ok && old == n {
		return nil
	}
	return m.putNew(ino, n)
}

// putNew is put for an inode the caller has just made: what the map holds for
// that number is nothing or a removed file's node (at best the same node again,
// where generations are 0), so it is written without being read first: the
// node cache never holds a new inode, and the read of buntdb it took was a
// third of recording a new file's handle.
func (m *handleMap) putNew(ino uint64, n node) error {
	v := make([]byte, 16, 16+len(n.name))
	binary.BigEndian.PutUint64(v, n.parent)
	binary.BigEndian.PutUint64(v[8:], n.gen)
	v = append(v, n.name...)
	err := m.db.Update(func(tx *buntdb.Tx) error {
		_, _, err := tx.Set(inoKey(ino), string(v), nil)
		if err == nil {
			m.nodes.set(ino, n)
		}
		return err
	})
	if err != nil {
		m.nodes.drop(ino) // the transaction was rolled back
	}
	return err
}

// putAll records many nodes in one transaction (a directory listing), writing
// only those that changed.
func (m *handleMap) putAll(inos []uint64, nodes []node) error {
	var changed []int
	for i, ino := range inos {
		if old, ok := m.get(ino); !ok || old != nodes[i] {
			changed = append(changed, i)
		}
	}
	if len(changed) == 0 {
		return nil
	}
	err := m.db.Update(func(tx *buntdb.Tx) error {
		for _, i := range changed {
			n := nodes[i]
			v := make([]byte, 16, 16+len(n.name))
			binary.BigEndian.PutUint64(v, n.parent)
			binary.BigEndian.PutUint64(v[8:], n.gen)
			v = append(v, n.name...)
			if _, _, err := tx.Set(inoKey(inos[i]), string(v), nil); err != nil {
				return err
			}
			m.nodes.set(inos[i], n)
		}
		return nil
	})
	if err != nil { // rolled back: forget what it had set
		for _, i := range changed {
			m.nodes.drop(inos[i])
		}
	}
	return err
}

func (m *handleMap) del(ino uint64) {
	_ = m.db.Update(func(tx *buntdb.Tx) error {
		m.nodes.drop(ino)
		_, err := tx.Delete(inoKey(ino))
		return err
	})
}

// path rebuilds the core path of ino from the parent chain (every handle of
// every call is resolved here), each level from the node cache or buntdb. A
// rename meanwhile may give a path that names nothing or another file: it says
// nothing about whether the file is there, and the caller verifies with a stat.
func (m *handleMap) path(ino uint64) (string, node, bool) {
	n, ok := m.get(ino)
	if !ok {
		return "", node{}, false
	}
	if n.parent == 0 {
		return "", n, true
	}
	var parts []string
	parts = append(parts, n.name)
	cur := n.parent
	for depth := 0; ; depth++ {
		if depth > server.MaxPathLen/2 {
			return "", node{}, false // a cycle left by a crash: treat as unknown
		}
		p, ok := m.get(cur)
		if !ok {
			return "", node{}, false
		}
		if p.parent == 0 {
			break
		}
		parts = append(parts, p.name)
		cur = p.parent
	}
	for i, j := 0, len(parts)-1; i < j; i, j = i+1, j-1 {
		parts[i], parts[j] = parts[j], parts[i]
	}
	return strings.Join(parts, "/"), n, true
}
