package content

import (
	"fmt"
	"math/rand"
	"slices"
	"testing"
	"time"
)

// randPath draws from few names so that paths nest, share prefixes and sit
// beside names that sort between a directory and its children ("a/b!" and
// "a/b0" around "a/b/").
func randPath(r *rand.Rand) string {
	names := []string{"a", "b", "a b", "b!", "b0", "b.txt", "ab", "é", "a-", "z"}
	n := 1 + r.Intn(4)
	p := ""
	for i := range n {
		if i > 0 {
			p += "/"
		}
		p += names[r.Intn(len(names))]
	}
	return p
}

// linearWithin is what Table.Within replaces: every path tested.
func linearWithin(m map[string]int, dir string) []string {
	var out []string
	for p := range m {
		if Within(p, dir) {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// TestTableWithinIsTheLinearFilter checks Table.Within against Within applied
// to every entry, over random puts and deletes.
func TestTableWithinIsTheLinearFilter(t *testing.T) {
	for seed := range int64(20) {
		r := rand.New(rand.NewSource(seed))
		var tb Table[int]
		m := map[string]int{}
		for step := range 400 {
			p := randPath(r)
			switch r.Intn(3) {
			case 0, 1:
				tb.Put(p, step)
				m[p] = step
			case 2:
				tb.Delete(p)
				delete(m, p)
			}
			if tb.Len() != len(m) {
				t.Fatalf("seed %d step %d: Len %d, map %d", seed, step, tb.Len(), len(m))
			}
			dir := randPath(r)
			if r.Intn(10) == 0 {
				dir = ""
			}
			if got, want := tb.Within(dir), linearWithin(m, dir); !slices.Equal(got, want) {
				t.Fatalf("seed %d step %d: Within(%q) = %q, want %q", seed, step, dir, got, want)
			}
			e, ok := tb.Get(p)
			if we, wok := m[p]; ok != wok || e != we || tb.At(p) != we {
				t.Fatalf("seed %d step %d: Get(%q) = %d %v, map %d %v", seed, step, p, e, ok, we, wok)
			}
		}
		n := 0
		for p, e := range tb.All() {
			if m[p] != e {
				t.Fatalf("seed %d: All gives %q=%d, map %d", seed, p, e, m[p])
			}
			n++
		}
		if n != len(m) {
			t.Fatalf("seed %d: All gives %d entries, map %d", seed, n, len(m))
		}
	}
}

// TestCompareScopedIsTheLinearRule checks Compare's scoped walk of the table
// against the rule it had before the table kept its paths in order: gone is
// every entry in some scope, of a generation at or before since, that the
// walk did not see.
func TestCompareScopedIsTheLinearRule(t *testing.T) {
	for seed := range int64(50) {
		r := rand.New(rand.NewSource(seed))
		var tb Table[Entry]
		m := map[string]Entry{}
		for range 60 {
			p := randPath(r)
			e := Entry{Size: int64(r.Intn(3)), MTime: int64(r.Intn(3)), Gen: uint64(r.Intn(10))}
			tb.Put(p, e)
			m[p] = e
		}
		var scopes []string
		for range 1 + r.Intn(3) {
			scopes = append(scopes, randPath(r)) // they may nest or repeat
		}
		var walked []FileStat
		for range r.Intn(20) {
			walked = append(walked, FileStat{Path: randPath(r), Size: int64(r.Intn(3)), MTime: time.Unix(0, int64(r.Intn(3)))})
		}
		since := uint64(r.Intn(10))
		gone, stale := Compare(&tb, func(e Entry) Entry { return e }, since, scopes, walked)

		seen := map[string]bool{}
		var wantStale []string
		for _, f := range walked {
			seen[f.Path] = true
			if e, ok := m[f.Path]; !ok || e.Size != f.Size || e.MTime != f.MTime.UnixNano() {
				wantStale = append(wantStale, f.Path)
			}
		}
		var wantGone []string
		for p, e := range m {
			if slices.ContainsFunc(scopes, func(s string) bool { return Within(p, s) }) && e.Gen <= since && !seen[p] {
				wantGone = append(wantGone, p)
			}
		}
		slices.Sort(gone)
		slices.Sort(wantGone)
		if !slices.Equal(gone, wantGone) || !slices.Equal(stale, wantStale) {
			t.Fatalf("seed %d, scopes %q since %d:\ngone %q\nwant %q\nstale %q\nwant %q", seed, scopes, since, gone, wantGone, stale, wantStale)
		}
	}
}

// BenchmarkCompareScoped is a watcher's batch (one directory of 20 files)
// compared with a table of 100,000 entries: the work a request waits for
// after a host process writes (Watcher.Sync).
func BenchmarkCompareScoped(b *testing.B) {
	var tb Table[Entry]
	for i := range 100_000 {
		tb.Put(fmt.Sprintf("app%02d/d%03d/f%02d.md", i/2000, i/20%100, i%20), Entry{Size: 1, MTime: 1})
	}
	var walked []FileStat
	for i := range 20 {
		walked = append(walked, FileStat{Path: fmt.Sprintf("app07/d042/f%02d.md", i), Size: 1, MTime: time.Unix(0, 1)})
	}
	b.ReportAllocs()
	for b.Loop() {
		gone, stale := Compare(&tb, func(e Entry) Entry { return e }, 1, []string{"app07/d042"}, walked)
		if len(gone)+len(stale) != 0 {
			b.Fatal(gone, stale)
		}
	}
}

// BenchmarkDrainRemovals is 2,000 files removed one by one through a mount
// (one Removed change each) from an index of 100,000 entries.
func BenchmarkDrainRemovals(b *testing.B) {
	x, err := Open(Options{Files: Dir(b.TempDir())})
	if err != nil {
		b.Fatal(err)
	}
	defer x.Close()
	path := func(i int) string { return fmt.Sprintf("app%02d/d%03d/f%02d.md", i/2000, i/20%100, i%20) }
	for b.Loop() {
		b.StopTimer()
		x.mu.Lock()
		for i := range 100_000 {
			if x.files.At(path(i)) == nil {
				x.files.Put(path(i), &entry{state: Binary})
				x.states[Binary]++
			}
		}
		x.mu.Unlock()
		cs := make([]Change, 0, 2000)
		for i := range 2000 {
			cs = append(cs, Change{Op: Removed, Path: path(14_000 + i)})
		}
		x.q.Apply(cs)
		b.StartTimer()
		x.mu.Lock()
		x.drainLocked()
		n := x.files.Len()
		x.mu.Unlock()
		if n != 98_000 {
			b.Fatalf("%d entries left, want 98,000", n)
		}
	}
}

// BenchmarkQueueRemovalsWhileDirty is a tree of 5,000 files removed through
// a mount while their writes are still queued for reading (an untar, then rm
// -r at once): one Apply of 5,000 removals, each clearing the dirty marks
// below its path.
func BenchmarkQueueRemovalsWhileDirty(b *testing.B) {
	paths := make([]string, 5000)
	for i := range paths {
		paths[i] = fmt.Sprintf("t/d%02d/f%04d.md", i/100, i)
	}
	for b.Loop() {
		b.StopTimer()
		q := NewQueue()
		cs := make([]Change, 0, len(paths))
		for _, p := range paths {
			cs = append(cs, Change{Op: Written, Path: p})
		}
		q.Apply(cs)
		cs = cs[:0]
		for _, p := range paths {
			cs = append(cs, Change{Op: Removed, Path: p})
		}
		b.StartTimer()
		q.Apply(cs)
		if n := q.Dirty(nil); n != 0 {
			b.Fatalf("%d paths still dirty", n)
		}
	}
}

// TestTableRenameIsTheLinearRule checks Table.Rename against the rule the
// indexes applied with a scan of every entry: the entries at or below the
// target that are not below the source dropped, then those at or below the
// source moved under the target; and that drop and moved see exactly those.
func TestTableRenameIsTheLinearRule(t *testing.T) {
	for seed := range int64(20) {
		r := rand.New(rand.NewSource(seed))
		var tb Table[int]
		m := map[string]int{}
		for step := range 300 {
			p := randPath(r)
			tb.Put(p, step)
			m[p] = step
			from, to := randPath(r), randPath(r)
			if r.Intn(8) == 0 {
				to = from // a rename onto itself (the queue sees them)
			} else if Within(to, from) || Within(from, to) {
				continue // no rename moves a directory into itself or over an ancestor
			}
			want := map[string]int{}
			var wantDrop, wantMoved []string
			for q, e := range m {
				switch {
				case Within(q, from):
					want[to+q[len(from):]] = e
					wantMoved = append(wantMoved, q)
				case Within(q, to):
					wantDrop = append(wantDrop, q)
				default:
					want[q] = e
				}
			}
			var dropped, moved []string
			tb.Rename(from, to, func(q string) {
				dropped = append(dropped, q)
				tb.Delete(q)
			}, func(q, nq string, e int) {
				if nq != to+q[len(from):] || e != m[q] {
					t.Fatalf("seed %d step %d: moved %q -> %q (%d), want -> %q (%d)", seed, step, q, nq, e, to+q[len(from):], m[q])
				}
				moved = append(moved, q)
			})
			m = want
			slices.Sort(wantDrop)
			slices.Sort(wantMoved)
			if !slices.Equal(dropped, wantDrop) || !slices.Equal(moved, wantMoved) {
				t.Fatalf("seed %d step %d: rename %q -> %q dropped %q moved %q, want %q, %q", seed, step, from, to, dropped, moved, wantDrop, wantMoved)
			}
			if got := tb.Within(""); !slices.Equal(got, linearWithin(m, "")) {
				t.Fatalf("seed %d step %d: after rename %q -> %q: %q, want %q", seed, step, from, to, got, linearWithin(m, ""))
			}
			for q, e := range m {
				if tb.At(q) != e {
					t.Fatalf("seed %d step %d: %q = %d, want %d", seed, step, q, tb.At(q), e)
				}
			}
		}
	}
}
