package ninep_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

const (
	tSetattr   = 26
	setattrSiz = uint32(0x8) // P9_SETATTR_SIZE
)

// twalk encodes a Twalk of names from fid to newfid.
func twalk(fid, newfid uint32, names ...string) []byte {
	f := []any{fid, newfid, uint16(len(names))}
	for _, n := range names {
		f = append(f, n)
	}
	return msg(tWalk, 3, f...)
}

// tsetattrSize encodes a Tsetattr that truncates fid to size.
func tsetattrSize(fid uint32, size uint64) []byte {
	return msg(tSetattr, 12, fid, setattrSiz, uint32(0), uint32(0), uint32(0), size,
		uint64(0), uint64(0), uint64(0), uint64(0))
}

// TestShimOnlySourceClunked: a fid the shim walked itself (a shim-only fid) is taught
// to p9 by walking it again from the fid it came from; that fid being clunked,
// replaced or turned into a created file in between must change nothing the
// client sees. Issue 11: clone the root, walk the clone to a directory, clunk
// the clone, then create, write and fsync on the walked fid: the fsync and a
// Tsetattr of the size answered ESTALE. Every step of each sequence goes to
// the real server and to one where p9 answers everything; the replies must be
// byte-identical, and the files hold what was written.
func TestShimOnlySourceClunked(t *testing.T) {
	e := newEnv(t)
	_, refAddr := p9Only(t, e)
	if err := os.Mkdir(filepath.Join(e.export, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.export, "d", "f"), []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	type step struct {
		name string
		req  []byte
		ok   bool // the reply must not be an Rlerror
	}
	// createSteps: create name on fid 3, write, fsync, truncate, stat.
	createSteps := func(name string) []step {
		return []step{
			{"create", msg(tLcreate, 10, uint32(3), name, oRdwr, uint32(0o644), uint32(0)), true},
			{"write", msg(tWrite, 8, uint32(3), uint64(0), uint32(5), []byte("hello")), true},
			{"fsync", msg(tFsync, 6, uint32(3), uint32(0)), true},
			{"setattr size", tsetattrSize(3, 4), true},
			{"getattr", msg(tGetattr, 4, uint32(3), maskAll), true},
			{"write again", msg(tWrite, 8, uint32(3), uint64(4), uint32(1), []byte("!")), true},
			{"clunk", msg(tClunk, 9, uint32(3)), true},
		}
	}
	seq := func(steps ...[]step) []step {
		var all []step
		for _, s := range steps {
			all = append(all, s...)
		}
		return all
	}
	cases := []struct {
		name  string
		steps []step
		files map[string]string // d/name: content after the sequence
	}{
		{"clone, walk the clone, clunk it, create", seq([]step{
			{"clone root", twalk(1, 2), true},
			{"walk clone to d", twalk(2, 3, "d"), true},
			{"clunk clone", msg(tClunk, 9, uint32(2)), true},
		}, createSteps("c1")), map[string]string{"c1": "hell!"}},
		{"walk by name, clone it, clunk the source, create", seq([]step{
			{"walk d", twalk(1, 2, "d"), true},
			{"clone d", twalk(2, 3), true},
			{"clunk d", msg(tClunk, 9, uint32(2)), true},
		}, createSteps("c2")), map[string]string{"c2": "hell!"}},
		{"clone, walk, create, then clunk the clone", seq([]step{
			{"clone root", twalk(1, 2), true},
			{"walk clone to d", twalk(2, 3, "d"), true},
			{"create", msg(tLcreate, 10, uint32(3), "c3", oRdwr, uint32(0o644), uint32(0)), true},
			{"write", msg(tWrite, 8, uint32(3), uint64(0), uint32(5), []byte("hello")), true},
			{"clunk clone", msg(tClunk, 9, uint32(2)), true},
			{"fsync", msg(tFsync, 6, uint32(3), uint32(0)), true},
			{"setattr size", tsetattrSize(3, 4), true},
			{"clunk", msg(tClunk, 9, uint32(3)), true},
		}), map[string]string{"c3": "hell"}},
		{"walk by name, clone, create, then clunk the source", seq([]step{
			{"walk d", twalk(1, 2, "d"), true},
			{"clone d", twalk(2, 3), true},
			{"create", msg(tLcreate, 10, uint32(3), "c4", oRdwr, uint32(0o644), uint32(0)), true},
			{"clunk d", msg(tClunk, 9, uint32(2)), true},
			{"write", msg(tWrite, 8, uint32(3), uint64(0), uint32(5), []byte("hello")), true},
			{"fsync", msg(tFsync, 6, uint32(3), uint32(0)), true},
			{"setattr size", tsetattrSize(3, 2), true},
			{"clunk", msg(tClunk, 9, uint32(3)), true},
		}), map[string]string{"c4": "he"}},
		{"clone, walk to a file, clunk the clone, open, read, fsync", seq([]step{
			{"clone root", twalk(1, 2), true},
			{"walk clone to d/f", twalk(2, 3, "d", "f"), true},
			{"clunk clone", msg(tClunk, 9, uint32(2)), true},
			{"open", msg(tLopen, 6, uint32(3), oRdwr), true},
			{"read", msg(tRead, 7, uint32(3), uint64(0), uint32(100)), true},
			{"fsync", msg(tFsync, 6, uint32(3), uint32(0)), true},
			{"clunk", msg(tClunk, 9, uint32(3)), true},
		}), nil},
		{"clone of a file, source clunked, stat and statfs", seq([]step{
			{"walk d/f", twalk(1, 2, "d", "f"), true},
			{"clone it", twalk(2, 3), true},
			{"getattr clone", msg(tGetattr, 4, uint32(3), maskAll), true},
			{"clunk the source", msg(tClunk, 9, uint32(2)), true},
			{"statfs clone", msg(tStatfs, 11, uint32(3)), true},
			{"getattr clone again", msg(tGetattr, 4, uint32(3), maskAll), true},
			{"clunk clone", msg(tClunk, 9, uint32(3)), true},
		}), nil},
		{"source replaced by a walk", seq([]step{
			{"walk d", twalk(1, 2, "d"), true},
			{"clone d", twalk(2, 3), true},
			{"walk fid 2 anew to d/f", twalk(1, 2, "d", "f"), true},
		}, createSteps("c5"), []step{
			{"clunk 2", msg(tClunk, 9, uint32(2)), true},
		}), map[string]string{"c5": "hell!"}},
		{"source turned into a created file", seq([]step{
			{"walk d", twalk(1, 2, "d"), true},
			{"clone d", twalk(2, 3), true},
			{"create on the source", msg(tLcreate, 10, uint32(2), "c6", oRdwr, uint32(0o644), uint32(0)), true},
		}, createSteps("c7"), []step{
			{"clunk 2", msg(tClunk, 9, uint32(2)), true},
		}), map[string]string{"c6": "", "c7": "hell!"}},
		{"source clunked twice over (clone of a clone of a clone)", seq([]step{
			{"clone root", twalk(1, 2), true},
			{"clone clone", twalk(2, 4), true},
			{"walk to d", twalk(4, 3, "d"), true},
			{"clunk 4", msg(tClunk, 9, uint32(4)), true},
			{"clunk 2", msg(tClunk, 9, uint32(2)), true},
		}, createSteps("c8")), map[string]string{"c8": "hell!"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fast, slow := dialRaw(t, "tcp", e.tcp), dialRaw(t, "tcp", refAddr)
			for _, r := range []*raw{fast, slow} {
				r.version(fastMsize)
				if err := r.attach(1, 1, "@fast", 0); err != nil {
					t.Fatal(err)
				}
			}
			for _, s := range tc.steps {
				got := fast.exchange(s.req)
				want := slow.exchange(s.req)
				// Rstatfs carries the file system's free blocks and inodes,
				// which other processes (the suite's other packages) move
				// between the two exchanges: asked again, up to five times,
				// a sound answer matches; a wrong one never does.
				for try := 0; !bytes.Equal(got, want) && s.req[4] == tStatfs && try < 5; try++ {
					got, want = fast.exchange(s.req), slow.exchange(s.req)
				}
				if !bytes.Equal(got, want) {
					t.Fatalf("%s: fast path replied (%d bytes)\n  %x\np9 replied (%d bytes)\n  %x", s.name, len(got), head(got), len(want), head(want))
				}
				if isErr := got[0] == tLerror; isErr == s.ok {
					t.Fatalf("%s: reply %x, want ok=%v", s.name, head(got), s.ok)
				}
			}
			for name, want := range tc.files {
				b, err := os.ReadFile(filepath.Join(e.export, "d", name))
				if err != nil || string(b) != want {
					t.Fatalf("d/%s = %q, %v; want %q", name, b, err, want)
				}
			}
		})
	}
}
