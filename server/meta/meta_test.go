package meta_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/server"
	"github.com/semfs/semfs/server/meta"
)

// env is a real core over a temporary backing directory, a real keyword-only
// index fed by the core's change stream, and the tree over both.
type env struct {
	fs   *server.FS
	idx  *index.Index
	tree *meta.Tree
	dir  string
}

func newEnv(t testing.TB, listed bool) *env {
	t.Helper()
	base := t.TempDir()
	e := &env{dir: filepath.Join(base, "data")}
	if err := os.Mkdir(e.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var err error
	if e.idx, err = index.Open(filepath.Join(base, "index"), index.Options{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.idx.Close() })
	if e.tree, err = meta.New(meta.Options{Index: e.idx}); err != nil {
		t.Fatal(err)
	}
	sink := server.SinkFunc(func(_ context.Context, c server.Change) error {
		switch c.Op {
		case server.ChangeCreate:
			return e.idx.Create(c.Path, c.App, c.Ino, c.Time)
		case server.ChangeRemove:
			return e.idx.Remove(c.Path)
		}
		return nil
	})
	if e.fs, err = server.New(e.dir, server.Options{Sink: sink, Virtual: e.tree, ListVirtual: listed}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.fs.Close() })
	e.tree.Attach(e.fs)
	return e
}

