package index_test

import (
	"bytes"
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/semfs/semfs/index"
)

// TestApplyEqualsOneByOne: a random stream of creates, touches, renames (files
// and directories) and removes gives the same index applied as batches as
// applied one change at a time.
func TestApplyEqualsOneByOne(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var changes []index.Change
	live := map[string]bool{}
	pick := func() string {
		for p := range live {
			return p
		}
		return "none"
	}
	for i := 0; i < 600; i++ {
		at := base.Add(time.Duration(i) * time.Second)
		switch r := rng.Intn(10); {
		case r < 5 || len(live) == 0:
			p := fmt.Sprintf("d%d/f%d", rng.Intn(4), i)
			changes = append(changes, index.Change{Op: index.OpCreate, Path: p, CreatedBy: fmt.Sprintf("app%d", rng.Intn(3)), Ino: uint64(i + 1), At: at})
			live[p] = true
		case r < 7:
			changes = append(changes, index.Change{Op: index.OpTouch, Path: pick(), At: at})
		case r < 8:
			old := pick()
			p := fmt.Sprintf("d%d/r%d", rng.Intn(4), i)
			changes = append(changes, index.Change{Op: index.OpRename, Path: old, NewPath: p, At: at})
			delete(live, old)
			live[p] = true
		case r < 9:
			from, to := fmt.Sprintf("d%d", rng.Intn(4)), fmt.Sprintf("d%d", 4+rng.Intn(2))
			changes = append(changes, index.Change{Op: index.OpRename, Path: from, NewPath: to, At: at})
			for p := range live {
				if len(p) > len(from) && p[:len(from)+1] == from+"/" {
					delete(live, p)
					live[to+p[len(from):]] = true
				}
			}
		default:
			p := pick()
			changes = append(changes, index.Change{Op: index.OpRemove, Path: p})
			delete(live, p)
		}
	}
	// Also changes that must be skipped, not fail the batch.
	changes = append(changes,
		index.Change{Op: index.OpTouch, Path: "never/created", At: base},
		index.Change{Op: index.OpCreate, Path: "/absolute", At: base},
		index.Change{Op: index.OpRename, Path: "d4", NewPath: "d4/inside", At: base},
	)

	one := openIndex(t, t.TempDir(), index.Options{})
	for _, c := range changes {
		var err error
		switch c.Op {
		case index.OpCreate:
			err = one.Create(c.Path, c.CreatedBy, c.Ino, c.At)
		case index.OpTouch:
			err = one.Touch(c.Path, c.At)
		case index.OpRename:
			err = one.Rename(c.Path, c.NewPath, c.At)
		case index.OpRemove:
			err = one.Remove(c.Path)
		}
		if err != nil && index.KindOf(err) != index.KindNotFound && index.KindOf(err) != index.KindInvalid {
			t.Fatal(err)
		}
	}
	batched := openIndex(t, t.TempDir(), index.Options{})
	skipped := 0
	for i := 0; i < len(changes); i += 37 {
		n, err := batched.Apply(changes[i:min(i+37, len(changes))])
		if err != nil {
			t.Fatal(err)
		}
		skipped += n
	}
	if skipped < 3 {
		t.Fatalf("skipped %d changes, want at least the 3 bad ones", skipped)
	}
	var a, b bytes.Buffer
	if err := one.Dump(&a); err != nil {
		t.Fatal(err)
	}
	if err := batched.Dump(&b); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatalf("batched index differs from one-by-one (%d vs %d bytes)", b.Len(), a.Len())
	}
	if one.Stats().Records != batched.Stats().Records || one.Stats().Records == 0 {
		t.Fatalf("records: %d vs %d", one.Stats().Records, batched.Stats().Records)
	}
	res := query(t, batched, index.Query{Text: "d5 app1"})
	want := query(t, one, index.Query{Text: "d5 app1"})
	if fmt.Sprint(res) != fmt.Sprint(want) {
		t.Fatalf("queries differ:\n%v\n%v", res, want)
	}
}
