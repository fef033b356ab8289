package server_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/semfs/semfs/server"
	"github.com/semfs/semfs/server/policy"
)

// The core's policy hooks (view.go), called as both front ends call them:
// with a door's identity in the context. The doors' own answers are tested
// through real clients in integration/policy_doors_test.go.

const viewPolicy = `{"apps": {
  "agent":  {"write": ["agent/**"], "hide": ["secrets/**", "**/*.key"]},
  "ro":     {"write": []},
  "reader": {"read": ["pub/**"]},
  "owner":  {"write": ["own", "new/**"]}
}}`

func newViewFS(t *testing.T) (*server.FS, string) {
	t.Helper()
	base := t.TempDir()
	dir := filepath.Join(base, "data")
	for _, p := range []string{"agent", "secrets", "pub", "top", "new"} {
		if err := os.MkdirAll(filepath.Join(dir, p), 0o777); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{"secrets/s", "pub/p", "top/id.key", "top/t", "agent/a"} {
		if err := os.WriteFile(filepath.Join(dir, p), []byte(p), 0o666); err != nil {
			t.Fatal(err)
		}
	}
	pol, err := policy.Parse([]byte(viewPolicy))
	if err != nil {
		t.Fatal(err)
	}
	fs, err := server.New(dir, server.Options{Journal: filepath.Join(base, "journal"), Policy: policy.NewLive("", pol, nil)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fs.Close() })
	return fs, dir
}

func TestViewHooks(t *testing.T) {
	fs, dir := newViewFS(t)
	ctx := context.Background()
	create := func(c context.Context, p string) error {
		f, _, err := fs.Create(c, p, 0o644, true)
		if err == nil {
			f.Close()
		}
		return err
	}
	open := func(c context.Context, p string, flags int) error {
		f, err := fs.Open(c, p, flags)
		if err == nil {
			f.Close()
		}
		return err
	}
	_, lstatErr := fs.Lstat(as("agent"), "secrets/s")
	_, lstatDirErr := fs.Lstat(as("agent"), "secrets")
	_, mkdirErr := fs.Mkdir(as("agent"), "top/x.key", 0o755)
	_, roMkdir := fs.Mkdir(as("ro"), "top/d", 0o755)
	_, roSetattr := fs.SetAttr(as("ro"), "top/t", server.SetAttr{Size: new(int64)})
	_, readlinkErr := fs.Readlink(as("agent"), "top/id.key")
	_, listErr := fs.ReadDir(as("reader"), "top")
	_, accessErr := fs.Access(as("agent"), "secrets/s", server.MayRead)
	cases := []struct {
		name string
		err  error
		want server.Kind
	}{
		{"lstat of a hidden file", lstatErr, server.KindNotFound},
		{"lstat of a hidden directory", lstatDirErr, server.KindNotFound},
		{"readlink of a hidden path", readlinkErr, server.KindNotFound},
		{"access of a hidden path", accessErr, server.KindNotFound},
		{"create onto an existing hidden name", create(as("agent"), "top/id.key"), server.KindPermission},
		{"create onto a new hidden name", create(as("agent"), "top/new.key"), server.KindPermission},
		{"mkdir onto a hidden name", mkdirErr, server.KindPermission},
		{"create in a hidden directory", create(as("agent"), "secrets/new"), server.KindNotFound},
		{"remove a hidden file", fs.Remove(as("agent"), "top/id.key", false), server.KindNotFound},
		{"rename onto a hidden name", fs.Rename(as("agent"), "agent/a", "top/id.key"), server.KindPermission},
		{"rename a hidden file", fs.Rename(as("agent"), "secrets/s", "agent/s"), server.KindNotFound},
		{"create outside write", create(as("agent"), "top/n"), server.KindPermission},
		{"open for writing outside write", open(as("agent"), "top/t", os.O_WRONLY), server.KindPermission},
		{"remove outside write", fs.Remove(as("agent"), "top/t", false), server.KindPermission},
		{"read-only: create", create(as("ro"), "agent/n"), server.KindReadOnly},
		{"read-only: mkdir", roMkdir, server.KindReadOnly},
		{"read-only: setattr", roSetattr, server.KindReadOnly},
		{"read-only: remove of a missing file", fs.Remove(as("ro"), "nope", false), server.KindReadOnly},
		{"outside read: open", open(as("reader"), "top/t", os.O_RDONLY), server.KindPermission},
		{"outside read: readdir", listErr, server.KindPermission},
	}
	for _, c := range cases {
		if k := server.KindOf(c.err); c.err == nil || k != c.want {
			t.Errorf("%s: %v (%v), want %v", c.name, c.err, k, c.want)
		}
	}
	for _, p := range []string{"top/id.key", "top/t", "secrets/s"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			t.Errorf("%s changed: %v", p, err)
		}
	}
	// Allowed, and listings without what is hidden.
	if err := create(as("agent"), "agent/new"); err != nil {
		t.Errorf("create inside write: %v", err)
	}
	if err := open(as("reader"), "pub/p", os.O_RDONLY); err != nil {
		t.Errorf("open inside read: %v", err)
	}
	if _, err := fs.Lstat(as("reader"), "top/t"); err != nil {
		t.Errorf("metadata outside read: %v", err)
	}
	names := func(c context.Context, p string) []string {
		ents, err := fs.ReadDir(c, p)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range ents {
			out = append(out, e.Name)
		}
		return out
	}
	if got := names(as("agent"), ""); slices.Contains(got, "secrets") {
		t.Errorf("agent lists %v", got)
	}
	if got := names(as("agent"), "top"); !slices.Equal(got, []string{"t"}) {
		t.Errorf("agent lists top as %v", got)
	}
	// The daemon's own work is never limited.
	if got := names(ctx, "top"); !slices.Equal(got, []string{"id.key", "t"}) {
		t.Errorf("the daemon lists top as %v", got)
	}
	if _, err := fs.Lstat(ctx, "secrets/s"); err != nil {
		t.Errorf("the daemon's lstat: %v", err)
	}
	// Access drops what the policy forbids.
	if got, err := fs.Access(as("reader"), "top/t", server.MayRead|server.MayWrite); err != nil || got&server.MayRead != 0 {
		t.Errorf("reader's access to top/t: %v %v", got, err)
	}
	if got, err := fs.Access(as("ro"), "top/t", server.MayRead|server.MayWrite); err != nil || got != server.MayRead {
		t.Errorf("ro's access to top/t: %v %v", got, err)
	}
}

// TestViewOwn: "own" in write allows changing an existing file whose
// created_by is the app, and nothing else outside its patterns.
func TestViewOwn(t *testing.T) {
	fs, _ := newViewFS(t)
	f, _, err := fs.Create(as("owner"), "new/mine", 0o644, true)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	// The operator moves it out of owner's patterns; its record follows it.
	if err := fs.Rename(context.Background(), "new/mine", "top/mine"); err != nil {
		t.Fatal(err)
	}
	if f, err := fs.Open(as("owner"), "top/mine", os.O_WRONLY); err != nil {
		t.Errorf("owner writing its own file: %v", err)
	} else {
		f.Close()
	}
	if _, err := fs.Open(as("owner"), "top/t", os.O_WRONLY); server.KindOf(err) != server.KindPermission {
		t.Errorf("owner writing another's file: %v", err)
	}
	if _, _, err := fs.Create(as("owner"), "top/other", 0o644, true); server.KindOf(err) != server.KindPermission {
		t.Errorf("owner creating outside its patterns: %v (a new name has no creator)", err)
	}
}
