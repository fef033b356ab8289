package nfs_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math/rand"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/semfs/semfs/nfs"
	"github.com/semfs/semfs/server"
)

// Hostile-wire tests: raw bytes a local process could send, and the replies
// and connection behaviour RFC 5531 and RFC 1813 call for.

// RPC reply codes (RFC 5531).
const (
	acceptSuccess      = 0
	acceptProgUnavail  = 1
	acceptProgMismatch = 2
	acceptProcUnavail  = 3
	acceptGarbageArgs  = 4
	rejectRPCMismatch  = 0
	rejectAuthError    = 1
	sBadType           = 10007
)

// callHeader starts a call record body with AUTH_NONE credentials.
func callHeader(xid, prog, vers, proc uint32) *enc {
	return (&enc{}).u32(xid).u32(0).u32(2).u32(prog).u32(vers).u32(proc).u32(0).u32(0).u32(0).u32(0)
}

// unixHeader starts a call record body with the AUTH_UNIX credential cred.
func unixHeader(xid, prog, vers, proc uint32, cred []byte) *enc {
	return (&enc{}).u32(xid).u32(0).u32(2).u32(prog).u32(vers).u32(proc).u32(1).opaque(cred).u32(0).u32(0)
}

func record(body []byte) []byte {
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(body))|1<<31), body...)
}

// rpcReply is one reply as it came off the wire.
type rpcReply struct {
	xid      uint32
	accepted bool   // MSG_ACCEPTED (else MSG_DENIED)
	stat     uint32 // accept_stat or reject_stat
	d        *dec   // what follows stat
}

// readReply reads one reply record from c; an error means the connection
// ended (or did not answer within the failure bound).
func readReply(t *testing.T, c net.Conn) (rpcReply, error) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	var mark [4]byte
	if _, err := io.ReadFull(c, mark[:]); err != nil {
		return rpcReply{}, err
	}
	b := make([]byte, binary.BigEndian.Uint32(mark[:])&^(1<<31))
	if _, err := io.ReadFull(c, b); err != nil {
		return rpcReply{}, err
	}
	d := &dec{t: t, b: b}
	r := rpcReply{xid: d.u32()}
	if d.u32() != 1 {
		t.Fatalf("not a reply")
	}
	r.accepted = d.u32() == 0
	if r.accepted {
		d.u32() // verifier
		d.opaque()
	}
	r.stat = d.u32()
	r.d = d
	return r, nil
}

// expectEOF says the server closed c (within a generous failure bound).
func expectEOF(t *testing.T, c net.Conn, what string) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	b := make([]byte, 512)
	for {
		_, err := c.Read(b)
		if err == nil {
			continue // a reply sent before the close
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatalf("%s: the server kept the connection open", what)
		}
		return
	}
}

