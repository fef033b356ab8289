package nfs_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"net"
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

// diffStep is one call of a differential sequence. args builds the call for a
// side (0: fast path, 1: go-nfs), so a page request can carry the cookie
// verifier that side's listing got.
type diffStep struct {
	name string
	conn int // which of the side's two connections sends it
	proc uint32
	args func(side int) []byte
	seen func(side int, reply []byte) // nil, or what a later step needs of the reply
}

// diffBatch is sent pipelined: every call on both connections before any reply
// is read. mutates says the batch writes, so the two sides' replies carry
// different times (each side's WRITE happened at its own moment).
type diffBatch struct {
	steps   []diffStep
	mutates bool
	before  func() // runs once, before both sides: another connection's renames and removals
}

// normalise clears what is allowed to differ between the two sides' reply to
// the same call, and nothing else: the cookie verifier of a new listing (a
// random id of the listing's snapshot on either path, see the package doc),
// atime (a READ moves it, so the side that reads second sees the first side's
// read), and, for a batch that writes, mtime and ctime.
func normalise(t *testing.T, proc uint32, rec []byte, times bool) []byte {
	t.Helper()
	b := append([]byte(nil), rec...)
	d := &dec{t: t, b: b, off: 4}
	d.u32() // xid
	if d.u32() != 1 || d.u32() != 0 {
		return b // not an accepted reply: compared as is
	}
	d.u32()
	d.opaque()
	if d.u32() != 0 {
		return b
	}
	zero := func(off, n int) {
		if times {
			clear(b[off : off+n])
		}
	}
	fattr := func() {
		if proc == pCreate {
			clear(b[d.off+52 : d.off+60]) // fileid: each side creates in its own directory
		}
		clear(b[d.off+60 : d.off+68]) // atime: the first side's READ moved it
		zero(d.off+68, 16)            // mtime, ctime
		d.skip(84)
	}
	postOp := func() {
		if d.u32() == 1 {
			fattr()
		}
	}
	wcc := func() {
		if d.u32() == 1 {
			zero(d.off+8, 16) // pre-op mtime, ctime
			d.skip(24)
		}
		postOp()
	}
	st := d.u32()
	switch proc {
	case pGetattr:
		if st == sOK {
			fattr()
		}
	case pLookup:
		if st == sOK {
			d.opaque()
			postOp()
		}
		postOp()
	case pAccess, pRead:
		postOp()
	case pWrite, pCommit:
		wcc()
	case pCreate:
		if st == sOK && d.u32() == 1 {
			n := int(d.u32())
			clear(b[d.off : d.off+n]) // the new file's handle (its inode)
			d.skip((n + 3) &^ 3)
			postOp()
		}
		wcc()
	case pReaddirplus:
		postOp()
		if st != sOK {
			break
		}
		clear(b[d.off : d.off+8]) // cookie verifier
		d.skip(8)
		for d.u32() == 1 {
			d.u64()
			d.opaque()
			d.u64()
			postOp()
			if d.u32() == 1 {
				d.opaque()
			}
		}
	}
	return b
}

// TestFastPathAnswersAsGoNFS holds the NFS fast path (fastpath.go) to go-nfs:
// one Server serves the same tree on two listeners, one with the fast path and
// one where go-nfs answers every call, and each side gets the same calls on two
// connections of its own (one as root, one as an unprivileged uid), pipelined,
// with renames and removals made in between on a third connection. Every
// procedure the fast path answers (GETATTR, LOOKUP, ACCESS, READ, WRITE,
// READDIRPLUS, COMMIT) is sent with good and bad arguments, and the replies
// must be equal byte for byte, but for the differences the package doc lists.
func TestFastPathAnswersAsGoNFS(t *testing.T) {
	e := newEnv(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go e.srv.ServeLibrary(ln)
	libAddr := ln.Addr().String()

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
	// CREATE: each side creates in a directory of its own (c0, c1), alike.
	for _, c := range []string{"c0", "c1"} {
		must(os.Mkdir(filepath.Join(e.dir, c), 0o777))
		must(os.Chmod(filepath.Join(e.dir, c), 0o777))
		must(os.WriteFile(filepath.Join(e.dir, c, "old"), []byte("old"), 0o644))
		must(os.Mkdir(filepath.Join(e.dir, c, "sub"), 0o755))
	}

	// Handles, the same for both listeners (one Server).
	setup, root := e.client("/")
	setup.as(0, 0)
	fh := map[string][]byte{"": root}
	for _, p := range []string{"f", "big", "secret", "empty", "d", "private", "l", "gone", "d/g", "d/entry-07", "private/p", "c0", "c1", "c0/old", "c1/old"} {
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

	var sides [2][2]*rawClient
	for side, addr := range []string{e.addr, libAddr} {
		sides[side][0] = dialRaw(t, addr).as(0, 0)
		sides[side][1] = dialRaw(t, addr).as(4242, 4242)
	}
	other := dialRaw(t, libAddr).as(0, 0) // renames and removals between batches

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
	// A listing's verifier, per side, for a later page (at cookie 12: the
	// pages' ends differ by design, see the package doc).
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
			// go-nfs's on both paths: sattr3 sets more than the mode.
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
			// stream refuses is answered before go-nfs's earlier replies).
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
			got := normalise(t, s.proc, replies[0][i], b.mutates)
			want := normalise(t, s.proc, replies[1][i], b.mutates)
			if !bytes.Equal(got, want) {
				t.Errorf("batch %d, %s: fast path replied (%d bytes)\n  %x\ngo-nfs replied (%d bytes)\n  %x", bi, s.name, len(got), head(got), len(want), head(want))
			}
		}
		xid += uint32(len(b.steps))
	}
}

func head(b []byte) []byte { return b[:min(len(b), 160)] }
