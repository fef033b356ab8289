package nfs_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/semfs/semfs/server/servertest"
)

// recvRaw reads one reply record whole (record mark included).
func (c *rawClient) recvRaw() []byte {
	c.t.Helper()
	c.c.SetReadDeadline(time.Now().Add(20 * time.Second))
	var mark [4]byte
	if _, err := io.ReadFull(c.c, mark[:]); err != nil {
		c.t.Fatalf("recv: %v", err)
	}
	b := make([]byte, 4+binary.BigEndian.Uint32(mark[:])&^(1<<31))
	copy(b, mark[:])
	if _, err := io.ReadFull(c.c, b[4:]); err != nil {
		c.t.Fatalf("recv: %v", err)
	}
	return b
}

// sendAt sends one NFSv3 call with the given xid (both sides of a comparison
// use the same xids, so replies can be compared whole).
func (c *rawClient) sendAt(xid, proc uint32, args []byte) {
	c.xid = xid - 1
	c.send(progNFS, 3, proc, args)
}

// diffStep is one call of a sequence. args builds the call (its argument is
// always 0: the directory c0 the CREATEs make their files in), so a page
// request can carry the cookie verifier an earlier listing got.
type diffStep struct {
	name string
	conn int // which of the two connections sends it
	proc uint32
	args func(side int) []byte
	seen func(side int, reply []byte) // nil, or what a later step needs of the reply
}

// diffBatch is sent pipelined: every call on both connections before any reply
// is read.
type diffBatch struct {
	steps   []diffStep
	mutates bool
	before  func() // runs first: another connection's renames and removals
}

// outcome is how a reply ends: "nfs N" (an accepted call's nfsstat3) or
// "rpc N" (the accept_stat of a call refused before any procedure ran).
// An ACCESS answered OK adds the bits granted, a READ its count and eof.
func outcome(t *testing.T, proc uint32, rec []byte) string {
	d := &dec{t: t, b: rec, off: 4 + 8} // mark; xid, REPLY
	if d.u32() != 0 {
		return "denied"
	}
	d.u32()
	d.opaque()
	if acc := d.u32(); acc != 0 {
		return fmt.Sprintf("rpc %d", acc)
	}
	st := d.u32()
	switch {
	case st == sOK && proc == pAccess:
		d.postOp()
		return fmt.Sprintf("nfs 0 access %#x", d.u32())
	case st == sOK && proc == pRead:
		d.postOp()
		n, eof := d.u32(), d.u32()
		return fmt.Sprintf("nfs 0 read %d eof %d", n, eof)
	}
	return fmt.Sprintf("nfs %d", st)
}