// TestHugeLengthsRefused sends, for every NFSv3 and MOUNT procedure, a call
// whose handle, name, path or data length says ~4 GiB (issue 11: one 84-byte
// GETATTR made the daemon allocate 4 GiB), and calls with other arguments out
// of bounds. Each is answered GARBAGE_ARGS with its xid, the connection goes
// on, and the server's heap does not balloon.
func TestHugeLengthsRefused(t *testing.T) {
	e := newEnv(t)
	c, root := e.client("/@notes")
	huge := uint32(0xfffffff0)
	cred := (&enc{}).u32(1).str("semfs-test").u32(1000).u32(1000).u32(1).u32(1000).b

	type call struct {
		name string
		prog uint32
		vers uint32
		proc uint32
		args []byte
	}
	var calls []call
	for proc := uint32(1); proc <= pCommit; proc++ {
		// Every NFSv3 procedure's arguments start with a file handle.
		calls = append(calls, call{"handle", progNFS, 3, proc, (&enc{}).u32(huge).u32(0).u32(0).b})
	}
	nameLen := func(proc uint32, pre *enc) call {
		return call{"name", progNFS, 3, proc, pre.u32(huge).u32(0).b}
	}
	for _, proc := range []uint32{pLookup, pCreate, pMkdir, pSymlink, pMknod, pRemove, pRmdir, pRename} {
		calls = append(calls, nameLen(proc, (&enc{}).opaque(root)))
	}
	long := strings.Repeat("n", 4097) // 256 to 4096 bytes: NAMETOOLONG (TestNameTooLong)
	calls = append(calls,
		nameLen(pLink, (&enc{}).opaque(root).opaque(root)),
		nameLen(pRename, (&enc{}).dirop(root, "a").opaque(root)),
		call{"4097-byte name", progNFS, 3, pLookup, (&enc{}).dirop(root, long).b},
		call{"4097-byte name", progNFS, 3, pCreate, (&enc{}).dirop(root, long).u32(0).sattr(0o644).b},
		call{"symlink path", progNFS, 3, pSymlink, (&enc{}).dirop(root, "l").sattr(-1).u32(huge).b},
		call{"symlink path 4097", progNFS, 3, pSymlink, (&enc{}).dirop(root, "l").sattr(-1).str(strings.Repeat("p", 4097)).b},
		call{"write data", progNFS, 3, pWrite, (&enc{}).opaque(root).u64(0).u32(huge).u32(0).u32(huge).b},
		call{"write count != data", progNFS, 3, pWrite, (&enc{}).opaque(root).u64(0).u32(4).u32(0).str("12345678").b},
		call{"write over wtmax", progNFS, 3, pWrite, (&enc{}).opaque(root).u64(0).u32(2 << 20).u32(0).opaque(make([]byte, 2<<20)).b},
		call{"write stable_how", progNFS, 3, pWrite, (&enc{}).opaque(root).u64(0).u32(1).u32(9).str("x").b},
		call{"sattr bool", progNFS, 3, pSetattr, (&enc{}).opaque(root).u32(2).u32(0).u32(0).u32(0).u32(0).u32(0).u32(0).b},
		call{"time_how", progNFS, 3, pSetattr, (&enc{}).opaque(root).u32(0).u32(0).u32(0).u32(0).u32(7).u32(0).u32(0).b},
		call{"create mode", progNFS, 3, pCreate, (&enc{}).dirop(root, "c").u32(3).b},
		call{"mknod type", progNFS, 3, pMknod, (&enc{}).dirop(root, "m").u32(99).b},
		call{"truncated", progNFS, 3, pRead, (&enc{}).opaque(root).u64(0).b},
		call{"mount dirpath", progMount, 3, 1, (&enc{}).u32(huge).u32(0).b},
		call{"mount dirpath 1025", progMount, 3, 1, (&enc{}).str("/" + strings.Repeat("d", 1024)).b},
		call{"umount dirpath", progMount, 3, 3, (&enc{}).u32(huge).b},
	)

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i, cl := range calls {
		xid := uint32(5000 + i)
		body := unixHeader(xid, cl.prog, cl.vers, cl.proc, cred)
		body.b = append(body.b, cl.args...)
		if _, err := c.c.Write(record(body.b)); err != nil {
			t.Fatal(err)
		}
		r, err := readReply(t, c.c)
		if err != nil {
			t.Fatalf("%s (proc %d): %v", cl.name, cl.proc, err)
		}
		if r.xid != xid || !r.accepted || r.stat != acceptGarbageArgs {
			t.Errorf("%s (prog %d proc %d): xid %d accepted %v stat %d, want GARBAGE_ARGS for xid %d",
				cl.name, cl.prog, cl.proc, r.xid, r.accepted, r.stat, xid)
		}
	}
	runtime.ReadMemStats(&after)
	// Every call above together is ~3 MiB on the wire (the 2 MiB WRITE); go-nfs
	// used to allocate 4 GiB for each of the first 21.
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 256<<20 {
		t.Errorf("serving the hostile calls allocated %d MiB", grew>>20)
	}
	if st, _ := c.getattr(root); st != sOK {
		t.Fatalf("the connection is unusable after the refusals: %d", st)
	}
}

