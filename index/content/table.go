package content

import (
	"iter"
	"strings"

	"github.com/tidwall/btree"
)

// Table is an index's entries by path (the content and the passage index
// each keep one): a map for lookups, and the same paths in order, so that the
// entries at or below a directory are found in time proportional to their
// number, not to the table's. A removal or rename drained one by one, and a
// watcher's batch that a request waits for (Watcher.Sync), each name a few
// paths of a table that may hold 100,000; a scan of every entry per change
// made a removal of 2,000 files through a mount cost 2,000 such scans.
//
// The zero Table is empty and ready. Not safe for concurrent use: its
// index's lock guards it.
type Table[E any] struct {
	m     map[string]E
	order btree.Set[string]
}

// Get returns p's entry.
func (t *Table[E]) Get(p string) (E, bool) {
	e, ok := t.m[p]
	return e, ok
}

// At returns p's entry, or the zero E when it has none.
func (t *Table[E]) At(p string) E { return t.m[p] }

// Put sets p's entry.
func (t *Table[E]) Put(p string, e E) {
	if t.m == nil {
		t.m = map[string]E{}
	}
	if _, ok := t.m[p]; !ok {
		t.order.Insert(p)
	}
	t.m[p] = e
}

// Delete forgets p's entry, if any.
func (t *Table[E]) Delete(p string) {
	if _, ok := t.m[p]; ok {
		delete(t.m, p)
		t.order.Delete(p)
	}
}

// Rename applies a rename of from to to (a file or a directory tree; to is
// from itself, or neither below it nor above it): each entry at or below to
// but not below from was replaced, and drop is called with its path (drop
// must Delete it: the index forgets what else it keeps of it); then each
// entry at or below from moves to the same place below to, and moved (nil:
// nothing more) is called with its old and new path and its entry. The
// content index, the passage index and the queue's marks each apply renames
// so.
func (t *Table[E]) Rename(from, to string, drop func(p string), moved func(from, to string, e E)) {
	moving := t.Within(from)
	for _, p := range t.Within(to) {
		if !Within(p, from) {
			drop(p)
		}
	}
	for _, p := range moving {
		e := t.m[p]
		t.Delete(p)
		np := to + p[len(from):]
		t.Put(np, e)
		if moved != nil {
			moved(p, np, e)
		}
	}
}

// Len is the number of entries.
func (t *Table[E]) Len() int { return len(t.m) }

// All yields every entry, in no particular order (the map's).
func (t *Table[E]) All() iter.Seq2[string, E] {
	return func(yield func(string, E) bool) {
		for p, e := range t.m {
			if !yield(p, e) {
				return
			}
		}
	}
}

// Within lists, in byte order, the paths of the entries at or below dir ("":
// every entry), as Within(p, dir) tests one. The list is the caller's: the
// table may change while it is used.
func (t *Table[E]) Within(dir string) []string {
	var ps []string
	if dir == "" {
		t.order.Scan(func(p string) bool {
			ps = append(ps, p)
			return true
		})
		return ps
	}
	if _, ok := t.m[dir]; ok {
		ps = append(ps, dir)
	}
	// The paths below dir all begin with dir+"/", so they are one run of
	// the order, from that prefix on.
	below := dir + "/"
	t.order.Ascend(below, func(p string) bool {
		if !strings.HasPrefix(p, below) {
			return false
		}
		ps = append(ps, p)
		return true
	})
	return ps
}