func (e *env) create(t testing.TB, p, data string) {
	t.Helper()
	ctx := server.WithIdentity(context.Background(), server.Identity{MountApp: "notes", UID: uint32(os.Getuid()), HasUID: true, GID: uint32(os.Getgid()), HasGID: true})
	f, _, err := e.fs.Create(ctx, p, 0o644, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte(data), 0); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

// TestTagsWriteInPieces: a tags file takes a JSON object written in several
// WRITEs (an NFS client splits at its wsize) and applies it once whole; a
// truncate starts over; a write that cannot become JSON fails and changes
// nothing.
func TestTagsWriteInPieces(t *testing.T) {
	e := newEnv(t, false)
	ctx := context.Background()
	e.create(t, "a.md", "hello")
	f, err := e.fs.Open(ctx, ".semfs/tags/a.md", os.O_WRONLY|os.O_TRUNC)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	first := `{"task": "split `
	if _, err := f.WriteAt([]byte(first), 0); err != nil {
		t.Fatalf("first half: %v", err)
	}
	if rec, _ := e.idx.Get("a.md"); rec.Task != "" {
		t.Fatalf("half an object was applied: %+v", rec)
	}
	if _, err := f.WriteAt([]byte(`write", "relatedApps": ["x"]}`), int64(len(first))); err != nil {
		t.Fatalf("second half: %v", err)
	}
	if rec, _ := e.idx.Get("a.md"); rec.Task != "split write" || len(rec.RelatedApps) != 1 {
		t.Fatalf("after the whole object: %+v", rec)
	}
	// Truncate, then a bad object: refused, nothing changed.
	if _, err := e.fs.SetAttr(ctx, ".semfs/tags/a.md", server.SetAttr{Size: new(int64)}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte(`{"task": "x",, }`), 0); server.KindOf(err) != server.KindInvalid {
		t.Fatalf("malformed: %v", err)
	}
	if rec, _ := e.idx.Get("a.md"); rec.Task != "split write" {
		t.Fatalf("a malformed write changed the tags: %+v", rec)
	}
	// A truncate to anything but 0 is refused: the file is written whole.
	size := int64(3)
	if _, err := e.fs.SetAttr(ctx, ".semfs/tags/a.md", server.SetAttr{Size: &size}); server.KindOf(err) != server.KindInvalid {
		t.Fatalf("truncate to 3: %v", err)
	}
	// Reads show the record now, in every open file.
	b := make([]byte, 4096)
	r, err := e.fs.Open(ctx, ".semfs/tags/a.md", os.O_RDONLY)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	n, _ := r.ReadAt(b, 0)
	if !strings.Contains(string(b[:n]), `"task": "split write"`) {
		t.Fatalf("tags file reads %q", b[:n])
	}
}

// TestTreeIsNotTheTree: the namespace is hidden from the root's listing (or
// listed on request), never walked (so never reconciled, indexed or
// archived), and its inode numbers stay the same for the same path.
func TestTreeIsNotTheTree(t *testing.T) {
	for _, listed := range []bool{false, true} {
		e := newEnv(t, listed)
		ctx := context.Background()
		e.create(t, "a.md", "hello")
		ents, err := e.fs.ReadDir(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, x := range ents {
			names = append(names, x.Name)
		}
		if got := strings.Join(names, ","); (listed && got != ".semfs,a.md") || (!listed && got != "a.md") {
			t.Errorf("listed=%v: the root lists %s", listed, got)
		}
		var walked []string
		if err := e.fs.Walk(ctx, "", func(p string, _ server.Attr) error { walked = append(walked, p); return nil }); err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(walked, ","); got != "a.md" {
			t.Errorf("listed=%v: Walk visited %s", listed, got)
		}
		a1, err := e.fs.Lstat(ctx, ".semfs/query/anything at all")
		if err != nil || !a1.IsDir() {
			t.Fatalf("a query dir: %+v %v", a1, err)
		}
		if a1.Ino != server.VirtualIno(".semfs/query/anything at all") || a1.Ino>>63 != 1 {
			t.Errorf("a query dir's inode %x is not its stable virtual one", a1.Ino)
		}
	}
}

// TestRefusalKinds: every namespace change inside the tree is KindReadOnly
// (EROFS), except making a name the tree has (KindExists, EEXIST, which
// Linux answers before EROFS), writing a read-only file KindPermission
// (EACCES), and a real file of the tree's name cannot be made.
func TestRefusalKinds(t *testing.T) {
	e := newEnv(t, false)
	ctx := context.Background()
	e.create(t, "a.md", "hello")
	mode := os.FileMode(0o777)
	for what, err := range map[string]error{
		"mkdir":       func() error { _, err := e.fs.Mkdir(ctx, ".semfs/tags/d", 0o755); return err }(),
		"create tags": func() error { _, _, err := e.fs.Create(ctx, ".semfs/tags/new", 0o644, false); return err }(),
		"symlink":     func() error { _, err := e.fs.Symlink(ctx, "a.md", ".semfs/tags/l"); return err }(),
		"mkfifo":      func() error { _, err := e.fs.Mkfifo(ctx, ".semfs/f", 0o644); return err }(),
		"link":        func() error { _, err := e.fs.Link(ctx, "a.md", ".semfs/tags/h"); return err }(),
		"link out":    func() error { _, err := e.fs.Link(ctx, ".semfs/query/README", "r"); return err }(),
		"remove":      e.fs.Remove(ctx, ".semfs/query/README", false),
		"rmdir":       e.fs.Remove(ctx, ".semfs/tags", true),
		"rename in":   e.fs.Rename(ctx, "a.md", ".semfs/tags/b.md"),
		"rename out":  e.fs.Rename(ctx, ".semfs/query/README", "r"),
		"chmod":       func() error { _, err := e.fs.SetAttr(ctx, ".semfs/tags/a.md", server.SetAttr{Mode: &mode}); return err }(),
		"truncate ro": func() error {
			_, err := e.fs.SetAttr(ctx, ".semfs/query/README", server.SetAttr{Size: new(int64)})
			return err
		}(),
		"snapshot read": func() error { _, err := e.fs.OpenRead(ctx, ".semfs/query/README"); return err }(),
	} {
		switch k := server.KindOf(err); {
		case err == nil:
			t.Errorf("%s succeeded", what)
		case k != server.KindReadOnly && k != server.KindNotSupported:
			t.Errorf("%s: %v (%v), want read-only", what, err, k)
		}
	}
	for what, err := range map[string]error{
		"mkdir root":        func() error { _, err := e.fs.Mkdir(ctx, ".semfs", 0o755); return err }(),
		"create root":       func() error { _, _, err := e.fs.Create(ctx, ".semfs", 0o644, true); return err }(),
		"create in query/":  func() error { _, _, err := e.fs.Create(ctx, ".semfs/query/new", 0o644, true); return err }(),
		"symlink in query/": func() error { _, err := e.fs.Symlink(ctx, "a.md", ".semfs/query/l"); return err }(),
		"link onto README":  func() error { _, err := e.fs.Link(ctx, "a.md", ".semfs/query/README"); return err }(),
	} {
		if k := server.KindOf(err); err == nil || k != server.KindExists {
			t.Errorf("%s: %v (%v), want exists", what, err, k)
		}
	}
	if _, err := e.fs.Open(ctx, ".semfs/query/README", os.O_RDWR); server.KindOf(err) != server.KindPermission {
		t.Errorf("open README for writing: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(e.dir, ".semfs")); !os.IsNotExist(err) {
		t.Errorf("the backing directory has a .semfs: %v", err)
	}
}

// TestOddQueryNames: any name a client can send is a query directory or a
// clean KindInvalid, and result link names stay valid names.
func TestOddQueryNames(t *testing.T) {
	e := newEnv(t, false)
	ctx := context.Background()
	long := strings.Repeat("é", 127) + "a"
	e.create(t, long, "long name")
	if _, err := e.idx.Tag(ctx, long, "needle", nil, nil); err != nil {
		t.Fatal(err)
	}
	for name, ok := range map[string]bool{
		"needle": true, long: true, `say "hi"`: true, "it's": true, "日本語": true, "a@b": true,
		"needle@1000": true, "needle@1001": false, "needle@0": false, " ": false, "@3": false, "\xff\xfe": false,
	} {
		ents, err := e.fs.ReadDir(ctx, ".semfs/query/"+name)
		if ok != (err == nil) || (err != nil && server.KindOf(err) != server.KindInvalid) {
			t.Errorf("query dir %q: %v", name, err)
		}
		for _, x := range ents {
			if len(x.Name) > server.MaxNameLen || !utf8.ValidString(x.Name) {
				t.Errorf("query dir %q lists a bad name %q", name, x.Name)
			}
		}
	}
	ents, err := e.fs.ReadDir(ctx, ".semfs/query/needle")
	if err != nil || len(ents) != 2 {
		t.Fatalf("needle: %+v %v", ents, err)
	}
	link := ".semfs/query/needle/" + ents[1].Name
	if target, err := e.fs.Readlink(ctx, link); err != nil || target != "../../../"+long {
		t.Fatalf("readlink %s: %q %v", link, target, err)
	}
}

// BenchmarkQueryDirLs is `ls -l` of a query directory of n results as a
// kernel client makes it: one listing, then a lookup of every entry.
func BenchmarkQueryDirLs(b *testing.B) {
	for _, n := range []int{50, 1000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			e := newEnv(b, false)
			ctx := context.Background()
			for i := 0; i < n; i++ {
				p := fmt.Sprintf("f%04d.md", i)
				e.create(b, p, "x")
				if _, err := e.idx.Tag(ctx, p, "needle haystack", nil, nil); err != nil {
					b.Fatal(err)
				}
			}
			dir := fmt.Sprintf(".semfs/query/needle@%d", n)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				ents, err := e.fs.ReadDir(ctx, dir)
				if err != nil || len(ents) != n+1 {
					b.Fatalf("%d entries, %v", len(ents), err)
				}
				for _, x := range ents {
					if _, err := e.fs.Lstat(ctx, dir+"/"+x.Name); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
