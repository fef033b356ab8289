package server

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
)

// CheckApp validates an app name: 1 to 64 characters from [A-Za-z0-9._-], starting
// with a letter or digit, so that it is safe in a mount path, an aname and a log.
func CheckApp(app string) error {
	if app == "" {
		return E("register", KindInvalid, "", constError("app name is empty"))
	}
	if len(app) > 64 {
		return E("register", KindInvalid, "", constError("app name is longer than 64 characters"))
	}
	for i, c := range app {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			i > 0 && (c == '.' || c == '_' || c == '-')
		if !ok {
			return E("register", KindInvalid, "", fmt.Errorf("app name %q: only letters, digits, '.', '_' and '-' (not first) are allowed", app))
		}
	}
	return nil
}

// Registry binds uids to apps ("register {app}" on the control socket). It is
// persisted as a small JSON file rewritten atomically on every change, so a
// registration survives a restart. Safe for concurrent use.
type Registry struct {
	path string
	mu   sync.RWMutex
	apps map[uint32]string
}

// OpenRegistry loads the registry file at path, creating none until the first
// registration.
func OpenRegistry(path string) (*Registry, error) {
	r := &Registry{path: path, apps: map[uint32]string{}}
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return r, nil
	}
	if err != nil {
		return nil, wrap("open registry", "", err)
	}
	var m map[string]string
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, E("open registry", KindIO, "", fmt.Errorf("%s: %w", path, err))
	}
	for k, v := range m {
		uid, err := strconv.ParseUint(k, 10, 32)
		if err != nil || CheckApp(v) != nil {
			return nil, E("open registry", KindIO, "", fmt.Errorf("%s: bad entry %q=%q", path, k, v))
		}
		r.apps[uint32(uid)] = v
	}
	return r, nil
}

// Register binds uid to app, replacing an earlier binding, and persists it.
func (r *Registry) Register(uid uint32, app string) error {
	if err := CheckApp(app); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	old, had := r.apps[uid]
	r.apps[uid] = app
	if err := r.saveLocked(); err != nil {
		if had {
			r.apps[uid] = old
		} else {
			delete(r.apps, uid)
		}
		return err
	}
	return nil
}

// Lookup returns the app bound to uid.
func (r *Registry) Lookup(uid uint32) (string, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	app, ok := r.apps[uid]
	return app, ok
}

// All returns a copy of every binding.
func (r *Registry) All() map[uint32]string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	m := make(map[uint32]string, len(r.apps))
	for k, v := range r.apps {
		m[k] = v
	}
	return m
}

// Precondition: r.mu held for writing.
func (r *Registry) saveLocked() error {
	m := make(map[string]string, len(r.apps))
	for k, v := range r.apps {
		m[strconv.FormatUint(uint64(k), 10)] = v
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return E("register", KindIO, "", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(r.path), ".registry-*")
	if err != nil {
		return wrap("register", "", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return wrap("register", "", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return wrap("register", "", err)
	}
	if err := tmp.Close(); err != nil {
		return wrap("register", "", err)
	}
	return wrap("register", "", os.Rename(tmp.Name(), r.path))
}
