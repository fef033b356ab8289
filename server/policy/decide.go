package policy

import (
	"fmt"
	"strings"
	"sync"
)

// Decision is one answer and the rule that gave it, for explanations.
type Decision struct {
	Allowed bool   `json:"allowed"`
	Rule    string `json:"rule"`
}

// Explanation is what an app may do to a path and why (`semfs policy explain`).
type Explanation struct {
	App   string   `json:"app"`
	Path  string   `json:"path"`
	See   Decision `json:"see"`
	Read  Decision `json:"read"`
	Write Decision `json:"write"`
	Tag   Decision `json:"tag"`
	// ReadOnly: the app's write list is empty, so its mutations answer EROFS
	// rather than EACCES.
	ReadOnly bool `json:"readOnly"`
}

// Clean turns a path as callers spell it (a leading or trailing '/', "." for
// the root) into the form patterns are matched against.
func Clean(p string) string {
	p = strings.Trim(p, "/")
	if p == "." {
		return ""
	}
	return p
}

// Hidden says whether p (clean, relative to the backing directory) does not
// exist for the app: it or one of its ancestors matches a hide pattern. The
// root is never hidden. Ancestors' answers are cached per directory, so a
// lookup costs the patterns of its last component once its directory has
// been seen.
func (a *App) Hidden(p string) bool {
	if len(a.fields[Hide].pats) == 0 || p == "" {
		return false
	}
	return a.dirHidden(parent(p)) || a.fields[Hide].match(p) >= 0
}

// HidesAny says whether the app has anything hidden at all: callers skip the
// per-path question when it has not.
func (a *App) HidesAny() bool { return len(a.fields[Hide].pats) > 0 }

func (a *App) dirHidden(dir string) bool {
	if dir == "" {
		return false
	}
	if v, ok := a.dirs.get(dir); ok {
		return v
	}
	v := a.dirHidden(parent(dir)) || a.fields[Hide].match(dir) >= 0
	a.dirs.put(dir, v)
	return v
}

// May says whether the app may read, write or tag p, whose created_by is
// createdBy ("" if unknown or new). A hidden path is never allowed. Hide as
// fl asks the same as Hidden, negated.
func (a *App) May(fl Field, p, createdBy string) bool {
	if a.Hidden(p) {
		return false
	}
	if fl == Hide {
		return true
	}
	rs := &a.fields[fl]
	return rs.match(p) >= 0 || rs.own && a.owns(createdBy)
}

// UsesOwn says whether fl's list holds "own": only then does a refusal by
// the patterns need the path's created_by to be final.
func (a *App) UsesOwn(fl Field) bool { return a.fields[fl].own }

// owns: "own" never matches for the unattributed caller, whose files carry
// no creator.
func (a *App) owns(createdBy string) bool { return a.name != "" && createdBy == a.name }

// Decide is May with the rule that decided, for explanations and logs.
func (a *App) Decide(fl Field, p, createdBy string) Decision {
	if rule, hidden := a.hiddenBy(p); hidden {
		if fl == Hide {
			return Decision{false, rule}
		}
		return Decision{false, "the path is hidden: " + rule}
	}
	if fl == Hide {
		rs := &a.fields[Hide]
		if len(rs.pats) == 0 {
			return Decision{true, fmt.Sprintf("%s.hide is empty", rs.from)}
		}
		return Decision{true, fmt.Sprintf("%s.hide: no pattern matches it or a directory above it", rs.from)}
	}
	rs := &a.fields[fl]
	if i := rs.match(p); i >= 0 {
		return Decision{true, fmt.Sprintf("%s.%s %q", rs.from, fl, rs.pats[i].src)}
	}
	if rs.own && a.owns(createdBy) {
		return Decision{true, fmt.Sprintf("%s.%s %q (created_by is %q)", rs.from, fl, Own, a.name)}
	}
	switch {
	case len(rs.pats) == 0 && !rs.own:
		return Decision{false, fmt.Sprintf("%s.%s is empty", rs.from, fl)}
	case rs.own:
		return Decision{false, fmt.Sprintf("%s.%s: no pattern matches and created_by is %q, not %q", rs.from, fl, createdBy, a.name)}
	}
	return Decision{false, fmt.Sprintf("%s.%s: no pattern matches", rs.from, fl)}
}

// hiddenBy names the hide pattern and the path it matched (p or the
// ancestor that hides it).
func (a *App) hiddenBy(p string) (string, bool) {
	rs := &a.fields[Hide]
	if p == "" || len(rs.pats) == 0 {
		return "", false
	}
	for i := 0; ; {
		j := strings.IndexByte(p[i:], '/')
		q := p
		if j >= 0 {
			q = p[:i+j]
		}
		if k := rs.match(q); k >= 0 {
			if q == p {
				return fmt.Sprintf("%s.hide %q", rs.from, rs.pats[k].src), true
			}
			return fmt.Sprintf("%s.hide %q matches the directory %q above it", rs.from, rs.pats[k].src, q), true
		}
		if j < 0 {
			return "", false
		}
		i += j + 1
	}
}

// Explain says what app may do to path p, created by createdBy.
func (p *Policy) Explain(app, path, createdBy string) Explanation {
	a := p.For(app)
	path = Clean(path)
	return Explanation{
		App: app, Path: path,
		See:      a.Decide(Hide, path, createdBy),
		Read:     a.Decide(Read, path, createdBy),
		Write:    a.Decide(Write, path, createdBy),
		Tag:      a.Decide(Tag, path, createdBy),
		ReadOnly: a.ReadOnly(),
	}
}

// match returns the index of the first pattern matching p, or -1.
func (rs *ruleSet) match(p string) int {
	for i := range rs.pats {
		if rs.pats[i].match(p) {
			return i
		}
	}
	return -1
}

func parent(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[:i]
	}
	return ""
}

// dirCache remembers whether directories are hidden. It is bounded: when full
// it starts over, which costs recomputing, never a wrong answer (a Policy
// never changes; a reload makes new caches).
type dirCache struct {
	mu sync.RWMutex
	m  map[string]bool
}

const maxCachedDirs = 8192

func (c *dirCache) get(dir string) (hidden, ok bool) {
	c.mu.RLock()
	hidden, ok = c.m[dir]
	c.mu.RUnlock()
	return hidden, ok
}

func (c *dirCache) put(dir string, hidden bool) {
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxCachedDirs {
		c.m = make(map[string]bool)
	}
	c.m[dir] = hidden
	c.mu.Unlock()
}
