package server

import (
	"sync"
	"time"
)

// ConnApps is the set of apps one connection of a front end has served: each
// is counted once by the track function the daemon gave (open connections per
// app) and released when the connection ends. Both front ends keep one per
// connection, so the rule "a connection counts once under each app it used"
// lives here, not twice. Safe for concurrent use; a nil *ConnApps, or one made
// with a nil track, does nothing.
type ConnApps struct {
	track  TrackFunc
	mu     sync.Mutex
	apps   map[string]func()
	closed bool
}

// NewConnApps returns the set for one new connection; nil when track is nil.
func NewConnApps(track TrackFunc) *ConnApps {
	if track == nil {
		return nil
	}
	return &ConnApps{track: track, apps: map[string]func(){}}
}

// Add notes that the connection serves app; the first time, track counts it.
// After Close it does nothing, so a late request cannot count a closed
// connection again.
func (c *ConnApps) Add(app string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.apps[app]; ok || c.closed {
		return
	}
	c.apps[app] = c.track(app)
}

// Close releases every app the connection counted. Called once it has ended.
func (c *ConnApps) Close() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	for app, release := range c.apps {
		if release != nil {
			release()
		}
		delete(c.apps, app)
	}
}

// ObserveFunc is told of every request a front end answered: its operation
// (a closed set of names per protocol, so a metric label cannot grow with what
// clients send), whether the answer was an error, and the time from the
// request being read to its reply being written. It is called on the
// connection's goroutines and must be quick.
type ObserveFunc func(op string, failed bool, d time.Duration)

// TrackFunc is told the first time a connection serves an app and returns what
// to call when that connection closes: it counts connections per app
// (ConnApps).
type TrackFunc func(app string) (release func())

// Calls pairs one connection's requests with their replies by the protocol's
// request key (an RPC xid, a 9P tag): Start keeps what the front end knew of
// the request (V) with the time, Done gives it back with the time taken. A
// request that never gets a reply (a flushed 9P request) stays until its key is
// reused. Safe for concurrent use.
type Calls[K comparable, V any] struct {
	mu       sync.Mutex
	inflight map[K]pending[V]
}

type pending[V any] struct {
	v     V
	start time.Time
}

// Start notes request k's arrival.
func (c *Calls[K, V]) Start(k K, v V) {
	now := time.Now()
	c.mu.Lock()
	if c.inflight == nil {
		c.inflight = map[K]pending[V]{}
	}
	c.inflight[k] = pending[V]{v: v, start: now}
	c.mu.Unlock()
}

// Done notes the reply to k: what Start kept and the time since; false for a
// key with no request waiting.
func (c *Calls[K, V]) Done(k K) (v V, took time.Duration, ok bool) {
	c.mu.Lock()
	p, ok := c.inflight[k]
	delete(c.inflight, k)
	c.mu.Unlock()
	if !ok {
		return v, 0, false
	}
	return p.v, time.Since(p.start), true
}
