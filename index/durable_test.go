package index_test

import (
	"context"
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/semfs/semfs/index"
)

// mapSaver keeps durable records in memory, as the daemon's does on disk; fail
// makes the next saves fail.
type mapSaver struct {
	mu   sync.Mutex
	recs map[string]index.Saved
	fail error
}

func newMapSaver() *mapSaver { return &mapSaver{recs: map[string]index.Saved{}} }

func (s *mapSaver) SaveRecord(_ context.Context, p string, update func(index.Saved, bool) index.Saved) (index.Saved, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return index.Saved{}, s.fail
	}
	cur, ok := s.recs[p]
	n := update(cur, ok)
	s.recs[p] = n
	return n, nil
}

func (s *mapSaver) get(p string) (index.Saved, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.recs[p]
	return r, ok
}

// TestTagIsSavedBeforeItIsCommitted: a tag reaches the Saver with the file's
// creator; when the Saver fails, the tag fails and the index is unchanged.
func TestTagIsSavedBeforeItIsCommitted(t *testing.T) {
	s := newMapSaver()
	x := openIndex(t, t.TempDir(), index.Options{Saver: s})
	mustCreate(t, x, "a.txt", "notes", 1)
	mustTag(t, x, "a.txt", "write the report", []string{"editor"}, vec4(1, 0, 0, 0))
	got, _ := s.get("a.txt")
	want := index.Saved{CreatedBy: "notes", CreatedAt: t0, Task: "write the report", RelatedApps: []string{"editor"}, Vector: vec4(1, 0, 0, 0)}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("saved %+v\nwant  %+v", got, want)
	}
	s.fail = errors.New("disk full")
	if _, err := x.Tag(context.Background(), "a.txt", "other", nil, nil); err == nil {
		t.Fatal("a tag whose durable record failed was accepted")
	}
	if r, _ := x.Get("a.txt"); r.Task != "write the report" {
		t.Fatalf("the failed tag changed the index: %+v", r)
	}
}

// TestTagTakesTheSavedCreator: a tag that reaches the index before its file's
// create (the create is batched) takes the creator from the durable record.
func TestTagTakesTheSavedCreator(t *testing.T) {
	s := newMapSaver()
	s.recs["b.txt"] = index.Saved{CreatedBy: "notes", CreatedAt: t0}
	x := openIndex(t, t.TempDir(), index.Options{Saver: s})
	r := mustTag(t, x, "b.txt", "task", nil, nil)
	if r.CreatedBy != "notes" || !r.CreatedAt.Equal(t0) {
		t.Fatalf("record %+v, want notes' at %v", r, t0)
	}
	if saved, _ := s.get("b.txt"); saved.CreatedBy != "notes" || saved.Task != "task" {
		t.Fatalf("saved %+v", saved)
	}
}

// TestReconcileRebuildsFromSaved: an empty index reconciled with files that
// carry durable records holds every creator, tag and client vector again, and
// says so; a second reconcile finds nothing more. A record only the index holds
// is reported Unsaved and Backfill saves it.
func TestReconcileRebuildsFromSaved(t *testing.T) {
	s := newMapSaver()
	x := openIndex(t, t.TempDir(), index.Options{Saver: s})
	mustCreate(t, x, "old.txt", "legacy", 9) // tagged before durable records existed
	mustTag(t, x, "old.txt", "legacy task", nil, nil)
	delete(s.recs, "old.txt")
	files := []index.FileState{
		{Path: "a.txt", Ino: 1, ModTime: t0, Saved: &index.Saved{CreatedBy: "notes", CreatedAt: t0, Task: "alpha", RelatedApps: []string{"x"}, Vector: vec4(0, 1, 0, 0)}},
		{Path: "b.txt", Ino: 2, ModTime: t0, Saved: &index.Saved{CreatedBy: "writer", CreatedAt: t0}},
		{Path: "c.txt", Ino: 3, ModTime: t0},
		{Path: "old.txt", Ino: 9, ModTime: t0},
	}
	rep, err := x.Reconcile(files)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.RecoveredCreators) != 2 || len(rep.RecoveredTags) != 1 || len(rep.RecoveredVectors) != 1 || !reflect.DeepEqual(rep.Unsaved, []string{"old.txt"}) {
		t.Fatalf("report %+v", rep)
	}
	a, _ := x.Get("a.txt")
	if a.CreatedBy != "notes" || a.Task != "alpha" || !reflect.DeepEqual(a.RelatedApps, []string{"x"}) || !a.CreatedAt.Equal(t0) {
		t.Fatalf("a.txt = %+v", a)
	}
	if res := query(t, x, index.Query{Vector: vec4(0, 1, 0, 0), Limit: 1}); len(res) != 1 || res[0].Path != "a.txt" {
		t.Fatalf("query by a.txt's vector = %+v", res)
	}
	if b, _ := x.Get("b.txt"); b.CreatedBy != "writer" {
		t.Fatalf("b.txt = %+v", b)
	}
	rep, err = x.Reconcile(files)
	if err != nil || len(rep.RecoveredCreators)+len(rep.RecoveredTags)+len(rep.RecoveredVectors) != 0 {
		t.Fatalf("second reconcile: %+v, %v", rep, err)
	}
	if n, err := x.Backfill(context.Background(), rep.Unsaved); err != nil || n != 1 {
		t.Fatalf("Backfill = %d, %v", n, err)
	}
	if saved, ok := s.get("old.txt"); !ok || saved.CreatedBy != "legacy" || saved.Task != "legacy task" {
		t.Fatalf("backfilled %+v", saved)
	}
}

