package nfs

import (
	"container/list"
	"crypto/rand"
	"encoding/binary"
	"io/fs"
	"sync"
)

// dirCache holds directory listings by cookie verifier. go-nfs pages READDIR and
// READDIRPLUS with cookie = position in the sorted listing; it asks VerifierFor
// when a listing starts (cookie 0) and DataForVerifier for every later page. A
// verifier here is a random id of one listing snapshot, not a hash of the names,
// so a change anywhere (even in the listed directory) does not turn a client's
// next page into BADCOOKIE, and every page of one listing comes from the same
// snapshot: a 10,000-entry directory lists completely and exactly once. Snapshots
// are bounded by count and total entries (least recently used go first). Safe for
// concurrent use.
type dirCache struct {
	maxLists, maxEntries int

	mu      sync.Mutex
	byVerf  map[uint64]*dirSnap
	lru     *list.List
	entries int
}

type dirSnap struct {
	verf  uint64
	path  string
	infos []fs.FileInfo
	elem  *list.Element
}

func newDirCache(maxLists, maxEntries int) *dirCache {
	return &dirCache{maxLists: maxLists, maxEntries: maxEntries, byVerf: map[uint64]*dirSnap{}, lru: list.New()}
}

// add stores a listing of path and returns its verifier (never 0).
func (c *dirCache) add(path string, infos []fs.FileInfo) uint64 {
	var b [8]byte
	var v uint64
	for v == 0 {
		_, _ = rand.Read(b[:])
		v = binary.BigEndian.Uint64(b[:])
	}
	c.put(v, path, infos)
	return v
}

func (c *dirCache) put(v uint64, path string, infos []fs.FileInfo) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if old := c.byVerf[v]; old != nil {
		c.removeLocked(old)
	}
	s := &dirSnap{verf: v, path: path, infos: infos}
	s.elem = c.lru.PushFront(s)
	c.byVerf[v] = s
	c.entries += len(infos)
	for c.lru.Len() > 1 && (c.lru.Len() > c.maxLists || c.entries > c.maxEntries) {
		c.removeLocked(c.lru.Back().Value.(*dirSnap))
	}
}

// Precondition: c.mu held.
func (c *dirCache) removeLocked(s *dirSnap) {
	c.lru.Remove(s.elem)
	delete(c.byVerf, s.verf)
	c.entries -= len(s.infos)
}

// get returns the snapshot for verifier v of path, nil if it is gone.
func (c *dirCache) get(path string, v uint64) []fs.FileInfo {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.byVerf[v]
	if s == nil || s.path != path {
		return nil
	}
	c.lru.MoveToFront(s.elem)
	return s.infos
}
