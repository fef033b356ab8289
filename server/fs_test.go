package server_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/semfs/semfs/server"
	"github.com/semfs/semfs/server/servertest"
)

// recorder is a real Sink that keeps every change, in order.
type recorder struct {
	mu      sync.Mutex
	changes []server.Change
}

func (r *recorder) Apply(_ context.Context, c server.Change) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.changes = append(r.changes, c)
	return nil
}

func (r *recorder) all() []server.Change {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]server.Change(nil), r.changes...)
}

func (r *recorder) find(op server.ChangeOp, path string) (server.Change, bool) {
	for _, c := range r.all() {
		if c.Op == op && c.Path == path {
			return c, true
		}
	}
	return server.Change{}, false
}

type fixture struct {
	dir, outside string
	fs           *server.FS
	rec          *recorder
	reg          *server.Registry
}

// seeded returns a generator seeded from the clock (stream tells tests
// apart), its seed logged to replay a failure.
func seeded(t *testing.T, stream uint64) *rand.Rand {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	return rand.New(rand.NewPCG(seed, stream))
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	base := t.TempDir()
	f := &fixture{dir: filepath.Join(base, "data"), outside: filepath.Join(base, "outside"), rec: &recorder{}}
	for _, d := range []string{f.dir, f.outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// Shared, like /tmp without the sticky bit: a root daemon checks its
	// callers, and the tests act as several uids.
	if err := os.Chmod(f.dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.outside, "secret"), []byte("outside"), 0o644); err != nil {
		t.Fatal(err)
	}
	var err error
	if f.reg, err = server.OpenRegistry(filepath.Join(base, "registry.json")); err != nil {
		t.Fatal(err)
	}
	if f.fs, err = server.New(f.dir, server.Options{Sink: f.rec, Registry: f.reg, WriteQuiet: 50 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.fs.Close() })
	return f
}

// checkOutside fails if anything outside the backing directory changed.
func (f *fixture) checkOutside(t *testing.T) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(f.outside, "secret"))
	if err != nil || string(b) != "outside" {
		t.Fatalf("outside file changed: %q, %v", b, err)
	}
	fi, err := os.Stat(filepath.Join(f.outside, "secret"))
	if err != nil || fi.Mode().Perm() != 0o644 {
		t.Fatalf("outside file mode changed: %v %v", fi.Mode(), err)
	}
	ents, _ := os.ReadDir(f.outside)
	if len(ents) != 1 {
		t.Fatalf("outside directory changed: %d entries", len(ents))
	}
}

// as is a door's root caller mounted as app (a root daemon checks other uids'
// permissions; perms_test.go tests that).
func as(app string) context.Context {
	return server.WithIdentity(context.Background(), server.Identity{MountApp: app, HasUID: true})
}

func TestAttributionOrder(t *testing.T) {
	f := newFixture(t)
	if err := f.reg.Register(1000, "editor"); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		id   server.Identity
		want string
	}{
		{"mount app wins over uid", server.Identity{MountApp: "notes", UID: 1000, HasUID: true}, "notes"},
		{"registered uid", server.Identity{UID: 1000, HasUID: true}, "editor"},
		{"unregistered uid is unattributed", server.Identity{UID: 1001, HasUID: true}, ""},
		{"no identity is unattributed", server.Identity{}, ""},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := "f" + string(rune('a'+i))
			file, created, err := f.fs.Create(server.WithIdentity(context.Background(), c.id), p, 0o644, true)
			if err != nil || !created {
				t.Fatalf("create: %v %v", created, err)
			}
			file.Close()
			ch, ok := f.rec.find(server.ChangeCreate, p)
			if !ok || ch.App != c.want {
				t.Fatalf("created_by = %q (found %v), want %q", ch.App, ok, c.want)
			}
			if ch.Ino == 0 {
				t.Fatal("create change carries no inode")
			}
		})
	}
}

