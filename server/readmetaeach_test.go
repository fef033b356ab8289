package server_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/semfs/semfs/server"
)

// TestReadMetaEachIsReadMeta: for every file of a generated tree (records in
// the attribute, in the journal for what is too large or cannot carry one,
// none, an undecodable attribute, files removed or replaced after the walk
// listed them), ReadMetaEach answers what ReadMeta answers for it: the same
// record, source and error kind; and for each file left as it was made, what
// the test made it hold (the record SaveMeta stored, or none, or a bad one).
// ReadMeta is another route to the record (the file opened O_PATH, its
// attribute read through /proc), sharing the decoding; the test's own account
// shares nothing with either.
// Both of ReadMetaEach's routes: getxattrat(2), and ReadMeta's own where
// the kernel lacks it; with records in the journal and with none (where
// getxattrat alone answers).
func TestReadMetaEachIsReadMeta(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		for _, fallback := range []bool{false, true} {
			for _, journal := range []bool{true, false} {
				t.Run(fmt.Sprintf("seed%d/readmeta=%v/journal=%v", seed, fallback, journal), func(t *testing.T) {
					f, _ := durableFixture(t)
					if fallback {
						f.fs.UseReadMeta()
					}
					readMetaEachCase(t, f, rand.New(rand.NewPCG(seed, 27)), journal)
				})
			}
		}
	}
}

// readMetaEachCase runs one generated tree; without journal, no record goes
// to the journal (symlinks are made on the host, records stay small).
func readMetaEachCase(t *testing.T, f *fixture, rng *rand.Rand, journal bool) {
	ctx := as("reader")
	// What each file was made to hold, the test's own account (not read
	// back by any of the core's routes): its record and where it went, or
	// the error kind.
	type made struct {
		m    server.Meta
		src  server.MetaSource
		kind server.Kind
	}
	want := map[string]made{}
	dirs := []string{""}
	for i := 0; i < 6; i++ {
		d := server.Join(dirs[rng.IntN(len(dirs))], fmt.Sprintf("d%d", i))
		if err := os.Mkdir(filepath.Join(f.dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, d)
	}
	for i := 0; i < 120; i++ {
		p := server.Join(dirs[rng.IntN(len(dirs))], fmt.Sprintf("f%03d", i))
		host := filepath.Join(f.dir, p)
		switch rng.IntN(7) {
		case 0: // written on the host: no record
			if err := os.WriteFile(host, []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
			want[p] = made{src: server.MetaNone, kind: noKind}
		case 1: // an attribute that does not decode
			if err := os.WriteFile(host, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := unix.Setxattr(host, server.MetaXattr, []byte("{not a record"), 0); err != nil {
				t.Fatal(err)
			}
			want[p] = made{src: server.MetaNone, kind: server.KindInvalid}
		case 2: // a symlink: its record in the journal, or none
			if !journal {
				if err := os.Symlink("target", host); err != nil {
					t.Fatal(err)
				}
				want[p] = made{src: server.MetaNone, kind: noKind}
			} else if _, err := f.fs.Symlink(as("notes"), "target", p); err != nil {
				t.Fatal(err)
			}
		default: // created through the core, tagged: small, over 512 bytes, or too large for the attribute
			file, _, err := f.fs.Create(as(fmt.Sprintf("app%d", rng.IntN(3))), p, 0o644, true)
			if err != nil {
				t.Fatal(err)
			}
			file.Close()
			task := fmt.Sprintf("task %d", i)
			var vec *server.MetaVector
			switch rng.IntN(3) {
			case 1:
				vec = &server.MetaVector{Model: "m", Values: make([]float32, 200)} // > 512 bytes
			case 2:
				if journal {
					vec = &server.MetaVector{Model: "m", Values: make([]float32, 4000)} // to the journal
				}
			}
			m, err := f.fs.SaveMeta(ctx, p, func(cur server.Meta, _ bool) server.Meta {
				cur.Task, cur.Vector = task, vec
				return cur
			})
			if err != nil {
				t.Fatal(err)
			}
			src := server.MetaFromXattr
			if vec != nil && len(vec.Values) > 1000 {
				src = server.MetaFromJournal
			}
			want[p] = made{m, src, noKind}
		}
	}
	var paths []string
	if err := f.fs.Walk(ctx, "", func(p string, a server.Attr) error {
		if a.Mode.IsRegular() || a.IsSymlink() {
			paths = append(paths, p)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// After the walk: some files removed, some replaced by others with records
	// of their own, one directory removed whole.
	for _, p := range paths {
		switch rng.IntN(12) {
		case 0:
			os.Remove(filepath.Join(f.dir, p))
			delete(want, p)
		case 1:
			delete(want, p)
			tmp := p + ".new"
			file, _, err := f.fs.Create(as("replacer"), tmp, 0o644, true)
			if err != nil {
				t.Fatal(err)
			}
			file.Close()
			if err := os.Rename(filepath.Join(f.dir, tmp), filepath.Join(f.dir, p)); err != nil {
				t.Fatal(err)
			}
		}
	}
	gone := dirs[1+rng.IntN(len(dirs)-1)]
	os.RemoveAll(filepath.Join(f.dir, gone))
	for p := range want {
		if server.Within(p, gone) {
			delete(want, p)
		}
	}

	type answer struct {
		m    server.Meta
		src  server.MetaSource
		kind server.Kind // noKind: no error
	}
	got := make([]*answer, len(paths))
	f.fs.ReadMetaEach(ctx, paths, func(i int, m server.Meta, src server.MetaSource, err error) {
		if got[i] != nil {
			t.Errorf("%s answered twice", paths[i])
		}
		got[i] = &answer{m, src, kindOf(err)}
	})
	kinds := map[string]int{}
	for i, p := range paths {
		if got[i] == nil {
			t.Errorf("%s: no answer", p)
			continue
		}
		m, src, err := f.fs.ReadMeta(ctx, p)
		byReadMeta := answer{m, src, kindOf(err)}
		if !reflect.DeepEqual(*got[i], byReadMeta) {
			t.Errorf("%s: ReadMetaEach %+v, ReadMeta %+v", p, *got[i], byReadMeta)
		}
		if w, ok := want[p]; ok && !reflect.DeepEqual(*got[i], answer(w)) {
			t.Errorf("%s: ReadMetaEach %+v, made as %+v", p, *got[i], w)
		}
		kinds[fmt.Sprintf("%v/%v", byReadMeta.src, byReadMeta.kind)]++
	}
	t.Logf("%d files: %v", len(paths), kinds)
	for k := range kinds {
		if !journal && strings.HasPrefix(k, server.MetaFromJournal.String()) {
			t.Fatalf("a record in the journal of a tree meant to have none: %v", kinds)
		}
	}
}

// noKind stands for no error in an answer (KindOf takes none).
const noKind server.Kind = 255

func kindOf(err error) server.Kind {
	if err == nil {
		return noKind
	}
	return server.KindOf(err)
}