// TestRPCRefusals: calls for what this server does not serve are answered as
// RFC 5531 says, with their xid, and the connection goes on.
func TestRPCRefusals(t *testing.T) {
	e := newEnv(t)
	c, root := e.client("/@notes")
	badCred := func(cred []byte) []byte { return unixHeader(77, progNFS, 3, pGetattr, cred).opaque(root).b }
	cases := []struct {
		name     string
		body     []byte
		accepted bool
		stat     uint32
		extra    []uint32 // words after stat
	}{
		{"unknown program", callHeader(71, 100099, 1, 0).b, true, acceptProgUnavail, nil},
		{"NFSv2", callHeader(72, progNFS, 2, pGetattr).opaque(root).b, true, acceptProgMismatch, []uint32{3, 3}},
		{"NFSv4", callHeader(73, progNFS, 4, 1).b, true, acceptProgMismatch, []uint32{3, 3}},
		{"MOUNT v4", callHeader(74, progMount, 4, 1).b, true, acceptProgMismatch, []uint32{1, 3}},
		{"NFS proc 22", callHeader(75, progNFS, 3, 22).b, true, acceptProcUnavail, nil},
		{"MOUNT proc 6", callHeader(76, progMount, 3, 6).b, true, acceptProcUnavail, nil},
		{"machine name", badCred((&enc{}).u32(1).u32(0xfffffff0).b), false, rejectAuthError, []uint32{1}},
		{"17 gids", badCred((&enc{}).u32(1).str("h").u32(1).u32(1).u32(17).b), false, rejectAuthError, []uint32{1}},
		{"RPC version 3", (&enc{}).u32(78).u32(0).u32(3).u32(progNFS).u32(3).u32(0).u32(0).u32(0).u32(0).u32(0).b, false, rejectRPCMismatch, []uint32{2, 2}},
	}
	for _, tc := range cases {
		xid := binary.BigEndian.Uint32(tc.body)
		if _, err := c.c.Write(record(tc.body)); err != nil {
			t.Fatal(err)
		}
		r, err := readReply(t, c.c)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if r.xid != xid || r.accepted != tc.accepted || r.stat != tc.stat {
			t.Errorf("%s: xid %d accepted %v stat %d, want xid %d accepted %v stat %d", tc.name, r.xid, r.accepted, r.stat, xid, tc.accepted, tc.stat)
			continue
		}
		for _, w := range tc.extra {
			if got := r.d.u32(); got != w {
				t.Errorf("%s: reply word %d, want %d", tc.name, got, w)
			}
		}
	}
	if st, _ := c.getattr(root); st != sOK {
		t.Fatalf("the connection is unusable after the refusals: %d", st)
	}
}

// TestFragmentedCall: a call split into several fragments (RFC 5531 record
// marking; go-nfs refuses them) is reassembled and served.
func TestFragmentedCall(t *testing.T) {
	e := newEnv(t)
	c, root := e.client("/@notes")
	body := callHeader(91, progNFS, 3, pGetattr).opaque(root).b
	var stream []byte
	for i, part := range [][]byte{body[:5], body[5:40], {}, body[40:]} {
		m := uint32(len(part))
		if i == 3 {
			m |= 1 << 31
		}
		stream = append(binary.BigEndian.AppendUint32(stream, m), part...)
	}
	c.c.Write(stream)
	d := c.recv(91)
	if st := d.u32(); st != sOK {
		t.Fatalf("fragmented GETATTR: %d", st)
	}
}

