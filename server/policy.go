package server

import (
	"context"
	"fmt"
	"syscall"

	"github.com/semfs/semfs/server/policy"
)

// The core's side of the --policy file (server/policy): who the rules apply
// to, and the questions the doors that are not file operations ask (the
// .semfs tree's query results, tags files and tag attributes). A context
// without an Identity is the daemon's own work and is never limited.

// Rules returns the acting app for ctx and its rules; rules is nil when
// nothing limits the call (no policy loaded, or the daemon's own work).
func (f *FS) Rules(ctx context.Context) (app string, rules *policy.App) {
	pol := f.pol.Policy()
	if pol == nil {
		return "", nil
	}
	id, ok := identityOf(ctx)
	if !ok {
		return "", nil
	}
	app = f.appOf(id)
	return app, pol.For(app)
}

// Hidden says whether p does not exist for ctx's caller under the policy.
// Safe for concurrent use.
func (f *FS) Hidden(ctx context.Context, p string) bool {
	_, rules := f.Rules(ctx)
	return rules != nil && rules.Hidden(p)
}

// CheckTag says whether ctx's caller may change the tags of p, whose
// created_by is createdBy: nil, a KindNotFound error for a hidden path (as
// for a missing one), or KindPermission naming the rule. Safe for
// concurrent use.
func (f *FS) CheckTag(ctx context.Context, op, p, createdBy string) error {
	app, rules := f.Rules(ctx)
	if rules == nil {
		return nil
	}
	if rules.Hidden(p) {
		return E(op, KindNotFound, p, syscall.ENOENT)
	}
	if rules.May(policy.Tag, p, createdBy) {
		return nil
	}
	d := rules.Decide(policy.Tag, p, createdBy)
	f.pol.Deny(app, "tag", p, d.Rule)
	return E(op, KindPermission, p, fmt.Errorf("app %q may not tag it (policy: %s)", app, d.Rule))
}

// CreatedBy is p's creator from its durable record, which the core writes
// before a create returns (so a file just made is known, where the index may
// not have it yet); "" when p has no record or none is kept. The daemon's
// own read: no caller is checked.
func (f *FS) CreatedBy(p string) string {
	m, src, err := f.ReadMeta(context.Background(), p)
	if err != nil || src == MetaNone {
		return ""
	}
	return m.CreatedBy
}