func TestCreatedByNeverChangesOnLaterWrites(t *testing.T) {
	f := newFixture(t)
	file, _, err := f.fs.Create(as("notes"), "a.md", 0o644, false)
	if err != nil {
		t.Fatal(err)
	}
	file.Close()
	// Another app opens the existing file through Create (UNCHECKED) and writes.
	file, created, err := f.fs.Create(as("editor"), "a.md", 0o644, false)
	if err != nil || created {
		t.Fatalf("reopen: created=%v err=%v", created, err)
	}
	if _, err := file.WriteAt([]byte("hello"), 0); err != nil {
		t.Fatal(err)
	}
	file.Close()
	n := 0
	for _, c := range f.rec.all() {
		if c.Op == server.ChangeCreate {
			n++
			if c.App != "notes" {
				t.Fatalf("creator changed to %q", c.App)
			}
		}
	}
	if n != 1 {
		t.Fatalf("%d create changes, want 1", n)
	}
	if _, ok := f.rec.find(server.ChangeWrite, "a.md"); !ok {
		t.Fatal("closing a written file sent no write change")
	}
	if _, _, err := f.fs.Create(as("editor"), "a.md", 0o644, true); server.KindOf(err) != server.KindExists {
		t.Fatalf("exclusive create of existing file: %v", err)
	}
}

