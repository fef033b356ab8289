package server

import "sync"

// ConnApps is the set of apps one connection of a front end has served: each
// is counted once by the track function the daemon gave (open connections per
// app) and released when the connection ends. Both front ends keep one per
// connection, so the rule "a connection counts once under each app it used"
// lives here, not twice. Safe for concurrent use; a nil *ConnApps, or one made
// with a nil track, does nothing.
type ConnApps struct {
	track  func(app string) (release func())
	mu     sync.Mutex
	apps   map[string]func()
	closed bool
}

// NewConnApps returns the set for one new connection; nil when track is nil.
func NewConnApps(track func(app string) (release func())) *ConnApps {
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
