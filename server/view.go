package server

import (
	"context"
	"fmt"
	"syscall"

	"github.com/semfs/semfs/server/policy"
)

// Each app's view of the tree under the --policy file (issue 26), held in the
// core so that both front ends, their fast paths included, and the .semfs
// tree answer alike. Every FS call made with a caller's Identity asks here
// first; a context without one (the daemon's own work: reconcile, snapshots,
// handle resolution) is never limited, and without a policy each hook is one
// atomic load.
//
//   - Hidden: p or a directory above it is hidden. It does not exist: lookups
//     and everything done to it answer KindNotFound, listings leave it out,
//     and creating or renaming onto its name answers KindPermission (never
//     KindExists, which would confirm it).
//   - Read: outside the app's read patterns, metadata is visible but opening
//     for reading, reading and listing answer KindPermission.
//   - Write: outside the app's write patterns, every change answers
//     KindPermission; an app whose write list is empty has a read-only export
//     and every change answers KindReadOnly, as an `ro` export does, whether
//     or not the target exists. A new name is written only where a write
//     pattern matches it ("own" needs a creator, which a new name has not);
//     "own" allows changing an existing file whose created_by is the app.

// rulesOf returns ctx's caller's app and rules, nil rules when unlimited.
func (f *FS) rulesOf(ctx context.Context) (string, *policy.App) {
	if f.pol.Policy() == nil {
		return "", nil
	}
	return f.Rules(ctx)
}

// RulesFor is Rules for an identity a front end holds outside a context (the
// NFS adapter's per-call view of the paths it resolves).
func (f *FS) RulesFor(id Identity) *policy.App {
	pol := f.pol.Policy()
	if pol == nil {
		return nil
	}
	return pol.For(f.appOf(id))
}

// viewSee is nil, or KindNotFound when p is hidden from ctx's caller.
func (f *FS) viewSee(ctx context.Context, op, p string) error {
	_, rules := f.rulesOf(ctx)
	if rules != nil && rules.Hidden(p) {
		return E(op, KindNotFound, p, syscall.ENOENT)
	}
	return nil
}

// viewRead is viewSee, then KindPermission outside the read patterns.
func (f *FS) viewRead(ctx context.Context, op, p string) error {
	app, rules := f.rulesOf(ctx)
	if rules == nil {
		return nil
	}
	if rules.Hidden(p) {
		return E(op, KindNotFound, p, syscall.ENOENT)
	}
	if rules.May(policy.Read, p, "") {
		return nil
	}
	return f.denied(app, rules, op, p, policy.Read, "", KindPermission)
}

// viewWrite decides a change to existing path p (write, truncate, setattr,
// remove, the source of a rename).
func (f *FS) viewWrite(ctx context.Context, op, p string) error {
	app, rules := f.rulesOf(ctx)
	if rules == nil {
		return nil
	}
	if rules.ReadOnly() {
		return f.denied(app, rules, op, p, policy.Write, "", KindReadOnly)
	}
	if rules.Hidden(p) {
		return E(op, KindNotFound, p, syscall.ENOENT)
	}
	if rules.May(policy.Write, p, "") {
		return nil
	}
	var by string
	if rules.UsesOwn(policy.Write) {
		by = f.CreatedBy(p)
		if rules.May(policy.Write, p, by) {
			return nil
		}
	}
	return f.denied(app, rules, op, p, policy.Write, by, KindPermission)
}

// viewCreate decides making new name p (create, mkdir, symlink, mknod, the
// new name of a link or a rename): a hidden directory above it is missing, a
// hidden name itself is refused as an unwritable one is.
func (f *FS) viewCreate(ctx context.Context, op, p string) error {
	app, rules := f.rulesOf(ctx)
	if rules == nil {
		return nil
	}
	if rules.ReadOnly() {
		return f.denied(app, rules, op, p, policy.Write, "", KindReadOnly)
	}
	dir, _ := Split(p)
	if rules.Hidden(dir) {
		return E(op, KindNotFound, p, syscall.ENOENT)
	}
	if !rules.Hidden(p) && rules.May(policy.Write, p, "") {
		return nil
	}
	return f.denied(app, rules, op, p, policy.Write, "", KindPermission)
}

// viewFilter leaves out of directory p's listing what ctx's caller may not
// see.
func (f *FS) viewFilter(ctx context.Context, p string, ents []DirEntry) []DirEntry {
	_, rules := f.rulesOf(ctx)
	if rules == nil || !rules.HidesAny() {
		return ents
	}
	out := ents[:0]
	for _, e := range ents {
		if !rules.Hidden(Join(p, e.Name)) {
			out = append(out, e)
		}
	}
	return out
}

// viewAccess removes from got what ctx's caller may not do to p under the
// policy (NFS ACCESS, access(2) over 9P).
func (f *FS) viewAccess(ctx context.Context, p string, got Access) Access {
	_, rules := f.rulesOf(ctx)
	if rules == nil {
		return got
	}
	if !rules.May(policy.Read, p, "") {
		got &^= MayRead
	}
	if !rules.May(policy.Write, p, "") && (rules.ReadOnly() || !rules.UsesOwn(policy.Write)) {
		got &^= MayWrite
	}
	return got
}

// denied counts and logs a refusal and returns its error. The rule is named
// in the log, never in the error a client sees.
func (f *FS) denied(app string, rules *policy.App, op, p string, fl policy.Field, by string, kind Kind) error {
	d := rules.Decide(fl, p, by)
	f.pol.Deny(app, op, p, d.Rule)
	return E(op, kind, p, fmt.Errorf("denied by the policy for app %q", app))
}

// viewOpen decides opening existing p for reading or writing.
func (f *FS) viewOpen(ctx context.Context, p string, write bool) error {
	if write {
		return f.viewWrite(ctx, "open", p)
	}
	return f.viewRead(ctx, "open", p)
}

// viewIO decides one read or write of an open file by ctx's caller (NFS's
// shared descriptors, see File.CheckIO): a reload applies to files already
// open.
func (f *FS) viewIO(ctx context.Context, p string, write bool) error {
	if write {
		return f.viewWrite(ctx, "write", p)
	}
	return f.viewRead(ctx, "read", p)
}

// viewTwo decides a rename or link: oldPath must be visible (and, for a
// rename, changeable), newPath is a new name.
func (f *FS) viewTwo(ctx context.Context, op, oldPath, newPath string) error {
	var err error
	if op == "rename" {
		err = f.viewWrite(ctx, op, oldPath)
	} else {
		err = f.viewSee(ctx, op, oldPath)
	}
	if err != nil {
		return err
	}
	return f.viewCreate(ctx, op, newPath)
}
