package feed

import "sync"

// maxSizes bounds Sizes: past it, the oldest half is forgotten (those files'
// host truncates read as writes, as before any was kept).
const maxSizes = 1 << 16

// Sizes is the size each file had at the last event a client's change of it
// made (create, write, truncate, setattr), kept for the files the index holds
// no size of: a write through the server makes the size the index last saw
// stale (index.ReconcileReport.Unsized), and a host's truncate after it would
// otherwise read as a write. The log keeps it in step as it fills events, in
// their order (Note); the daemon forgets a file once a look at the backing
// directory saw it (Forget), since the index then holds its size. Bounded
// (maxSizes). Safe for concurrent use.
type Sizes struct {
	mu   sync.Mutex
	m    map[string]sizeAt
	tick uint64
}

type sizeAt struct {
	size int64
	tick uint64 // when it was noted, for the bound
}

// NewSizes is an empty Sizes.
func NewSizes() *Sizes { return &Sizes{m: map[string]sizeAt{}} }

// Note keeps Sizes in step with one event filled (its size known): a
// client's create, write, truncate or setattr of a file notes its size, a
// rename moves it, a remove forgets it, and a host's change of a file
// forgets it (the index has its size then).
func (s *Sizes) Note(e Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case e.App == AppHost:
		delete(s.m, e.Path)
		if e.From != "" {
			delete(s.m, e.From)
		}
	case e.Op == OpRename:
		if v, ok := s.m[e.From]; ok {
			delete(s.m, e.From)
			s.m[e.Path] = v
		} else {
			delete(s.m, e.Path)
		}
	case e.Op == OpRemove:
		delete(s.m, e.Path)
	case e.Type != "file":
	case e.Op == OpCreate, e.Op == OpWrite, e.Op == OpTruncate, e.Op == OpSetattr, e.Op == OpLink:
		s.tick++
		s.m[e.Path] = sizeAt{e.Size, s.tick}
		if len(s.m) > maxSizes {
			s.trimLocked()
		}
	}
}

// trimLocked forgets the older half. Precondition: s.mu held.
func (s *Sizes) trimLocked() {
	cut := s.tick - uint64(len(s.m))/2
	for p, v := range s.m {
		if v.tick <= cut {
			delete(s.m, p)
		}
	}
}

// Size is p's size at the last client event noted, if one is kept.
func (s *Sizes) Size(p string) (int64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.m[p]
	return v.size, ok
}

// Forget drops p: a look at the backing directory saw it.
func (s *Sizes) Forget(p string) {
	s.mu.Lock()
	delete(s.m, p)
	s.mu.Unlock()
}
