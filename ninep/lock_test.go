package ninep_test

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hugelgupf/p9/linux"
)

// lockConn is a raw connection holding fid 2 open read-write on "f".
func lockConn(t *testing.T, e *env) *raw {
	r := dialRaw(t, "tcp", e.tcp)
	r.version(64 << 10)
	if err := r.attach(1, 1, "/", 0); err != nil {
		t.Fatal(err)
	}
	if err := r.walk(1, 2, "f"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.call(msg(tLopen, 1, uint32(2), uint32(2))); err != nil {
		t.Fatal(err)
	}
	return r
}

const (
	rdlck, wrlck, unlck = uint8(0), uint8(1), uint8(2)
	lockOK, lockBlocked = uint8(0), uint8(1)
)

func lock(t *testing.T, r *raw, typ uint8, start, length uint64, pid uint32, client string) uint8 {
	t.Helper()
	body, err := r.call(msg(tLock, 9, uint32(2), typ, uint32(0), start, length, pid, client))
	if err != nil {
		t.Fatalf("Tlock: %v", err)
	}
	return body[0]
}

type held struct {
	typ           uint8
	start, length uint64
	pid           uint32
	client        string
}

func getlock(t *testing.T, r *raw, typ uint8, start, length uint64, pid uint32, client string) held {
	t.Helper()
	body, err := r.call(msg(tGetlock, 9, uint32(2), typ, start, length, pid, client))
	if err != nil {
		t.Fatalf("Tgetlock: %v", err)
	}
	n := binary.LittleEndian.Uint16(body[21:])
	return held{body[0], binary.LittleEndian.Uint64(body[1:]), binary.LittleEndian.Uint64(body[9:]),
		binary.LittleEndian.Uint32(body[17:]), string(body[23 : 23+n])}
}

// TestPOSIXLocks: record locks between two clients follow fcntl semantics,
// F_GETLK reports the conflicting lock, and a client's locks go when it does.
func TestPOSIXLocks(t *testing.T) {
	e := newEnv(t)
	os.WriteFile(filepath.Join(e.export, "f"), make([]byte, 1000), 0o644)
	a, b := lockConn(t, e), lockConn(t, e)

	if st := lock(t, a, wrlck, 0, 100, 1, "hostA"); st != lockOK {
		t.Fatalf("A write [0,100): status %d", st)
	}
	if st := lock(t, b, wrlck, 50, 10, 2, "hostB"); st != lockBlocked {
		t.Fatalf("B write [50,60) over A's: status %d, want blocked", st)
	}
	if st := lock(t, b, rdlck, 50, 10, 2, "hostB"); st != lockBlocked {
		t.Fatalf("B read [50,60) over A's write lock: status %d, want blocked", st)
	}
	if st := lock(t, b, rdlck, 100, 0, 2, "hostB"); st != lockOK {
		t.Fatalf("B read [100,EOF): status %d", st)
	}
	if h := getlock(t, b, wrlck, 0, 0, 2, "hostB"); h != (held{wrlck, 0, 100, 1, "hostA"}) {
		t.Fatalf("B F_GETLK: %+v", h)
	}
	if h := getlock(t, a, wrlck, 0, 0, 1, "hostA"); h != (held{rdlck, 100, 0, 2, "hostB"}) {
		t.Fatalf("A F_GETLK: %+v", h)
	}
	if h := getlock(t, a, rdlck, 0, 100, 1, "hostA"); h != (held{unlck, 0, 100, 1, "hostA"}) {
		t.Fatalf("A F_GETLK read [0,100) (no conflict): %+v", h)
	}
	// A turns the first half of its lock into a read lock: B may now read there.
	if st := lock(t, a, rdlck, 0, 50, 1, "hostA"); st != lockOK {
		t.Fatalf("A downgrade: %d", st)
	}
	if st := lock(t, b, rdlck, 0, 10, 2, "hostB"); st != lockOK {
		t.Fatalf("B read [0,10) after A's downgrade: %d", st)
	}
	if st := lock(t, b, wrlck, 50, 1, 2, "hostB"); st != lockBlocked {
		t.Fatalf("B write at 50 (A still writes [50,100)): %d", st)
	}
	// Another process of A's client is another owner.
	if st := lock(t, a, wrlck, 0, 5, 3, "hostA"); st != lockBlocked {
		t.Fatalf("A pid 3 write [0,5) over B's read lock: %d", st)
	}
	// A unlocks everything; B can write where A was.
	if st := lock(t, a, unlck, 0, 0, 1, "hostA"); st != lockOK {
		t.Fatalf("A unlock: %d", st)
	}
	if st := lock(t, b, wrlck, 50, 50, 2, "hostB"); st != lockOK {
		t.Fatalf("B write [50,100) after A's unlock: %d", st)
	}
	// A client's own flag bits cannot reach the server's F_GETLK path.
	if st := lock(t, a, rdlck, 500, 1, 4, "1"); st != lockOK {
		t.Fatalf("a Tlock with stray flags: %d", st)
	}
	body, err := a.call(msg(tLock, 9, uint32(2), uint8(7), uint32(0), uint64(0), uint64(0), uint32(1), "hostA"))
	if err == nil {
		t.Fatalf("Tlock type 7: %v", body)
	}
	wantErrno(t, "Tlock type 7", err, linux.EINVAL)
	_, err = a.call(msg(tGetlock, 9, uint32(77), wrlck, uint64(0), uint64(0), uint32(1), "hostA"))
	wantErrno(t, "Tgetlock on an unknown fid", err, linux.EBADF)

	// B goes away: its locks are released.
	b.c.Close()
	deadline := time.Now().Add(5 * time.Second)
	for lock(t, a, wrlck, 0, 200, 3, "hostA") != lockOK { // not A pid 4's lock at 500
		if time.Now().After(deadline) {
			t.Fatal("B's locks outlived its connection")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestLockSplit: unlocking the middle of a lock keeps both ends locked.
func TestLockSplit(t *testing.T) {
	e := newEnv(t)
	os.WriteFile(filepath.Join(e.export, "f"), nil, 0o644)
	a, b := lockConn(t, e), lockConn(t, e)
	if lock(t, a, wrlck, 0, 100, 1, "A") != lockOK || lock(t, a, unlck, 20, 10, 1, "A") != lockOK {
		t.Fatal("lock, partial unlock")
	}
	for _, c := range []struct {
		start uint64
		want  uint8
	}{{19, lockBlocked}, {20, lockOK}, {29, lockOK}, {30, lockBlocked}, {99, lockBlocked}, {100, lockOK}} {
		if st := lock(t, b, rdlck, c.start, 1, 2, "B"); st != c.want {
			t.Errorf("B read at %d: status %d, want %d", c.start, st, c.want)
		}
	}
	if h := getlock(t, b, wrlck, 25, 20, 2, "B"); h != (held{wrlck, 30, 70, 1, "A"}) {
		t.Fatalf("F_GETLK [25,45): %+v", h)
	}
}

// TestLockTableBounded: a client fragmenting its locks without end gets ENOLCK
// once a file holds 4,096 ranges; unlocking still works.
func TestLockTableBounded(t *testing.T) {
	e := newEnv(t)
	os.WriteFile(filepath.Join(e.export, "f"), nil, 0o644)
	a := lockConn(t, e)
	for i := uint64(0); i < 4096; i++ {
		if st := lock(t, a, rdlck, 2*i, 1, 1, "A"); st != lockOK {
			t.Fatalf("range %d: status %d", i, st)
		}
	}
	_, err := a.call(msg(tLock, 9, uint32(2), rdlck, uint32(0), uint64(2*4096), uint64(1), uint32(1), "A"))
	wantErrno(t, "lock past the bound", err, linux.ENOLCK)
	if st := lock(t, a, unlck, 0, 0, 1, "A"); st != lockOK {
		t.Fatalf("unlock all: %d", st)
	}
	if st := lock(t, a, wrlck, 0, 0, 1, "A"); st != lockOK {
		t.Fatalf("lock after unlock: %d", st)
	}
}

// TestLockCoalesce: adjacent locks of one owner join, so locking a file byte by
// byte does not fill the table, and one unlock in the middle splits them again.
func TestLockCoalesce(t *testing.T) {
	e := newEnv(t)
	os.WriteFile(filepath.Join(e.export, "f"), nil, 0o644)
	a, b := lockConn(t, e), lockConn(t, e)
	for i := uint64(0); i < 5000; i++ {
		if st := lock(t, a, wrlck, i, 1, 1, "A"); st != lockOK {
			t.Fatalf("byte %d: status %d", i, st)
		}
	}
	if h := getlock(t, b, rdlck, 0, 0, 2, "B"); h != (held{wrlck, 0, 5000, 1, "A"}) {
		t.Fatalf("F_GETLK: %+v", h)
	}
	lock(t, a, unlck, 100, 1, 1, "A")
	if st := lock(t, b, rdlck, 100, 1, 2, "B"); st != lockOK {
		t.Fatalf("B at the unlocked byte: %d", st)
	}
	if st := lock(t, b, rdlck, 101, 1, 2, "B"); st != lockBlocked {
		t.Fatalf("B next to it: %d", st)
	}
}