func TestWritesAreCoalescedWithoutClose(t *testing.T) {
	f := newFixture(t)
	file, _, err := f.fs.Create(as("notes"), "log", 0o644, false)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	for i := 0; i < 100; i++ {
		if _, err := file.WriteAt([]byte("x"), int64(i)); err != nil {
			t.Fatal(err)
		}
	}
	// The write change comes when the writes have been quiet for a while;
	// the 100 writes above were all done before it, so it must be the only one.
	servertest.WaitFor(t, "a write change after the quiet period", func() bool {
		_, ok := f.rec.find(server.ChangeWrite, "log")
		return ok
	})
	n := 0
	for _, c := range f.rec.all() {
		if c.Op == server.ChangeWrite {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("100 writes gave %d write changes, want 1", n)
	}
}

func TestContainment(t *testing.T) {
	f := newFixture(t)
	ctx := as("mallory")
	secret := filepath.Join(f.outside, "secret")
	if _, err := f.fs.Symlink(ctx, secret, "evil"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.fs.Symlink(ctx, f.outside, "evildir"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.fs.Symlink(ctx, "../outside/secret", "rel"); err != nil {
		t.Fatal(err)
	}
	size := int64(0)
	mode := fs.FileMode(0o777)
	uid := uint32(12345)
	past := time.Unix(1000, 0)
	attacks := []struct {
		name string
		do   func() error
	}{
		{"open symlink to outside", func() error { _, err := f.fs.Open(ctx, "evil", os.O_RDWR); return err }},
		{"open relative symlink", func() error { _, err := f.fs.Open(ctx, "rel", os.O_RDONLY); return err }},
		{"open through symlinked dir", func() error { _, err := f.fs.Open(ctx, "evildir/secret", os.O_RDWR); return err }},
		{"create through symlinked dir", func() error { _, _, err := f.fs.Create(ctx, "evildir/new", 0o644, false); return err }},
		{"create over symlink", func() error { _, _, err := f.fs.Create(ctx, "evil", 0o644, false); return err }},
		{"truncate via symlink", func() error { _, err := f.fs.SetAttr(ctx, "evil", server.SetAttr{Size: &size}); return err }},
		{"chmod via symlink", func() error { _, err := f.fs.SetAttr(ctx, "evil", server.SetAttr{Mode: &mode}); return err }},
		{"truncate through dir", func() error {
			_, err := f.fs.SetAttr(ctx, "evildir/secret", server.SetAttr{Size: &size})
			return err
		}},
		{"chown through dir", func() error { _, err := f.fs.SetAttr(ctx, "evildir/secret", server.SetAttr{UID: &uid}); return err }},
		{"utimes through dir", func() error {
			_, err := f.fs.SetAttr(ctx, "evildir/secret", server.SetAttr{Mtime: &past})
			return err
		}},
		{"remove through dir", func() error { return f.fs.Remove(ctx, "evildir/secret", false) }},
		{"rename out through dir", func() error { return f.fs.Rename(ctx, "evildir/secret", "stolen") }},
		{"rename into dir", func() error {
			file, _, err := f.fs.Create(ctx, "mine", 0o644, false)
			if err != nil {
				return nil
			}
			file.Close()
			return f.fs.Rename(ctx, "mine", "evildir/planted")
		}},
		{"mkdir through dir", func() error { _, err := f.fs.Mkdir(ctx, "evildir/d", 0o755); return err }},
		{"link to outside", func() error { _, err := f.fs.Link(ctx, "evildir/secret", "hard"); return err }},
		{"readdir through dir", func() error { _, err := f.fs.ReadDir(ctx, "evildir"); return err }},
		{"lstat through dir", func() error { _, err := f.fs.Lstat(ctx, "evildir/secret"); return err }},
	}
	for _, a := range attacks {
		t.Run(a.name, func(t *testing.T) {
			err := a.do()
			if err == nil {
				t.Fatal("attack succeeded")
			}
			var se *server.Error
			if !errors.As(err, &se) {
				t.Fatalf("error is not a *server.Error: %T %v", err, err)
			}
			f.checkOutside(t)
		})
	}
	// Acting on the link itself is allowed and touches only the link.
	if err := f.fs.Rename(ctx, "evil", "evil2"); err != nil {
		t.Fatal(err)
	}
	if err := f.fs.Remove(ctx, "evil2", false); err != nil {
		t.Fatal(err)
	}
	f.checkOutside(t)
	if target, err := f.fs.Readlink(ctx, "rel"); err != nil || target != "../outside/secret" {
		t.Fatalf("readlink = %q, %v: symlinks must be stored verbatim", target, err)
	}
}

func TestCleanPath(t *testing.T) {
	cases := []struct {
		in, want string
		kind     server.Kind
		bad      bool
	}{
		{"/", "", 0, false},
		{"", "", 0, false},
		{"notes/a.md", "notes/a.md", 0, false},
		{"/notes//a.md/", "notes/a.md", 0, false},
		{"./notes/./a.md", "notes/a.md", 0, false},
		{"../etc/passwd", "", server.KindPermission, true},
		{"notes/../../etc", "", server.KindPermission, true},
		{"notes/..", "", server.KindPermission, true},
		{"a\x00b", "", server.KindInvalid, true},
		{string(bytes.Repeat([]byte("x"), 300)), "", server.KindNameTooLong, true},
	}
	for _, c := range cases {
		got, err := server.CleanPath("test", c.in)
		if c.bad {
			if server.KindOf(err) != c.kind || err == nil {
				t.Errorf("CleanPath(%q) = %q, %v; want kind %v", c.in, got, err, c.kind)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("CleanPath(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

func TestNamespaceOps(t *testing.T) {
	f := newFixture(t)
	ctx := as("notes")
	if _, err := f.fs.Mkdir(ctx, "d", 0o755); err != nil {
		t.Fatal(err)
	}
	file, _, err := f.fs.Create(ctx, "d/a", 0o600, true)
	if err != nil {
		t.Fatal(err)
	}
	file.WriteAt([]byte("data"), 0)
	file.Close()
	if err := f.fs.Remove(ctx, "d", false); server.KindOf(err) != server.KindIsDir {
		t.Fatalf("remove dir as file: %v", err)
	}
	if err := f.fs.Remove(ctx, "d", true); server.KindOf(err) != server.KindNotEmpty {
		t.Fatalf("rmdir non-empty: %v", err)
	}
	if err := f.fs.Remove(ctx, "d/a", true); server.KindOf(err) != server.KindNotDir {
		t.Fatalf("rmdir file: %v", err)
	}
	if _, err := f.fs.Link(ctx, "d/a", "b"); err != nil {
		t.Fatal(err)
	}
	if a, _ := f.fs.Lstat(ctx, "b"); a.Nlink != 2 {
		t.Fatalf("nlink = %d", a.Nlink)
	}
	if err := f.fs.Rename(ctx, "d", "e"); err != nil {
		t.Fatal(err)
	}
	if c, ok := f.rec.find(server.ChangeRename, "d"); !ok || c.NewPath != "e" || !c.IsDir {
		t.Fatalf("rename change: %+v %v", c, ok)
	}
	// Renaming one hard link onto another of the same file is a no-op (POSIX).
	if err := f.fs.Rename(ctx, "b", "e/a"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.fs.Lstat(ctx, "b"); err != nil {
		t.Fatalf("hard-link rename removed the source: %v", err)
	}
	if _, ok := f.rec.find(server.ChangeRename, "b"); ok {
		t.Fatal("a no-op rename was reported")
	}
	// Rename over an existing, different file replaces it.
	other, _, err := f.fs.Create(ctx, "c", 0o600, true)
	if err != nil {
		t.Fatal(err)
	}
	other.WriteAt([]byte("other"), 0)
	other.Close()
	if err := f.fs.Remove(ctx, "b", false); err != nil {
		t.Fatal(err)
	}
	if err := f.fs.Rename(ctx, "c", "e/a"); err != nil {
		t.Fatal(err)
	}
	sz := int64(2)
	a, err := f.fs.SetAttr(ctx, "e/a", server.SetAttr{Size: &sz, MtimeNow: true})
	if err != nil || a.Size != 2 {
		t.Fatalf("truncate: %+v %v", a, err)
	}
	m := fs.FileMode(0o640)
	if a, err = f.fs.SetAttr(ctx, "e/a", server.SetAttr{Mode: &m}); err != nil || a.Mode.Perm() != 0o640 {
		t.Fatalf("chmod: %v %v", a.Mode, err)
	}
	when := time.Date(2020, 1, 2, 3, 4, 5, 6, time.UTC)
	if a, err = f.fs.SetAttr(ctx, "e/a", server.SetAttr{Mtime: &when}); err != nil || !a.Mtime.Equal(when) {
		t.Fatalf("mtime: %v %v", a.Mtime, err)
	}
	if _, err := f.fs.Mkfifo(ctx, "fifo", 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := f.fs.Open(ctx, "fifo", os.O_RDONLY); server.KindOf(err) != server.KindInvalid {
		t.Fatalf("open fifo: %v", err)
	}
	ents, err := f.fs.ReadDir(ctx, "")
	if err != nil || len(ents) != 2 || ents[0].Name != "e" || ents[1].Name != "fifo" {
		t.Fatalf("readdir: %+v %v", ents, err)
	}
	if err := f.fs.Remove(ctx, "e/a", false); err != nil {
		t.Fatal(err)
	}
	if err := f.fs.Remove(ctx, "e", true); err != nil {
		t.Fatal(err)
	}
	if _, err := f.fs.Lstat(ctx, "e"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("lstat removed: %v", err)
	}
}

func TestFreezeHoldsWritesBack(t *testing.T) {
	f := newFixture(t)
	ctx := as("notes")
	file, _, err := f.fs.Create(ctx, "a", 0o644, false)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	wrote := make(chan struct{})
	err = f.fs.Freeze(ctx, func() error {
		go func() {
			file.WriteAt([]byte("late"), 0)
			close(wrote)
		}()
		// The writer parked inside WriteAt is the proof it is held back.
		servertest.WaitParked(t, "(*File).WriteAt", wrote)
		b, _ := os.ReadFile(filepath.Join(f.dir, "a"))
		if len(b) != 0 {
			return errors.New("data changed during Freeze")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	<-wrote
}

func TestRegistryPersists(t *testing.T) {
	p := filepath.Join(t.TempDir(), "registry.json")
	r, err := server.OpenRegistry(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Register(1000, "notes"); err != nil {
		t.Fatal(err)
	}
	if err := r.Register(1000, "bad name"); err == nil {
		t.Fatal("bad app name accepted")
	}
	r2, err := server.OpenRegistry(p)
	if err != nil {
		t.Fatal(err)
	}
	if app, ok := r2.Lookup(1000); !ok || app != "notes" {
		t.Fatalf("after reopen: %q %v", app, ok)
	}
}

func TestKindsHaveNames(t *testing.T) {
	seen := map[string]bool{}
	for _, k := range server.Kinds() {
		s := k.String()
		if s == "unknown kind" || seen[s] {
			t.Fatalf("kind %d has name %q", k, s)
		}
		seen[s] = true
	}
}

func TestAppFromMount(t *testing.T) {
	cases := map[string]struct {
		app string
		ok  bool
	}{
		"/": {"", true}, "": {"", true}, "/@notes": {"notes", true}, "@editor": {"editor", true},
		"/@notes/": {"notes", true}, "/data": {"", false}, "/@": {"", false}, "/@a/b": {"", false},
	}
	for in, want := range cases {
		app, ok := server.AppFromMount(in)
		if app != want.app || ok != want.ok {
			t.Errorf("AppFromMount(%q) = %q, %v; want %q, %v", in, app, ok, want.app, want.ok)
		}
	}
}

func TestRenameMovesOpenFiles(t *testing.T) {
	f := newFixture(t)
	ctx := as("notes")
	if _, err := f.fs.Mkdir(ctx, "d", 0o755); err != nil {
		t.Fatal(err)
	}
	file, _, err := f.fs.Create(ctx, "d/draft", 0o644, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.fs.Rename(ctx, "d", "e"); err != nil {
		t.Fatal(err)
	}
	if file.Path() != "e/draft" {
		t.Fatalf("open file path after directory rename: %q", file.Path())
	}
	file.WriteAt([]byte("v2"), 0)
	file.Close()
	if _, ok := f.rec.find(server.ChangeWrite, "e/draft"); !ok {
		t.Fatalf("no write change under the new name: %+v", f.rec.all())
	}
	if _, ok := f.rec.find(server.ChangeWrite, "d/draft"); ok {
		t.Fatal("write change under the old name")
	}
}

func TestSymlinkedDirectoryIsNotTraversed(t *testing.T) {
	f := newFixture(t)
	ctx := as("notes")
	if _, err := f.fs.Mkdir(ctx, "real", 0o755); err != nil {
		t.Fatal(err)
	}
	file, _, err := f.fs.Create(ctx, "real/x", 0o644, true)
	if err != nil {
		t.Fatal(err)
	}
	file.Close()
	if _, err := f.fs.Symlink(ctx, "real", "alias"); err != nil {
		t.Fatal(err)
	}
	// Even a symlink that stays inside is not followed for a path component: the
	// client resolves symlinks itself.
	if _, err := f.fs.Lstat(ctx, "alias/x"); server.KindOf(err) != server.KindNotDir {
		t.Fatalf("lstat through an in-root symlink: %v", err)
	}
}

func TestNewFilesBelongToTheirCreator(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("only a daemon running as root can give files away")
	}
	f := newFixture(t)
	ctx := server.WithIdentity(context.Background(), server.Identity{UID: 4321, HasUID: true, GID: 4322, HasGID: true})
	file, _, err := f.fs.Create(ctx, "mine", 0o644, true)
	if err != nil {
		t.Fatal(err)
	}
	file.Close()
	if _, err := f.fs.Mkdir(ctx, "dir", 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := f.fs.Symlink(ctx, "mine", "link"); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"mine", "dir", "link"} {
		a, err := f.fs.Lstat(ctx, p)
		if err != nil || a.UID != 4321 || a.GID != 4322 {
			t.Errorf("%s: uid %d gid %d (%v), want 4321/4322", p, a.UID, a.GID, err)
		}
	}
	// A door's caller without a uid acts as nobody (it gets no more than that).
	anon := server.WithIdentity(context.Background(), server.Identity{MountApp: "notes"})
	file, _, err = f.fs.Create(anon, "nobodys", 0o644, true)
	if err != nil {
		t.Fatal(err)
	}
	file.Close()
	if a, _ := f.fs.Lstat(ctx, "nobodys"); a.UID != server.NobodyUID || a.GID != server.NobodyGID {
		t.Errorf("a file without a caller uid belongs to %d:%d, want nobody", a.UID, a.GID)
	}
}

// TestErrnoKinds: every errno the backing file system gives keeps its meaning
// in the core's kinds (a refused permission bit is not an operation never
// permitted, a quota is not a full disk, a cross-device rename is not an
// invalid one), and each kind has a name of its own.
func TestErrnoKinds(t *testing.T) {
	for errno, want := range map[syscall.Errno]server.Kind{
		syscall.EACCES: server.KindPermission, syscall.EPERM: server.KindNotPermitted,
		syscall.ELOOP: server.KindLoop, syscall.EXDEV: server.KindCrossDevice,
		syscall.EMLINK: server.KindTooManyLinks, syscall.EDQUOT: server.KindQuota,
		syscall.ENOSPC: server.KindNoSpace, syscall.EBADF: server.KindBadFile,
		syscall.EINVAL: server.KindInvalid, syscall.EIO: server.KindIO,
	} {
		if got := server.KindOf(errno); got != want {
			t.Errorf("%v: kind %v, want %v", errno, got, want)
		}
	}
	names := map[string]server.Kind{}
	for _, k := range server.Kinds() {
		if prev, dup := names[k.String()]; dup || k.String() == "unknown kind" {
			t.Errorf("%d and %d are both %q", prev, k, k)
		}
		names[k.String()] = k
	}
	if !errors.Is(server.E("chown", server.KindNotPermitted, "f", nil), fs.ErrPermission) {
		t.Error("KindNotPermitted is not fs.ErrPermission")
	}
}

// TestOpenReadLeavesAtime: the daemon's own reads (the content index, grep,
// snapshots) leave a file's atime as a client set it. With relatime, a read
// of a file whose atime is before its mtime sets the atime to now; a
// backing file system mounted noatime would pass without O_NOATIME too.
func TestOpenReadLeavesAtime(t *testing.T) {
	f := newFixture(t)
	p := filepath.Join(f.dir, "old-atime")
	if err := os.WriteFile(p, []byte("contents\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	atime := time.Unix(100000000, 0)
	if err := os.Chtimes(p, atime, time.Now()); err != nil {
		t.Fatal(err)
	}
	fl, err := f.fs.OpenRead(context.Background(), "old-atime")
	if err != nil {
		t.Fatal(err)
	}
	if b, err := io.ReadAll(fl); err != nil || string(b) != "contents\n" {
		t.Fatalf("read %q, %v", b, err)
	}
	fl.Close()
	var st syscall.Stat_t
	if err := syscall.Stat(p, &st); err != nil {
		t.Fatal(err)
	}
	if got := time.Unix(st.Atim.Sec, st.Atim.Nsec); !got.Equal(atime) {
		t.Errorf("atime after the daemon's read: %v, want %v", got, atime)
	}
}

// TestDaemonListingLeavesAtime: the daemon's own directory listings (the
// watcher's, the reconcile's walk: a context without a door's Identity)
// leave a directory's atime as a client set it, as its file reads do.
func TestDaemonListingLeavesAtime(t *testing.T) {
	f := newFixture(t)
	p := filepath.Join(f.dir, "old-atime")
	if err := os.Mkdir(p, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(p, "f"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	atime := time.Unix(100000000, 0)
	if err := os.Chtimes(p, atime, time.Now()); err != nil {
		t.Fatal(err)
	}
	if ents, err := f.fs.ReadDir(context.Background(), "old-atime"); err != nil || len(ents) != 1 {
		t.Fatalf("ReadDir: %v %v", ents, err)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(p, &st); err != nil {
		t.Fatal(err)
	}
	if got := time.Unix(st.Atim.Sec, st.Atim.Nsec); !got.Equal(atime) {
		t.Errorf("atime after the daemon's listing: %v, want %v", got, atime)
	}
}
