package policy

import (
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// Live is the policy in force in a daemon, shared by every door. A reload
// swaps a whole Policy (an atomic pointer), so a decision sees the old rules
// or the new ones, never a mix; a reload that fails leaves the old Policy in
// force and its error in Status. A nil *Live, or one holding no Policy, is
// "no policy": every method is then cheap and allows everything. Safe for
// concurrent use.
type Live struct {
	cur atomic.Pointer[Policy]
	// Denied, when set, is told of every refusal (the daemon counts them in
	// semfs_policy_denials_total{app,op}). Set before serving.
	Denied func(app, op string)
	log    *slog.Logger

	mu     sync.Mutex
	status Status
	logged map[denialKey]*denialLog // rate limit of the denial log
}

// Status is what /v1/health shows of the policy: the file, when it was last
// loaded whole, and why the last attempt failed ("" when it did not).
type Status struct {
	File   string    `json:"file"`
	Loaded time.Time `json:"loaded"`
	Error  string    `json:"error,omitempty"`
}

type denialKey struct{ app, op string }

type denialLog struct {
	last       time.Time
	suppressed int
}

// denialLogEvery bounds the denial log to one line per app and operation in
// this interval; the lines in between are counted in the next one.
const denialLogEvery = 10 * time.Second

// NewLive returns a Live holding p (nil: none yet), logging to log.
func NewLive(file string, p *Policy, log *slog.Logger) *Live {
	if log == nil {
		log = slog.Default()
	}
	l := &Live{log: log, logged: map[denialKey]*denialLog{}}
	l.status.File = file
	if p != nil {
		l.cur.Store(p)
		l.status.Loaded = time.Now()
	}
	return l
}

// Policy returns the policy in force, nil when none.
func (l *Live) Policy() *Policy {
	if l == nil {
		return nil
	}
	return l.cur.Load()
}

// For returns app's rules, nil when no policy is in force.
func (l *Live) For(app string) *App {
	if p := l.Policy(); p != nil {
		return p.For(app)
	}
	return nil
}

// Reload reads the file again: parsed whole, it replaces the policy in force;
// otherwise the old one stays, and the error is logged and kept in Status.
func (l *Live) Reload() error {
	p, err := Load(l.status.File)
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil {
		l.status.Error = err.Error()
		l.log.Error("policy reload failed; the previous policy stays in force", "err", err)
		return err
	}
	l.cur.Store(p)
	l.status.Loaded, l.status.Error = time.Now(), ""
	l.log.Info("policy loaded", "file", l.status.File, "apps", len(p.names))
	return nil
}

// Status says what was loaded and when, and the last error.
func (l *Live) Status() Status {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.status
}

// Deny records a refusal: it is counted, and logged at most once per app and
// operation every denialLogEvery. The log names the rule, not a hidden path's
// existence: a hidden path's refusals are logged as "not found" by callers
// that want them at all.
func (l *Live) Deny(app, op, path, rule string) {
	if l == nil {
		return
	}
	if l.Denied != nil {
		l.Denied(app, op)
	}
	now := time.Now()
	l.mu.Lock()
	k := denialKey{app, op}
	d := l.logged[k]
	if d == nil {
		if len(l.logged) > 4096 {
			clear(l.logged) // bounded: apps and ops are few, but app names come from registrations
		}
		d = &denialLog{}
		l.logged[k] = d
	}
	if !d.last.IsZero() && now.Sub(d.last) < denialLogEvery {
		d.suppressed++
		l.mu.Unlock()
		return
	}
	n := d.suppressed
	d.last, d.suppressed = now, 0
	l.mu.Unlock()
	l.log.Warn("policy denied", "app", app, "op", op, "path", path, "rule", rule, "alsoDeniedSinceLastLine", n)
}
