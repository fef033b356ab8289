package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/semfs/semfs/integration/semfstest"
)

// TestMain removes the daemon binary the tests built (semfstest.Main).
func TestMain(m *testing.M) { os.Exit(semfstest.Main(m)) }

// TestLoadAgainstDaemon runs a short load of every kind against the real
// daemon and checks its counts against the backing directory: every write the
// load counts is a 4 KiB file there, in its client's directory, and a tag it
// counts is on the seed file's record. A load whose operations silently fail
// or count what did not happen would make every A/B meaningless.
func TestLoadAgainstDaemon(t *testing.T) {
	d := semfstest.Start(t, semfstest.Options{ModelDir: "off"})
	seedFiles(d.NFS)
	all := make([]int, len(kinds))
	for k := range kinds {
		all[k] = k
	}
	r := load(config{nfs: d.NFS, ninep: d.NineP, socket: d.Socket, clients: 2 * len(kinds),
		secs: 1, run: "t", kinds: all})
	for k, name := range kinds {
		if r.errs[k] != 0 {
			t.Errorf("%s: %d errors, first: %s", name, r.errs[k], r.firstErr[k])
		}
		if r.ops[k] == 0 {
			t.Errorf("%s: no operation completed in 1 s", name)
		}
	}
	for _, w := range []struct {
		kind, dir string
	}{{"nfs-write", "t-nfs"}, {"9p-write", "t-9p"}} {
		ents, err := os.ReadDir(d.Data)
		if err != nil {
			t.Fatal(err)
		}
		var files int64
		for _, e := range ents {
			if !strings.HasPrefix(e.Name(), w.dir) {
				continue
			}
			fs, err := os.ReadDir(filepath.Join(d.Data, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range fs {
				fi, err := f.Info()
				if err != nil {
					t.Fatal(err)
				}
				if fi.Size() != 4096 {
					t.Errorf("%s/%s: %d bytes, want 4096", e.Name(), f.Name(), fi.Size())
				}
				files++
			}
		}
		if k := slices.Index(kinds, w.kind); files != r.ops[k] {
			t.Errorf("%s: %d files in the backing directory, the load counted %d", w.kind, files, r.ops[k])
		}
	}
	tagged := 0
	for i := 0; i < Seeds; i++ {
		rec, err := d.Client.File(context.Background(), seedName(i))
		if err != nil {
			t.Fatalf("%s: %v", seedName(i), err)
		}
		if rec.Task != "" {
			tagged++
		}
	}
	if tagged == 0 {
		t.Errorf("the load counted %d tags, but no seed file has a task", r.ops[slices.Index(kinds, "tag")])
	}
}

// A paced kind (-rate) starts no more operations than its pace allows: at
// most rate·secs, plus each client's first at the start; the kinds not paced
// run as before.
func TestRatePacesItsKind(t *testing.T) {
	d := semfstest.Start(t, semfstest.Options{ModelDir: "off"})
	seedFiles(d.NFS)
	tag, read := slices.Index(kinds, "tag"), slices.Index(kinds, "nfs-read")
	var rate [6]float64
	rate[tag] = 10
	r := load(config{nfs: d.NFS, ninep: d.NineP, socket: d.Socket, clients: 4,
		secs: 1, run: "p", kinds: []int{tag, read}, rate: rate})
	if r.errors() != 0 {
		t.Fatalf("errors: %v, first: %q", r.errs, r.firstErr)
	}
	if r.ops[tag] == 0 || r.ops[tag] > 10+2 {
		t.Errorf("tags paced at 10 a second over 1 s by 2 clients: %d", r.ops[tag])
	}
	if r.ops[read] <= r.ops[tag] {
		t.Errorf("unpaced reads %d, no more than the paced tags %d", r.ops[read], r.ops[tag])
	}
}