// TestOpenReportsDamage damages records.db of a closed index in each way and
// checks that Open names it (and moves an unparseable file aside) instead of
// opening an index with fewer records as if nothing happened.
func TestOpenReportsDamage(t *testing.T) {
	populate := func(t *testing.T) string {
		dir := t.TempDir()
		x, err := index.Open(dir, index.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 40; i++ {
			p := "f" + string(rune('a'+i%26)) + string(rune('a'+i/26)) + ".txt"
			if err := x.Create(p, "notes", uint64(i+1), t0); err != nil {
				t.Fatal(err)
			}
		}
		if err := x.Close(); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	records := func(dir string) string { return filepath.Join(dir, "records.db") }
	cases := []struct {
		name, want string
		damage     func(t *testing.T, dir string)
	}{
		{"deleted", "missing", func(t *testing.T, dir string) { os.Remove(records(dir)) }},
		{"emptied", "empty", func(t *testing.T, dir string) { os.Truncate(records(dir), 0) }},
		{"cut in half", "behind Bleve", func(t *testing.T, dir string) {
			fi, _ := os.Stat(records(dir))
			os.Truncate(records(dir), fi.Size()/2)
		}},
		{"random bytes", "unreadable", func(t *testing.T, dir string) {
			b := make([]byte, 2048)
			rand.Read(b)
			os.WriteFile(records(dir), b, 0o600)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := populate(t)
			c.damage(t, dir)
			x, err := index.Open(dir, index.Options{})
			if err != nil {
				t.Fatalf("Open after damage: %v", err)
			}
			if d := x.Damage(); !strings.Contains(d.Records, c.want) {
				t.Fatalf("Damage() = %+v, want records %q", d, c.want)
			}
			if c.want == "unreadable" {
				if m, _ := filepath.Glob(records(dir) + ".damaged-*"); len(m) != 1 {
					t.Fatalf("the unreadable records.db was not moved aside: %v", m)
				}
			}
			// Closed before anyone recovered: the next Open still says so.
			x.Close()
			x = openIndex(t, dir, index.Options{})
			if d := x.Damage(); !strings.Contains(d.Records, c.want) {
				t.Fatalf("Damage() at the next Open = %+v, want records %q", d, c.want)
			}
			if err := x.ClearDamage(); err != nil {
				t.Fatal(err)
			}
			x.Close()
			if d := openIndex(t, dir, index.Options{}).Damage(); d.Records != "" {
				t.Fatalf("Damage() after ClearDamage = %+v", d)
			}
		})
	}
	t.Run("sound", func(t *testing.T) {
		dir := populate(t)
		x := openIndex(t, dir, index.Options{})
		if d := x.Damage(); d != (index.Damage{}) {
			t.Fatalf("Damage() of a sound index = %+v", d)
		}
	})
}
