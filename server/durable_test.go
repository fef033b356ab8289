package server_test

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/semfs/semfs/integration/require"
	"github.com/semfs/semfs/server"
)

// durableFixture is a fixture whose FS keeps durable records, with its journal
// beside (not in) the backing directory.
func durableFixture(t *testing.T) (*fixture, string) {
	t.Helper()
	f := newFixture(t)
	f.fs.Close()
	journal := filepath.Join(filepath.Dir(f.dir), "index.journal")
	var err error
	if f.fs, err = server.New(f.dir, server.Options{Sink: f.rec, Registry: f.reg, WriteQuiet: 50 * time.Millisecond, Journal: journal}); err != nil {
		t.Fatal(err)
	}
	// newFixture's cleanup closes f.fs, whichever FS it is by then.
	if !f.fs.MetaInfo().Xattr {
		require.Environment(t, "the test directory's file system takes no user extended attributes")
	}
	return f, journal
}

func readMeta(t *testing.T, fsys *server.FS, p string) (server.Meta, server.MetaSource) {
	t.Helper()
	m, src, err := fsys.ReadMeta(as("reader"), p)
	if err != nil {
		t.Fatalf("ReadMeta %s: %v", p, err)
	}
	return m, src
}

// TestDurableRecordBeforeCreateReturns: a create's creator is on record with
// the file (or, for what cannot carry an attribute, in the journal) by the time
// Create returns, and it follows renames; a hard link shares its file's.
func TestDurableRecordBeforeCreateReturns(t *testing.T) {
	f, _ := durableFixture(t)
	file, created, err := f.fs.Create(as("notes"), "a.txt", 0o644, true)
	if err != nil || !created {
		t.Fatal(err)
	}
	file.Close()
	b := make([]byte, 512)
	n, err := unix.Getxattr(filepath.Join(f.dir, "a.txt"), server.MetaXattr, b)
	if err != nil || !strings.Contains(string(b[:n]), `"by":"notes"`) {
		t.Fatalf("%s of a.txt = %q, %v", server.MetaXattr, b[:max(n, 0)], err)
	}
	c, _ := f.rec.find(server.ChangeCreate, "a.txt")
	m, src := readMeta(t, f.fs, "a.txt")
	if m.CreatedBy != "notes" || src != server.MetaFromXattr || !m.CreatedAt.Equal(c.Time) {
		t.Fatalf("a.txt: %+v from %v, want notes at %v from the xattr", m, src, c.Time)
	}

	if _, err := f.fs.Symlink(as("notes"), "a.txt", "link"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.fs.Mkfifo(as("notes"), "pipe", 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"link", "pipe"} {
		if m, src := readMeta(t, f.fs, p); m.CreatedBy != "notes" || src != server.MetaFromJournal {
			t.Errorf("%s: %+v from %v, want notes from the journal", p, m, src)
		}
	}

	if _, err := f.fs.Link(as("editor"), "a.txt", "hard.txt"); err != nil {
		t.Fatal(err)
	}
	if c, _ := f.rec.find(server.ChangeCreate, "hard.txt"); c.App != "notes" {
		t.Errorf("a hard link to notes' file is reported created by %q", c.App)
	}
	if err := f.fs.Rename(as("editor"), "a.txt", "moved.txt"); err != nil {
		t.Fatal(err)
	}
	if err := f.fs.Rename(as("editor"), "link", "moved-link"); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"moved.txt", "moved-link", "hard.txt"} {
		if m, _ := readMeta(t, f.fs, p); m.CreatedBy != "notes" {
			t.Errorf("%s: creator %q after a rename by editor, want notes", p, m.CreatedBy)
		}
	}
	f.checkOutside(t)
}

