package server

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
)

// journal keeps the durable records of files that cannot carry MetaXattr:
// symlinks and FIFOs (Linux refuses user.* attributes on them), files the
// daemon may not write attributes of (a read-only file of an unprivileged
// daemon), records too large for the file system's attribute space, and every
// file on a file system without user attributes. It lives beside the index
// directory, never inside it, so losing the index loses none of it.
//
// It is keyed by file identity (Attr.FileID: inode and birth time), not by
// path, so renames need no entry and hard links share one, as they share an
// attribute. Each line is one JSON object: {"id":N,"m":{…}} sets the record of
// id, {"id":N,"rm":true} drops it (the file's record moved back into its
// attribute). The last record of an id wins. Lines are appended with one write
// each (a SIGKILL keeps every line written; a torn last line, from a power cut,
// is ignored at load); a line for a tag is synced before the tag is committed to
// the index. Records of files that no longer exist are dropped when the daemon
// compacts it at start.
type journal struct {
	path string

	mu     sync.Mutex
	f      *os.File // nil until the first write when the file did not exist
	closed bool
	recs   map[uint64]Meta // the journal's current content
}

type journalLine struct {
	ID uint64          `json:"id"`
	M  json.RawMessage `json:"m,omitempty"`
	RM bool            `json:"rm,omitempty"`
}

// JournalReport says what loading the journal found.
type JournalReport struct {
	Path    string `json:"path"`
	Existed bool   `json:"existed"` // false: created now
	Records int    `json:"records"` // files whose record it holds
	Bad     int    `json:"bad"`     // lines that could not be read (skipped)
}

// openJournal loads the journal at path, creating it if missing.
func openJournal(path string) (*journal, JournalReport, error) {
	rep := JournalReport{Path: path}
	j := &journal{path: path, recs: map[uint64]Meta{}}
	// A missing journal is not created here: the daemon may yet refuse to
	// start because it is missing, and must refuse again next time. The first
	// write or the compaction at start creates it.
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return j, rep, nil
	}
	if err != nil {
		return nil, rep, err
	}
	rep.Existed = true
	r := bufio.NewReader(f)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			if line[len(line)-1] != '\n' {
				// A torn last line (power cut mid-write): nothing acknowledged
				// depended on it, since a synced line ends in '\n'.
				rep.Bad++
				break
			}
			if !j.apply(bytes.TrimSpace(line)) {
				rep.Bad++
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			f.Close()
			return nil, rep, err
		}
	}
	j.f = f
	rep.Records = len(j.recs)
	return j, rep, nil
}

func (j *journal) apply(line []byte) bool {
	if len(line) == 0 {
		return true
	}
	var l journalLine
	if err := json.Unmarshal(line, &l); err != nil || l.ID == 0 {
		return false
	}
	if l.RM {
		delete(j.recs, l.ID)
		return true
	}
	m, err := decodeMeta(l.M)
	if err != nil {
		return false
	}
	j.recs[l.ID] = m
	return true
}

func (j *journal) get(id uint64) (Meta, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	m, ok := j.recs[id]
	return m, ok
}

// empty says whether the journal holds no record.
func (j *journal) empty() bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return len(j.recs) == 0
}

func (j *journal) has(id uint64) bool {
	_, ok := j.get(id)
	return ok
}

// put appends the record of id; sync makes it durable against a power cut too
// (a create needs only to survive the daemon: the file itself is not synced).
func (j *journal) put(id uint64, m Meta, sync bool) error {
	b, err := json.Marshal(journalLine{ID: id, M: m.encode()})
	if err != nil {
		return err
	}
	return j.write(id, append(b, '\n'), &m, sync)
}

// drop appends the removal of id's record, if the journal holds one.
func (j *journal) drop(id uint64, sync bool) error {
	if !j.has(id) {
		return nil
	}
	b, _ := json.Marshal(journalLine{ID: id, RM: true})
	return j.write(id, append(b, '\n'), nil, sync)
}

func (j *journal) write(id uint64, line []byte, m *Meta, sync bool) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.closed {
		return os.ErrClosed
	}
	if j.f == nil {
		f, err := os.OpenFile(j.path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			return err
		}
		j.f = f
	}
	if _, err := j.f.Write(line); err != nil {
		return err
	}
	if sync {
		if err := j.f.Sync(); err != nil {
			return err
		}
	}
	if m != nil {
		j.recs[id] = *m
	} else {
		delete(j.recs, id)
	}
	return nil
}

// compact rewrites the journal with the records of the ids in live only (the
// files found at start), through a synced temporary file renamed over it.
func (j *journal) compact(live func(id uint64) bool) (dropped int, err error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	var buf bytes.Buffer
	for id, m := range j.recs {
		if !live(id) {
			delete(j.recs, id)
			dropped++
			continue
		}
		b, _ := json.Marshal(journalLine{ID: id, M: m.encode()})
		buf.Write(b)
		buf.WriteByte('\n')
	}
	tmp := j.path + ".tmp-" + strconv.Itoa(os.Getpid())
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return 0, err
	}
	fail := func(err error) (int, error) {
		f.Close()
		os.Remove(tmp)
		return 0, fmt.Errorf("compacting the journal %s: %w", j.path, err)
	}
	if _, err := f.Write(buf.Bytes()); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := os.Rename(tmp, j.path); err != nil {
		return fail(err)
	}
	if d, err := os.Open(filepath.Dir(j.path)); err == nil {
		d.Sync()
		d.Close()
	}
	if _, err := f.Seek(0, io.SeekEnd); err != nil {
		return fail(err)
	}
	// O_APPEND is not needed: one writer, which holds j.mu, and the offset is
	// at the end.
	if j.f != nil {
		j.f.Close()
	}
	j.f = f
	return dropped, nil
}

func (j *journal) close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.closed = true
	if j.f == nil {
		return nil
	}
	err := j.f.Close()
	j.f = nil
	return err
}