// TestAnswers: the procedures the adapter answers itself (GETATTR, LOOKUP,
// ACCESS, READ, WRITE, READDIRPLUS, COMMIT, CREATE) with good and bad
// arguments, sent on two connections (one as root, one as an unprivileged
// uid), pipelined, with renames and removals made in between on a third
// connection, each answered with the status Linux's nfsd gives (wants, below).
// Until issue 30 these calls were compared with go-nfs's answers to the same
// calls; the statuses here are the ones that comparison held, reviewed
// against RFC 1813 and nfsd. The generated sequences against nfs-ganesha
// (integration/differential) check the same procedures on a kernel-free
// client; this test keeps the cases those never make: forged, short and
// empty handles, truncated arguments, renames of a handle's directory by
// another connection, READs from the disk and the page cache, pipelining.
func TestAnswers(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("root mode needs a daemon running as root: the unprivileged steps' answers are its checks")
	}
	e := newEnv(t)

	// The tree, made by the host.
	content := bytes.Repeat([]byte("semfs fast path "), 10000/16)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(e.dir, "f"), content, 0o644))
	// Large READs: answered inline from the page cache, or by a worker once
	// the pages are dropped (workers.go).
	big := make([]byte, 2<<20+1000)
	for i := range big {
		big[i] = byte(i * 13 / 7)
	}
	must(os.WriteFile(filepath.Join(e.dir, "big"), big, 0o644))
	must(os.WriteFile(filepath.Join(e.dir, "secret"), []byte("root only"), 0o600))
	must(os.WriteFile(filepath.Join(e.dir, "empty"), nil, 0o666))
	must(os.Mkdir(filepath.Join(e.dir, "d"), 0o755))
	must(os.Mkdir(filepath.Join(e.dir, "private"), 0o700))
	must(os.WriteFile(filepath.Join(e.dir, "private", "p"), []byte("p"), 0o644))
	for i := 0; i < 60; i++ {
		must(os.WriteFile(filepath.Join(e.dir, "d", fmt.Sprintf("entry-%02d", i)), []byte{byte(i)}, 0o644))
	}
	must(os.Symlink("f", filepath.Join(e.dir, "l")))
	must(os.WriteFile(filepath.Join(e.dir, "d", "g"), []byte("g before"), 0o644))
	must(os.WriteFile(filepath.Join(e.dir, "gone"), []byte("removed soon"), 0o644))
	// CREATE: in c0.
	for _, c := range []string{"c0"} {
		must(os.Mkdir(filepath.Join(e.dir, c), 0o777))
		must(os.Chmod(filepath.Join(e.dir, c), 0o777))
		must(os.WriteFile(filepath.Join(e.dir, c, "old"), []byte("old"), 0o644))
		must(os.Mkdir(filepath.Join(e.dir, c, "sub"), 0o755))
	}

	// Handles.
	setup, root := e.client("/")
	setup.as(0, 0)
	fh := map[string][]byte{"": root}
	for _, p := range []string{"f", "big", "secret", "empty", "d", "private", "l", "gone", "d/g", "d/entry-07", "private/p", "c0", "c0/old"} {
		dir, name := "", p
		if i := strings.LastIndexByte(p, '/'); i >= 0 {
			dir, name = p[:i], p[i+1:]
		}
		st, h, _ := setup.lookup(fh[dir], name)
		if st != sOK {
			t.Fatalf("lookup %s: %d", p, st)
		}
		fh[p] = h
	}
	badMAC := append([]byte(nil), fh["f"]...)
	badMAC[len(badMAC)-1] ^= 1
	fh["bad MAC"] = badMAC
	fh["zeros"] = make([]byte, 32)
	fh["short"] = fh["f"][:8]

	var sides [1][2]*rawClient
	sides[0][0] = dialRaw(t, e.addr).as(0, 0)
	sides[0][1] = dialRaw(t, e.addr).as(4242, 4242)
	other := dialRaw(t, e.addr).as(0, 0) // renames and removals between batches

	call := func(args *enc) func(int) []byte { return func(int) []byte { return args.b } }
	getattr := func(p string) func(int) []byte { return call((&enc{}).opaque(fh[p])) }
	lookup := func(p, name string) func(int) []byte { return call((&enc{}).dirop(fh[p], name)) }
	access := func(p string, bits uint32) func(int) []byte { return call((&enc{}).opaque(fh[p]).u32(bits)) }
	read := func(p string, off uint64, n uint32) func(int) []byte {
		return call((&enc{}).opaque(fh[p]).u64(off).u32(n))
	}
	write := func(p string, off uint64, stable uint32, data string) func(int) []byte {
		return call((&enc{}).opaque(fh[p]).u64(off).u32(uint32(len(data))).u32(stable).opaque([]byte(data)))
	}
	commit := func(p string) func(int) []byte { return call((&enc{}).opaque(fh[p]).u64(0).u32(0)) }
	rdp := func(p string, cookie, verf uint64, dircount, maxcount uint32) func(int) []byte {
		return call((&enc{}).opaque(fh[p]).u64(cookie).u64(verf).u32(dircount).u32(maxcount))
	}
	// CREATE in the side's own directory (c0 or c1); in names the side's old
	// file. how: 0 UNCHECKED, 1 GUARDED (sattr3 follows), 2 EXCLUSIVE (verifier).
	sideDir := func(side int, in string) []byte { return fh[fmt.Sprintf("c%d", side)+in] }
	create := func(in, name string, how uint32, mode int) func(int) []byte {
		return func(side int) []byte {
			e := (&enc{}).dirop(sideDir(side, in), name).u32(how)
			if how == 2 {
				return e.u64(uint64(mode)).b
			}
			return e.sattr(mode).b
		}
	}
	createWith := func(name string, sattr *enc) func(int) []byte {
		return func(side int) []byte { return append((&enc{}).dirop(sideDir(side, ""), name).u32(0).b, sattr.b...) }
	}
	// A listing's verifier, for a later page (at cookie 12).
	var verf [2]uint64
	lastPage := func(side int, rec []byte) {
		d := &dec{t: t, b: rec, off: 4 + 24}
		if d.u32() != sOK {
			t.Fatalf("readdirplus page failed on side %d", side)
		}
		d.postOp()
		verf[side] = d.u64()
	}
	nextPage := func(p string) func(int) []byte {
		return func(side int) []byte {
			return (&enc{}).opaque(fh[p]).u64(12).u64(verf[side]).u32(65536).u32(65536).b
		}
	}

	batches := []diffBatch{
		{steps: []diffStep{
			{"GETATTR root", 0, pGetattr, getattr(""), nil},
			{"GETATTR file", 0, pGetattr, getattr("f"), nil},
			{"GETATTR dir", 1, pGetattr, getattr("d"), nil},
			{"GETATTR symlink", 1, pGetattr, getattr("l"), nil},
			{"GETATTR bad MAC", 0, pGetattr, getattr("bad MAC"), nil},
			{"GETATTR zero handle", 1, pGetattr, getattr("zeros"), nil},
			{"GETATTR short handle", 0, pGetattr, getattr("short"), nil},
			{"GETATTR empty handle", 0, pGetattr, call((&enc{}).opaque(nil)), nil},
			{"GETATTR no arguments", 1, pGetattr, call(&enc{}), nil},
		}},
		{steps: []diffStep{
			{"LOOKUP file", 0, pLookup, lookup("", "f"), nil},
			{"LOOKUP in dir", 1, pLookup, lookup("d", "g"), nil},
			{"LOOKUP missing", 0, pLookup, lookup("", "missing"), nil},
			{"LOOKUP dot", 0, pLookup, lookup("d", "."), nil},
			{"LOOKUP dotdot", 1, pLookup, lookup("d", ".."), nil},
			{"LOOKUP dotdot at root", 0, pLookup, lookup("", ".."), nil},
			{"LOOKUP in a file", 0, pLookup, lookup("f", "x"), nil},
			{"LOOKUP in a symlink", 1, pLookup, lookup("l", "x"), nil},
			{"LOOKUP slash in name", 0, pLookup, lookup("", "d/g"), nil},
			{"LOOKUP empty name", 1, pLookup, lookup("", ""), nil},
			{"LOOKUP long name", 0, pLookup, lookup("", strings.Repeat("n", 300)), nil},
			{"LOOKUP in private, unprivileged", 1, pLookup, lookup("private", "p"), nil},
			{"LOOKUP in private, root", 0, pLookup, lookup("private", "p"), nil},
			{"LOOKUP stale dir handle", 1, pLookup, lookup("bad MAC", "f"), nil},
			{"LOOKUP truncated name", 0, pLookup, call((&enc{}).opaque(fh[""]).u32(10)), nil},
		}},
		{steps: []diffStep{
			{"ACCESS file all", 0, pAccess, access("f", 0x3f), nil},
			{"ACCESS file all, unprivileged", 1, pAccess, access("f", 0x3f), nil},
			{"ACCESS dir all, unprivileged", 1, pAccess, access("d", 0x3f), nil},
			{"ACCESS secret, unprivileged", 1, pAccess, access("secret", 0x1), nil},
			{"ACCESS private, unprivileged", 1, pAccess, access("private", 0x3f), nil},
			{"ACCESS symlink", 0, pAccess, access("l", 0x3f), nil},
			{"ACCESS no bits", 0, pAccess, access("f", 0), nil},
			{"ACCESS unknown bits", 1, pAccess, access("f", 0xffffffff), nil},
			{"ACCESS bad handle", 0, pAccess, access("zeros", 1), nil},
		}},
		{steps: []diffStep{
			{"READ", 0, pRead, read("f", 0, 4096), nil},
			{"READ unprivileged", 1, pRead, read("f", 100, 100), nil},
			{"READ short at end", 0, pRead, read("f", 9990, 100), nil},
			{"READ at end", 1, pRead, read("f", 10000, 100), nil},
			{"READ past end", 0, pRead, read("f", 1<<40, 100), nil},
			{"READ count 0", 0, pRead, read("f", 0, 0), nil},
			{"READ huge count", 1, pRead, read("f", 0, 1<<31), nil},
			{"READ empty file", 0, pRead, read("empty", 0, 10), nil},
			{"READ directory", 0, pRead, read("d", 0, 10), nil},
			{"READ symlink", 1, pRead, read("l", 0, 10), nil},
			{"READ secret, unprivileged", 1, pRead, read("secret", 0, 10), nil},
			{"READ secret, root", 0, pRead, read("secret", 0, 10), nil},
			{"READ bad handle", 0, pRead, read("bad MAC", 0, 10), nil},
			{"READ no count", 1, pRead, call((&enc{}).opaque(fh["f"]).u64(0)), nil},
		}},
		{steps: []diffStep{
			{"READ 1 MiB, cached", 0, pRead, read("big", 0, 1<<20), nil},
			{"READ 64 KiB, cached, unprivileged", 1, pRead, read("big", 12345, 64<<10), nil},
			{"READ 1 MiB to the end, cached", 0, pRead, read("big", 1<<20+1000, 1<<20), nil},
			{"READ 1 MiB past the end", 0, pRead, read("big", 3<<20, 1<<20), nil},
		}},
		{before: func() {
			if !servertest.Evict(t, filepath.Join(e.dir, "big")) {
				t.Log("the pages of big could not be dropped: its READs below are cached too")
			}
		}, steps: []diffStep{
			{"READ 1 MiB from the disk", 0, pRead, read("big", 1<<20, 1<<20), nil},
		}},
		{mutates: true, steps: []diffStep{
			{"WRITE unstable", 0, pWrite, write("f", 0, 0, "SEMFS"), nil},
			{"WRITE data sync", 0, pWrite, write("f", 16, 1, "FAST "), nil},
			{"WRITE file sync", 0, pWrite, write("f", 32, 2, "PATH "), nil},
			{"WRITE empty", 0, pWrite, write("f", 0, 2, ""), nil},
			{"WRITE bad stable", 0, pWrite, write("f", 0, 3, "x"), nil},
			{"WRITE directory", 0, pWrite, write("d", 0, 2, "x"), nil},
			{"WRITE symlink", 0, pWrite, write("l", 0, 2, "x"), nil},
			{"WRITE bad handle", 0, pWrite, write("zeros", 0, 2, "x"), nil},
			{"WRITE unprivileged to a 0644 file", 1, pWrite, write("f", 0, 2, "x"), nil},
			{"WRITE count under data", 0, pWrite, call((&enc{}).opaque(fh["f"]).u64(48).u32(2).u32(2).opaque([]byte("ab-ignored"))), nil},
			{"WRITE count over data", 0, pWrite, call((&enc{}).opaque(fh["f"]).u64(48).u32(9).u32(2).opaque([]byte("ab"))), nil},
			{"WRITE offset past 2^62", 0, pWrite, write("f", 1<<62+1, 2, "x"), nil},
			{"COMMIT", 0, pCommit, commit("f"), nil},
			{"COMMIT directory", 0, pCommit, commit("d"), nil},
			{"COMMIT bad handle", 0, pCommit, commit("zeros"), nil},
		}},
		{steps: []diffStep{
			{"GETATTR after writes", 0, pGetattr, getattr("f"), nil},
			{"READ after writes", 1, pRead, read("f", 0, 64), nil},
		}},
		{steps: []diffStep{
			{"READDIRPLUS root", 0, pReaddirplus, rdp("", 0, 0, 65536, 65536), nil},
			{"READDIRPLUS d, first page", 0, pReaddirplus, rdp("d", 0, 0, 65536, 65536), lastPage},
			{"READDIRPLUS file", 1, pReaddirplus, rdp("f", 0, 0, 65536, 65536), nil},
			{"READDIRPLUS private, unprivileged", 1, pReaddirplus, rdp("private", 0, 0, 65536, 65536), nil},
			{"READDIRPLUS small dircount", 0, pReaddirplus, rdp("d", 0, 0, 100, 65536), nil},
			{"READDIRPLUS small maxcount", 1, pReaddirplus, rdp("d", 0, 0, 65536, 100), nil},
			{"READDIRPLUS bad handle", 0, pReaddirplus, rdp("bad MAC", 0, 0, 65536, 65536), nil},
		}},
		{steps: []diffStep{
			{"READDIRPLUS d, next page", 0, pReaddirplus, nextPage("d"), nil},
			{"READDIRPLUS d, unknown verifier", 0, pReaddirplus, rdp("d", 5, 0x1234, 65536, 65536), nil},
		}},
		// Another connection renames d away and makes a new d/g, and removes
		// gone: every handle still names its own file, or is STALE.
		{before: func() {
			if st, _ := other.call(pRename, (&enc{}).dirop(fh[""], "d").dirop(fh[""], "d-moved")); st != sOK {
				t.Fatalf("rename d: %d", st)
			}
			if st, _ := other.mkdir(fh[""], "d"); st != sOK {
				t.Fatalf("mkdir d: %d", st)
			}
			if st, _ := other.call(pRemove, (&enc{}).dirop(fh[""], "gone")); st != sOK {
				t.Fatalf("remove gone: %d", st)
			}
			must(os.WriteFile(filepath.Join(e.dir, "d", "g"), []byte("another file"), 0o644))
		}, steps: []diffStep{
			{"GETATTR renamed dir", 0, pGetattr, getattr("d"), nil},
			{"GETATTR file in renamed dir", 1, pGetattr, getattr("d/g"), nil},
			{"READ file in renamed dir", 0, pRead, read("d/g", 0, 100), nil},
			{"LOOKUP in renamed dir", 1, pLookup, lookup("d", "entry-07"), nil},
			{"ACCESS renamed dir", 0, pAccess, access("d", 0x3f), nil},
			{"READDIRPLUS renamed dir, next page", 0, pReaddirplus, nextPage("d"), nil},
			{"GETATTR removed", 1, pGetattr, getattr("gone"), nil},
			{"READ removed", 0, pRead, read("gone", 0, 10), nil},
			{"LOOKUP removed", 1, pLookup, lookup("", "gone"), nil},
			{"ACCESS removed", 0, pAccess, access("gone", 1), nil},
			{"READDIRPLUS removed", 1, pReaddirplus, rdp("gone", 0, 0, 65536, 65536), nil},
			{"COMMIT removed", 0, pCommit, commit("gone"), nil},
		}},
		{mutates: true, steps: []diffStep{
			// A READ in progress sends the CREATEs after it to the
			// connection's workers (workers.go) on the fast side.
			{"READ beside creates", 0, pRead, read("f", 0, 8192), nil},
			{"CREATE unchecked, mode 0644", 0, pCreate, create("", "new1", 0, 0o644), nil},
			{"CREATE unchecked, mode 0600", 0, pCreate, create("", "new2", 0, 0o600), nil},
			{"CREATE unchecked, nothing set", 0, pCreate, create("", "new3", 0, -1), nil},
			{"CREATE guarded", 0, pCreate, create("", "new4", 1, 0o644), nil},
			{"CREATE exclusive", 0, pCreate, create("", "new5", 2, 0x1234567890), nil},
			{"CREATE unchecked, existing file", 0, pCreate, create("", "old", 0, 0o644), nil},
			{"CREATE guarded, existing file", 0, pCreate, create("", "old", 1, 0o644), nil},
			{"CREATE exclusive, existing file", 0, pCreate, create("", "old", 2, 77), nil},
			{"CREATE existing directory", 0, pCreate, create("", "sub", 0, 0o644), nil},
			{"CREATE in a file", 0, pCreate, create("/old", "x", 0, 0o644), nil},
			{"CREATE unprivileged", 1, pCreate, create("", "new6", 0, 0o640), nil},
			{"CREATE unprivileged in private", 1, pCreate, call((&enc{}).dirop(fh["private"], "x").u32(0).sattr(0o644)), nil},
			{"CREATE bad handle", 0, pCreate, call((&enc{}).dirop(fh["zeros"], "x").u32(0).sattr(0o644)), nil},
			{"CREATE slash in name", 0, pCreate, create("", "a/b", 0, 0o644), nil},
			{"CREATE dotdot", 0, pCreate, create("", "..", 0, 0o644), nil},
			{"CREATE empty name", 1, pCreate, create("", "", 0, 0o644), nil},
			{"CREATE bad how", 0, pCreate, call((&enc{}).dirop(fh["c0"], "x").u32(3)), nil},
			{"CREATE truncated sattr", 0, pCreate, call((&enc{}).dirop(fh["c0"], "x").u32(0).u32(1)), nil},
			{"CREATE setting size", 0, pCreate, createWith("new7", (&enc{}).u32(1).u32(0o644).u32(0).u32(0).u32(1).u64(3).u32(0).u32(0)), nil},
		}},
		{mutates: true, steps: []diffStep{
			{"CREATE exclusive, retransmitted", 0, pCreate, create("", "new5", 2, 0x1234567890), nil},
			{"CREATE guarded, now existing", 1, pCreate, create("", "new4", 1, 0o644), nil},
		}},
		{mutates: true, steps: []diffStep{
			{"WRITE file in renamed dir", 0, pWrite, write("d/g", 0, 2, "G"), nil},
			{"WRITE removed", 1, pWrite, write("gone", 0, 2, "x"), nil},
			{"COMMIT file in renamed dir", 1, pCommit, commit("d/g"), nil},
		}},
		{before: func() {
			if st, _ := other.call(pRename, (&enc{}).dirop(fh[""], "f").dirop(fh[""], "f2")); st != sOK {
				t.Fatalf("rename f: %d", st)
			}
			must(os.WriteFile(filepath.Join(e.dir, "f"), []byte("a new f"), 0o644))
		}, steps: []diffStep{
			{"READ renamed file", 0, pRead, read("f", 0, 16), nil},
			{"GETATTR renamed file", 1, pGetattr, getattr("f"), nil},
			{"LOOKUP the new f", 0, pLookup, lookup("", "f"), nil},
		}},
	}

	xid := uint32(5000)
	for bi, b := range batches {
		if b.before != nil {
			b.before()
		}
		var replies [2][][]byte
		for side := range sides {
			for i, s := range b.steps {
				sides[side][s.conn].sendAt(xid+uint32(i), s.proc, s.args(side))
			}
			// Replies come in any order (RPC allows it: a call the record
			// stream refuses is answered before earlier calls on workers).
			byXid := map[uint32][]byte{}
			for c := range sides[side] {
				for _, s := range b.steps {
					if s.conn == c {
						rec := sides[side][c].recvRaw()
						byXid[binary.BigEndian.Uint32(rec[4:])] = rec
					}
				}
			}
			replies[side] = make([][]byte, len(b.steps))
			for i := range b.steps {
				if replies[side][i] = byXid[xid+uint32(i)]; replies[side][i] == nil {
					t.Fatalf("batch %d, %s: no reply", bi, b.steps[i].name)
				}
			}
			for i, s := range b.steps {
				if s.seen != nil {
					s.seen(side, replies[side][i])
				}
			}
		}
		for i, s := range b.steps {
			want, ok := wants[s.name]
			if !ok {
				t.Errorf("batch %d, %s: no expected answer", bi, s.name)
				continue
			}
			if got := outcome(t, s.proc, replies[0][i]); got != want {
				t.Errorf("batch %d, %s: %s, want %s", bi, s.name, got, want)
			}
		}
		xid += uint32(len(b.steps))
	}
	// The CREATE whose sattr3 set a size as well as the mode.
	if fi, err := os.Lstat(filepath.Join(e.dir, "c0", "new7")); err != nil || fi.Size() != 3 || fi.Mode().Perm() != 0o644 {
		t.Errorf("CREATE setting size: %v (%v), want mode 0644 and size 3", fi, err)
	}
}