// TestSaveMetaJournalFallbackAndReload: a record too large for the file's
// attribute space goes to the journal and wins over the stale attribute; a
// smaller one goes back to the attribute; the journal survives a reopen, a torn
// last line is skipped, and compaction drops records of files that are gone.
func TestSaveMetaJournalFallbackAndReload(t *testing.T) {
	f, journal := durableFixture(t)
	file, _, err := f.fs.Create(as("notes"), "doc.txt", 0o644, true)
	if err != nil {
		t.Fatal(err)
	}
	file.Close()
	big := server.Meta{Task: "big", Vector: &server.MetaVector{Model: "m", Values: make([]float32, 4000)}}
	set := func(want server.Meta) server.Meta {
		got, err := f.fs.SaveMeta(as("x"), "doc.txt", func(cur server.Meta, ok bool) server.Meta {
			if !ok || cur.CreatedBy != "notes" {
				t.Errorf("current record %+v (ok %v), want notes'", cur, ok)
			}
			want.CreatedBy, want.CreatedAt = cur.CreatedBy, cur.CreatedAt
			return want
		})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	want := set(big)
	if m, src := readMeta(t, f.fs, "doc.txt"); src != server.MetaFromJournal || !reflect.DeepEqual(m, want) {
		t.Fatalf("after a large record: %+v from %v", m.Task, src)
	}
	small := set(server.Meta{Task: "small", RelatedApps: []string{"a", "b"}})
	if m, src := readMeta(t, f.fs, "doc.txt"); src != server.MetaFromXattr || !reflect.DeepEqual(m, small) {
		t.Fatalf("after a small record: %+v from %v", m, src)
	}
	want = set(big)

	// Reopen with a torn last line appended (a power cut mid-write).
	f.fs.Close()
	jf, err := os.OpenFile(journal, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	jf.WriteString(`{"id":12,"m":{"v":1,"by":"to`)
	jf.Close()
	if f.fs, err = server.New(f.dir, server.Options{Journal: journal}); err != nil {
		t.Fatal(err)
	}
	if info := f.fs.MetaInfo(); !info.Journal.Existed || info.Journal.Bad != 1 || info.Journal.Records != 1 {
		t.Fatalf("journal report %+v, want 1 record and 1 bad line", info.Journal)
	}
	if m, _ := readMeta(t, f.fs, "doc.txt"); !reflect.DeepEqual(m, want) {
		t.Fatalf("after reopening: task %q", m.Task)
	}
	if n, err := f.fs.CompactJournal(func(uint64) bool { return true }); err != nil || n != 0 {
		t.Fatalf("compacting with every file live dropped %d (%v)", n, err)
	}
	if n, err := f.fs.CompactJournal(func(uint64) bool { return false }); err != nil || n != 1 {
		t.Fatalf("compacting with no file live dropped %d (%v), want 1", n, err)
	}
	if _, src := readMeta(t, f.fs, "doc.txt"); src != server.MetaFromXattr {
		t.Fatalf("after compaction the record comes from %v, want the (older) xattr", src)
	}
}

// TestSaveMetaContainment: records are written through the core's directory
// descriptors: never through a symlink, never outside the backing directory.
func TestSaveMetaContainment(t *testing.T) {
	f, _ := durableFixture(t)
	secret := filepath.Join(f.outside, "secret")
	if err := os.Symlink(secret, filepath.Join(f.dir, "to-secret")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(f.outside, filepath.Join(f.dir, "to-outside")); err != nil {
		t.Fatal(err)
	}
	save := func(p string) error {
		_, err := f.fs.SaveMeta(as("x"), p, func(server.Meta, bool) server.Meta { return server.Meta{Task: "t"} })
		return err
	}
	if err := save("to-secret"); err != nil {
		t.Fatalf("a symlink's record: %v", err)
	}
	if _, src := readMeta(t, f.fs, "to-secret"); src != server.MetaFromJournal {
		t.Fatalf("a symlink's record is in %v, want the journal", src)
	}
	if err := save("to-outside/secret"); err == nil {
		t.Fatal("saved a record through a symlinked directory")
	}
	if err := save("../outside/secret"); err == nil {
		t.Fatal("saved a record outside the backing directory")
	}
	if _, err := unix.Getxattr(secret, server.MetaXattr, nil); !errors.Is(err, unix.ENODATA) {
		t.Fatalf("the file outside got a record: %v", err)
	}
	f.checkOutside(t)
}

// BenchmarkCreateDurable is the cost of the durable record at create: FS.Create
// and Close of a new file, without durable records and with them (one fsetxattr
// on the new file's descriptor).
func BenchmarkCreateDurable(b *testing.B) {
	for _, withRecords := range []bool{false, true} {
		name := "without-records"
		if withRecords {
			name = "with-records"
		}
		b.Run(name, func(b *testing.B) {
			base := b.TempDir()
			opts := server.Options{WriteQuiet: time.Hour}
			if withRecords {
				opts.Journal = filepath.Join(base, "journal")
			}
			fsys, err := server.New(base, opts)
			if err != nil {
				b.Fatal(err)
			}
			defer fsys.Close()
			ctx := as("bench")
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				file, _, err := fsys.Create(ctx, "f"+strconv.Itoa(i), 0o644, true)
				if err != nil {
					b.Fatal(err)
				}
				file.Close()
			}
		})
	}
}

// BenchmarkSaveMeta is the cost a tag adds per file before the index commits
// it: resolve, read the current record, write the new one.
func BenchmarkSaveMeta(b *testing.B) {
	base := b.TempDir()
	data := filepath.Join(base, "data")
	if err := os.Mkdir(data, 0o755); err != nil {
		b.Fatal(err)
	}
	fsys, err := server.New(data, server.Options{WriteQuiet: time.Hour, Journal: filepath.Join(base, "journal")})
	if err != nil {
		b.Fatal(err)
	}
	defer fsys.Close()
	const files = 1000
	for i := 0; i < files; i++ {
		file, _, err := fsys.Create(as("bench"), "f"+strconv.Itoa(i), 0o644, true)
		if err != nil {
			b.Fatal(err)
		}
		file.Close()
	}
	tag := server.Meta{Task: "summarise the quarterly report", RelatedApps: []string{"editor", "mail"}}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_, err := fsys.SaveMeta(as("bench"), "f"+strconv.Itoa(i%files), func(cur server.Meta, _ bool) server.Meta {
			tag.CreatedBy, tag.CreatedAt = cur.CreatedBy, cur.CreatedAt
			return tag
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}
