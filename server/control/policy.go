package control

import (
	"fmt"
	"net/http"
	"os"

	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/server/policy"
)

// The control socket under a policy (issue 26). The caller is the app
// registered for its SO_PEERCRED uid ("" when none is); the daemon's own uid
// and root are the operator, whom no policy limits. Hidden paths answer as
// paths that do not exist (404 with the same message), so that no answer
// tells a hidden name from a missing one; a tag outside the app's tag rights
// is 403.

// rules returns the caller's app and rules; rules is nil when nothing limits
// the caller (no policy, or the operator).
func (s *Server) rules(r *http.Request) (app string, rules *policy.App) {
	pol := s.opt.Policy.Policy()
	if pol == nil {
		return "", nil
	}
	p, _ := r.Context().Value(peerKey{}).(peer)
	if p.ok {
		if p.uid == 0 || p.uid == uint32(os.Getuid()) {
			return "", nil
		}
		if s.opt.Registry != nil {
			if a, ok := s.opt.Registry.Lookup(p.uid); ok {
				app = a
			}
		}
	}
	return app, pol.For(app)
}

// notFound is the index's answer for a path it has no record of, word for
// word: what a hidden path answers.
func notFound(op, p string) error {
	return &index.Error{Op: op, Kind: index.KindNotFound, Path: p, Err: index.ErrNotFound}
}

// mayTag checks the caller's tag right on clean path p (known to exist and
// be visible); msg is the 403's text, "" when allowed.
func (s *Server) mayTag(app string, rules *policy.App, p string) (msg string) {
	if rules == nil {
		return ""
	}
	by := s.opt.FS.CreatedBy(p) // durable before the create returned
	if by == "" {               // no durable records kept: the index's
		if rec, err := s.opt.Index.Get(p); err == nil {
			by = rec.CreatedBy
		}
	}
	if rules.May(policy.Tag, p, by) {
		return ""
	}
	d := rules.Decide(policy.Tag, p, by)
	s.opt.Policy.Deny(app, "tag", p, d.Rule)
	return fmt.Sprintf("app %q may not tag /%s (policy: %s)", app, p, d.Rule)
}

// visible filters query results down to what the caller may see.
func visible(rules *policy.App, res []index.Result, limit int) []index.Result {
	if rules == nil || !rules.HidesAny() {
		return res
	}
	out := res[:0]
	for _, r := range res {
		if !rules.Hidden(r.Path) {
			out = append(out, r)
		}
	}
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out
}