// wants are the answers of TestAnswers's steps. Connection 0 calls as root,
// whose calls the core does not check: its ACCESS is granted every bit asked.
var wants = map[string]string{
	"GETATTR root":                       "nfs 0",
	"GETATTR file":                       "nfs 0",
	"GETATTR dir":                        "nfs 0",
	"GETATTR symlink":                    "nfs 0",
	"GETATTR bad MAC":                    "nfs 70",
	"GETATTR zero handle":                "nfs 10001",
	"GETATTR short handle":               "nfs 10001",
	"GETATTR empty handle":               "nfs 10001",
	"GETATTR no arguments":               "rpc 4",
	"LOOKUP file":                        "nfs 0",
	"LOOKUP in dir":                      "nfs 0",
	"LOOKUP missing":                     "nfs 2",
	"LOOKUP dot":                         "nfs 0",
	"LOOKUP dotdot":                      "nfs 0",
	"LOOKUP dotdot at root":              "nfs 13",
	"LOOKUP in a file":                   "nfs 20",
	"LOOKUP in a symlink":                "nfs 20",
	"LOOKUP slash in name":               "nfs 22",
	"LOOKUP empty name":                  "nfs 2",
	"LOOKUP long name":                   "nfs 63",
	"LOOKUP in private, unprivileged":    "nfs 13",
	"LOOKUP in private, root":            "nfs 0",
	"LOOKUP stale dir handle":            "nfs 70",
	"LOOKUP truncated name":              "rpc 4",
	"ACCESS file all":                    "nfs 0 access 0x3f",
	"ACCESS file all, unprivileged":      "nfs 0 access 0x1",
	"ACCESS dir all, unprivileged":       "nfs 0 access 0x3",
	"ACCESS secret, unprivileged":        "nfs 0 access 0x0",
	"ACCESS private, unprivileged":       "nfs 0 access 0x0",
	"ACCESS symlink":                     "nfs 0 access 0x3f",
	"ACCESS no bits":                     "nfs 0 access 0x0",
	"ACCESS unknown bits":                "nfs 0 access 0x1",
	"ACCESS bad handle":                  "nfs 10001",
	"READ":                               "nfs 0 read 4096 eof 0",
	"READ unprivileged":                  "nfs 0 read 100 eof 0",
	"READ short at end":                  "nfs 0 read 10 eof 1",
	"READ at end":                        "nfs 0 read 0 eof 1",
	"READ past end":                      "nfs 0 read 0 eof 1",
	"READ count 0":                       "nfs 0 read 0 eof 0",
	"READ huge count":                    "nfs 0 read 10000 eof 1",
	"READ empty file":                    "nfs 0 read 0 eof 1",
	"READ directory":                     "nfs 21",
	"READ symlink":                       "nfs 22",
	"READ secret, unprivileged":          "nfs 13",
	"READ secret, root":                  "nfs 0 read 9 eof 1",
	"READ bad handle":                    "nfs 70",
	"READ no count":                      "rpc 4",
	"READ 1 MiB, cached":                 "nfs 0 read 1048576 eof 0",
	"READ 64 KiB, cached, unprivileged":  "nfs 0 read 65536 eof 0",
	"READ 1 MiB to the end, cached":      "nfs 0 read 1048576 eof 1",
	"READ 1 MiB past the end":            "nfs 0 read 0 eof 1",
	"READ 1 MiB from the disk":           "nfs 0 read 1048576 eof 0",
	"WRITE unstable":                     "nfs 0",
	"WRITE data sync":                    "nfs 0",
	"WRITE file sync":                    "nfs 0",
	"WRITE empty":                        "nfs 0",
	"WRITE bad stable":                   "rpc 4",
	"WRITE directory":                    "nfs 21",
	"WRITE symlink":                      "nfs 22",
	"WRITE bad handle":                   "nfs 10001",
	"WRITE unprivileged to a 0644 file":  "nfs 13",
	"WRITE count under data":             "rpc 4",
	"WRITE count over data":              "rpc 4",
	"WRITE offset past 2^62":             "nfs 27",
	"COMMIT":                             "nfs 0",
	"COMMIT directory":                   "nfs 0",
	"COMMIT bad handle":                  "nfs 10001",
	"GETATTR after writes":               "nfs 0",
	"READ after writes":                  "nfs 0 read 64 eof 0",
	"READDIRPLUS root":                   "nfs 0",
	"READDIRPLUS d, first page":          "nfs 0",
	"READDIRPLUS file":                   "nfs 20",
	"READDIRPLUS private, unprivileged":  "nfs 13",
	"READDIRPLUS small dircount":         "nfs 10005",
	"READDIRPLUS small maxcount":         "nfs 10005",
	"READDIRPLUS bad handle":             "nfs 70",
	"READDIRPLUS d, next page":           "nfs 0",
	"READDIRPLUS d, unknown verifier":    "nfs 0",
	"GETATTR renamed dir":                "nfs 0",
	"GETATTR file in renamed dir":        "nfs 0",
	"READ file in renamed dir":           "nfs 0 read 8 eof 1",
	"LOOKUP in renamed dir":              "nfs 0",
	"ACCESS renamed dir":                 "nfs 0 access 0x3f",
	"READDIRPLUS renamed dir, next page": "nfs 0",
	"GETATTR removed":                    "nfs 70",
	"READ removed":                       "nfs 70",
	"LOOKUP removed":                     "nfs 2",
	"ACCESS removed":                     "nfs 70",
	"READDIRPLUS removed":                "nfs 70",
	"COMMIT removed":                     "nfs 70",
	"READ beside creates":                "nfs 0 read 8192 eof 0",
	"CREATE unchecked, mode 0644":        "nfs 0",
	"CREATE unchecked, mode 0600":        "nfs 0",
	"CREATE unchecked, nothing set":      "nfs 0",
	"CREATE guarded":                     "nfs 0",
	"CREATE exclusive":                   "nfs 0",
	"CREATE unchecked, existing file":    "nfs 0",
	"CREATE guarded, existing file":      "nfs 17",
	"CREATE exclusive, existing file":    "nfs 17",
	"CREATE existing directory":          "nfs 17",
	"CREATE in a file":                   "nfs 20",
	"CREATE unprivileged":                "nfs 0",
	"CREATE unprivileged in private":     "nfs 13",
	"CREATE bad handle":                  "nfs 10001",
	"CREATE slash in name":               "nfs 22",
	"CREATE dotdot":                      "nfs 22",
	"CREATE empty name":                  "nfs 22",
	"CREATE bad how":                     "rpc 4",
	"CREATE truncated sattr":             "rpc 4",
	"CREATE setting size":                "nfs 0",
	"CREATE exclusive, retransmitted":    "nfs 0",
	"CREATE guarded, now existing":       "nfs 17",
	"WRITE file in renamed dir":          "nfs 0",
	"WRITE removed":                      "nfs 70",
	"COMMIT file in renamed dir":         "nfs 0",
	"READ renamed file":                  "nfs 0 read 16 eof 0",
	"GETATTR renamed file":               "nfs 0",
	"LOOKUP the new f":                   "nfs 0",
}