// TestHostileStreamsClosed opens connections that send a broken record stream
// and hang up, or send one the server cannot read and must drop: every one of
// them is closed, and the server's connections and goroutines return to
// where they were (issue 11: they stayed in CLOSE-WAIT forever).
func TestHostileStreamsClosed(t *testing.T) {
	e := newEnv(t)
	c, root := e.client("/@notes")
	if st, _ := c.getattr(root); st != sOK {
		t.Fatal(st)
	}
	rng := rand.New(rand.NewSource(11))
	random := make([]byte, 64)
	rng.Read(random)
	hdr := callHeader(1, progNFS, 3, pGetattr).b
	kinds := []struct {
		name   string
		stream []byte
		drops  bool // the server closes it without waiting for the hang-up
	}{
		{"fragment without last bit", append(binary.BigEndian.AppendUint32(nil, uint32(len(hdr))), hdr...), false},
		{"truncated record", append(binary.BigEndian.AppendUint32(nil, 200|1<<31), hdr...), false},
		{"half a record mark", []byte{0x80, 0}, false},
		{"random bytes", random, false},
		{"record over 4 MiB", binary.BigEndian.AppendUint32(nil, 0x7fffffff|1<<31), true},
		{"a reply, not a call", record((&enc{}).u32(1).u32(1).u32(0).u32(0).u32(0).u32(0).u32(0).u32(0).u32(0).u32(0).b), true},
		{"credentials over 400 bytes", record((&enc{}).u32(1).u32(0).u32(2).u32(progNFS).u32(3).u32(1).u32(1).u32(0xfffffff0).u32(0).u32(0).b), true},
		{"short header", record((&enc{}).u32(1).u32(0).u32(2).b), true},
		{"endless empty fragments", bytes.Repeat([]byte{0, 0, 0, 0}, 100), true},
	}
	const perKind = 8
	baseConns := 1 // c
	if n := e.srv.WaitConns(baseConns, 20*time.Second); n != baseConns {
		t.Fatalf("%d connections before the test, want %d", n, baseConns)
	}
	baseGoroutines := runtime.NumGoroutine()
	var conns []net.Conn
	for _, k := range kinds {
		for i := 0; i < perKind; i++ {
			hc, err := net.Dial("tcp", e.addr)
			if err != nil {
				t.Fatal(err)
			}
			defer hc.Close()
			if _, err := hc.Write(k.stream); err != nil {
				t.Fatal(err)
			}
			if k.drops {
				expectEOF(t, hc, k.name)
			}
			conns = append(conns, hc)
		}
	}
	for _, hc := range conns {
		hc.Close()
	}
	if n := e.srv.WaitConns(baseConns, 20*time.Second); n != baseConns {
		t.Fatalf("%d connections open after the hostile ones hung up, want %d", n, baseConns)
	}
	// The connections' goroutines (go-nfs's reader and writer, ours) end
	// once they are closed; wait for them with a generous bound.
	deadline := time.Now().Add(20 * time.Second)
	for runtime.NumGoroutine() > baseGoroutines+2 && time.Now().Before(deadline) {
		runtime.Gosched()
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > baseGoroutines+2 {
		t.Fatalf("%d goroutines after the hostile connections closed, %d before", n, baseGoroutines)
	}
	if st, _ := c.getattr(root); st != sOK {
		t.Fatalf("the server stopped serving: %d", st)
	}
}

// TestIdleTimeout: a connection with no call in progress is closed after the
// idle timeout; NFS clients reconnect.
func TestIdleTimeout(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "export")
	os.Mkdir(dir, 0o755)
	e := newEnvWith(t, dir, func(o *nfs.Options) {
		o.Limits = server.Limits{IdleTimeout: 200 * time.Millisecond, BodyTimeout: time.Hour}
	})
	c, root := e.client("/@notes")
	if st, _ := c.getattr(root); st != sOK {
		t.Fatal(st)
	}
	expectEOF(t, c.c, "idle connection")
	if n := e.srv.WaitConns(0, 20*time.Second); n != 0 {
		t.Fatalf("%d connections open", n)
	}
	c2, root2 := e.client("/@notes")
	if st, _ := c2.getattr(root2); st != sOK {
		t.Fatalf("reconnect: %d", st)
	}
}

// TestBodyTimeout: a record whose first byte arrived must arrive whole within
// the body timeout, or the connection is closed; an idle connection is not
// held to it.
func TestBodyTimeout(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "export")
	os.Mkdir(dir, 0o755)
	e := newEnvWith(t, dir, func(o *nfs.Options) {
		o.Limits = server.Limits{IdleTimeout: time.Hour, BodyTimeout: 200 * time.Millisecond}
	})
	idle, root := e.client("/@notes")
	whole := record(callHeader(1, progNFS, 3, 0).b) // NULL
	for _, partial := range [][]byte{
		{0x80}, // a record mark's first byte
		record(callHeader(1, progNFS, 3, 1).b)[:30], // half a header
		// A whole call, then half of the next in the same write: the
		// second is held to the body timeout though the first needed none.
		append(slices.Clip(whole), record(callHeader(2, progNFS, 3, 1).b)[:30]...),
		append(slices.Clip(whole), 0x80, 0, 0),
	} {
		slow := dialRaw(t, e.addr)
		slow.c.Write(partial)
		expectEOF(t, slow.c, "dribbled record")
	}
	// idle has been waiting longer than the body timeout by now.
	if st, _ := idle.getattr(root); st != sOK {
		t.Fatalf("idle connection: %d", st)
	}
}

