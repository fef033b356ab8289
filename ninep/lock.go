package ninep

import (
	"math"
	"sync"

	"github.com/hugelgupf/p9/linux"
	"github.com/hugelgupf/p9/p9"
)

// POSIX record locks (fcntl F_SETLK/F_SETLKW/F_GETLK; Linux's v9fs also sends
// flock as whole-file record locks) are kept by the server in memory, shared by
// every connection, and coordinate 9P clients with each other.
//
// A lock's owner is a process (proc_id) of one client (client_id) on one
// connection. The Linux client takes every lock locally first, so between the
// processes of one mount its kernel already decides; the table decides between
// mounts and machines. Nothing here guesses: a request that conflicts with a lock
// of another owner is refused (P9_LOCK_BLOCKED; the client turns it into EAGAIN or
// retries F_SETLKW), an unlock releases exactly the owner's own ranges, and a
// connection that ends releases all its locks. Locks are not visible to NFS
// clients or host processes (go-nfs has no NLM).

type lockOwner struct {
	conn   uint64
	client string
	pid    int32
}

type lockRange struct {
	owner      lockOwner
	write      bool
	start, end uint64 // inclusive; end == math.MaxUint64 reaches end of file
}

type fileKey struct{ dev, ino uint64 }

// maxRangesPerFile bounds the table's memory per file against a client that
// fragments its locks without end; past it a request that would add ranges gets
// ENOLCK, as fcntl does when the kernel's lock table is full.
const maxRangesPerFile = 4096

type lockTable struct {
	mu    sync.Mutex
	files map[fileKey][]lockRange
}

func newLockTable() *lockTable { return &lockTable{files: map[fileKey][]lockRange{}} }

// span converts a 9P start and length (0 = to end of file) to an inclusive range.
func span(start, length uint64) (uint64, uint64) {
	if length == 0 || start+length-1 < start {
		return start, math.MaxUint64
	}
	return start, start + length - 1
}

// conflict returns a lock of another owner that a request for [start,end]
// (write or read) would collide with.
func (t *lockTable) conflict(k fileKey, o lockOwner, write bool, start, end uint64) (lockRange, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.conflictLocked(k, o, write, start, end)
}

// Precondition: t.mu held.
func (t *lockTable) conflictLocked(k fileKey, o lockOwner, write bool, start, end uint64) (lockRange, bool) {
	for _, r := range t.files[k] {
		if r.owner != o && r.start <= end && start <= r.end && (write || r.write) {
			return r, true
		}
	}
	return lockRange{}, false
}

// set applies a lock request: typ ReadLock or WriteLock takes [start,end] for o
// (replacing o's own locks there) unless another owner's lock conflicts; Unlock
// releases o's locks there. It reports whether the request was granted.
// The table is unchanged unless it was.
func (t *lockTable) set(k fileKey, o lockOwner, typ p9.LockType, start, end uint64) (bool, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	write := typ == p9.WriteLock
	if typ != p9.Unlock {
		if _, busy := t.conflictLocked(k, o, write, start, end); busy {
			return false, nil
		}
	}
	cur := t.files[k]
	own := false
	for _, r := range cur {
		if r.owner == o && touches(r, start, end) {
			own = true
			break
		}
	}
	if !own {
		// Nothing of o's to cut or join: the common case, no copy.
		if typ == p9.Unlock {
			return true, nil
		}
		if len(cur) >= maxRangesPerFile {
			return false, linux.ENOLCK
		}
		t.files[k] = append(cur, lockRange{owner: o, write: write, start: start, end: end})
		return true, nil
	}
	var out []lockRange
	for _, r := range cur {
		if r.owner != o || r.end < start || r.start > end {
			out = append(out, r)
			continue
		}
		// o's own range overlapping the request: keep what lies outside it.
		if r.start < start {
			out = append(out, lockRange{owner: o, write: r.write, start: r.start, end: start - 1})
		}
		if r.end > end {
			out = append(out, lockRange{owner: o, write: r.write, start: end + 1, end: r.end})
		}
	}
	if typ != p9.Unlock {
		// Join o's ranges of the same kind that touch the new one, as POSIX
		// coalesces adjacent locks of one owner.
		n := lockRange{owner: o, write: write, start: start, end: end}
		kept := out[:0]
		for _, r := range out {
			if r.owner == o && r.write == write && touches(r, n.start, n.end) {
				n.start, n.end = min(n.start, r.start), max(n.end, r.end)
				continue
			}
			kept = append(kept, r)
		}
		out = append(kept, n)
	}
	if len(out) > maxRangesPerFile && len(out) > len(cur) {
		return false, linux.ENOLCK
	}
	if len(out) == 0 {
		delete(t.files, k)
	} else {
		t.files[k] = out
	}
	return true, nil
}

// touches reports whether r overlaps [start,end] or is adjacent to it.
func touches(r lockRange, start, end uint64) bool {
	return (start == 0 || r.end >= start-1) && (end == math.MaxUint64 || r.start <= end+1)
}

// releaseConn drops every lock held through connection id.
func (t *lockTable) releaseConn(id uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for k, rs := range t.files {
		out := rs[:0]
		for _, r := range rs {
			if r.owner.conn != id {
				out = append(out, r)
			}
		}
		if len(out) == 0 {
			delete(t.files, k)
		} else {
			t.files[k] = out
		}
	}
}
