package server_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/semfs/semfs/server"
)

// TestVouchedGroups: with Identity.VouchedGroups, the group a chgrp or a
// create names counts among the caller's groups for the chown that gives it,
// and nothing else changes: the owner alone may chgrp, nobody gives a file
// away, setuid and setgid are cleared, and group bits still use the caller's
// own groups.
// Without it the same calls are refused.
func TestVouchedGroups(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("acting as other users needs a daemon running as root (root mode)")
	}
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	fsys, err := server.New(dir, server.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fsys.Close() })
	const owner, other, gp = 1000, 1001, 4000 // gp: a group neither holds
	vouched := func(uid uint32) context.Context {
		return server.WithIdentity(context.Background(), server.Identity{UID: uid, HasUID: true, GID: uid, HasGID: true,
			Groups: []uint32{uid}, VouchedGroups: true, Proto: "test"})
	}
	for _, n := range []string{"f", "plain", "group"} {
		p := filepath.Join(dir, n)
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(p, owner, owner); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(filepath.Join(dir, "f"), 0o755|os.ModeSetuid|os.ModeSetgid); err != nil {
		t.Fatal(err)
	}
	g := uint32(gp)
	hostOf := func(n string) (uint32, fs.FileMode) {
		t.Helper()
		fi, err := os.Lstat(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		return fi.Sys().(*syscall.Stat_t).Gid, fi.Mode()
	}

	if _, err := fsys.SetAttr(caller(owner, owner, owner), "plain", server.SetAttr{GID: &g}); !errors.Is(err, syscall.EPERM) {
		t.Errorf("chgrp to a group the caller does not hold, not vouched for: %v, want EPERM", err)
	}
	if _, err := fsys.SetAttr(vouched(other), "f", server.SetAttr{GID: &g}); !errors.Is(err, syscall.EPERM) {
		t.Errorf("vouched chgrp by a caller that does not own the file: %v, want EPERM", err)
	}
	u := uint32(other)
	if _, err := fsys.SetAttr(vouched(owner), "f", server.SetAttr{UID: &u}); !errors.Is(err, syscall.EPERM) {
		t.Errorf("vouched owner giving its file away: %v, want EPERM", err)
	}
	if _, err := fsys.SetAttr(vouched(owner), "f", server.SetAttr{GID: &g}); err != nil {
		t.Fatalf("vouched chgrp by the owner: %v", err)
	}
	if gid, mode := hostOf("f"); gid != gp || mode&(os.ModePerm|os.ModeSetuid|os.ModeSetgid) != 0o755 {
		t.Errorf("after the vouched chgrp: gid %d mode %v, want %d and 0755 (setuid and setgid cleared)", gid, mode, gp)
	}

	// The vouched group is the call's only: reading through group bits is
	// still decided by the caller's own groups.
	if err := os.Chown(filepath.Join(dir, "group"), 0, gp); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(dir, "group"), 0o040); err != nil {
		t.Fatal(err)
	}
	if _, err := fsys.Open(vouched(owner), "group", os.O_RDONLY); !errors.Is(err, syscall.EACCES) {
		t.Errorf("vouched caller reading a file of a group it was vouched for once: %v, want EACCES", err)
	}

	// A create's group.
	creating := func(ctx context.Context) context.Context {
		id := server.IdentityFrom(ctx)
		id.CreateGID, id.HasCreateGID = gp, true
		return server.WithIdentity(ctx, id)
	}

	// Nor does the group reach the rest of the request: a truncate sent with
	// the chgrp, or the open of an existing file by a create naming its group.
	gw := filepath.Join(dir, "groupw")
	if err := os.WriteFile(gw, []byte("data"), 0o060); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(gw, 0, gp); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(gw, 0o060); err != nil {
		t.Fatal(err)
	}
	zero := int64(0)
	if _, err := fsys.SetAttr(vouched(other), "groupw", server.SetAttr{GID: &g, Size: &zero}); err == nil {
		t.Errorf("a vouched chgrp with a truncate, by a caller that neither owns the file nor holds its group: allowed")
	}
	if fl, _, err := fsys.Create(creating(vouched(other)), "groupw", 0o644, false); err == nil {
		fl.Close()
		t.Errorf("a vouched create naming an existing file's group opened it (group bits 060, the caller outside the group)")
	}
	if b, err := os.ReadFile(gw); err != nil || string(b) != "data" {
		t.Errorf("groupw after the refused calls: %q, %v", b, err)
	}
	for _, c := range []struct {
		name string
		ctx  context.Context
		want uint32
	}{{"made-plain", caller(owner, owner, owner), owner}, {"made-vouched", vouched(owner), gp}} {
		if _, err := fsys.Mkdir(creating(c.ctx), c.name, 0o755); err != nil {
			t.Fatalf("mkdir %s: %v", c.name, err)
		}
		if gid, _ := hostOf(c.name); gid != c.want {
			t.Errorf("%s, created asking for gid %d: gid %d, want %d", c.name, gp, gid, c.want)
		}
	}
}