// TestMaxConns: connections over the cap are accepted and closed at once, the
// refusals are logged (not once each), and a slot freed is usable again.
func TestMaxConns(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "export")
	os.Mkdir(dir, 0o755)
	e := newEnvWith(t, dir, func(o *nfs.Options) { o.Limits = server.Limits{MaxConns: 2} })
	a, _ := e.client("/@notes")
	b, rootB := e.client("/@notes")
	for i := 0; i < 5; i++ {
		over := dialRaw(t, e.addr)
		expectEOF(t, over.c, "connection over the cap")
	}
	if n := strings.Count(e.log.String(), "connection limit reached"); n != 1 {
		t.Errorf("%d log lines for 5 refused connections, want 1:\n%s", n, e.log.String())
	}
	if st, _ := b.getattr(rootB); st != sOK {
		t.Fatalf("a served connection: %d", st)
	}
	a.c.Close()
	if n := e.srv.WaitConns(1, 20*time.Second); n != 1 {
		t.Fatalf("%d connections after one closed", n)
	}
	c, root := e.client("/@notes")
	if st, _ := c.getattr(root); st != sOK {
		t.Fatalf("a connection in the freed slot: %d", st)
	}
}

// TestUnreadReplies: a client that sends calls but never reads the replies is
// shed once a reply cannot be written within the body timeout, and nothing of
// its connection stays behind.
func TestUnreadReplies(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "export")
	os.Mkdir(dir, 0o755)
	if err := os.WriteFile(filepath.Join(dir, "big"), bytes.Repeat([]byte("x"), 1<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	e := newEnvWith(t, dir, func(o *nfs.Options) {
		o.Limits = server.Limits{IdleTimeout: time.Hour, BodyTimeout: 200 * time.Millisecond}
	})
	c, root := e.client("/@notes")
	_, f, _ := c.lookup(root, "big")
	// 64 MiB of READ replies: far beyond what the socket buffers hold.
	var calls []byte
	for i := 0; i < 64; i++ {
		calls = append(calls, record(callHeader(uint32(100+i), progNFS, 3, pRead).opaque(f).u64(0).u32(1<<20).b)...)
	}
	c.c.SetWriteDeadline(time.Now().Add(20 * time.Second))
	c.c.Write(calls) // may fail once the server gives up: that is the point
	if n := e.srv.WaitConns(0, 20*time.Second); n != 0 {
		t.Fatalf("%d connections open; the one not reading its replies was kept", n)
	}
}

// TestLongSymlinkTarget: a SYMLINK whose call record is over 4 KiB (a target of
// up to PATH_MAX-1 bytes) is created with its exact target (go-nfs read such a
// target short, and the call failed with INVAL), and 4096 bytes is refused.
func TestLongSymlinkTarget(t *testing.T) {
	e := newEnv(t)
	c, root := e.client("/@notes")
	for _, n := range []int{3900, 4000, 4095} {
		target := strings.Repeat("t", n-10) + "/0123456789"[:10]
		name := "l" + strings.Repeat("x", n%7)
		if st, _ := c.call(pSymlink, (&enc{}).dirop(root, name).sattr(-1).str(target)); st != sOK {
			t.Errorf("%d-byte target: status %d", n, st)
			continue
		}
		if got, err := os.Readlink(filepath.Join(e.dir, name)); err != nil || got != target {
			t.Errorf("%d-byte target: on disk %d bytes, %v", n, len(got), err)
		}
	}
	if st, _ := c.call(pSymlink, (&enc{}).dirop(root, "l4096").sattr(-1).str(strings.Repeat("t", 4096))); st == sOK {
		t.Errorf("4096-byte target created")
	}
}
