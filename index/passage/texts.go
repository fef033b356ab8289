package passage

import (
	"sync"

	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/index/content"
)

// textsMax and textsFiles bound what texts keeps: the passages of a few
// hundred files (a passage is read up to scanMax bytes; most are a few
// hundred).
const (
	textsMax   = 4 << 20
	textsFiles = 512
)

// texts keeps the bytes an answer read of its files' passages, so that the
// next query answered by the same files shows their snippets without opening
// them again (each open, stat, read and close as the caller cost a query
// under the mixed load about a tenth of its CPU: most queries' answers are
// the same few files). Only the bytes a query may be shown are kept, and a
// query uses them only where it may read them: a hit reaches Read only after
// Evidence checked its file as the caller, and the kept bytes are of the
// version that check saw (the same inode, size, mtime and ctime, which any
// write, chmod, rename over or link changes). A write within the clock tick
// of the last read keeps those four; the change stream's report of it
// (Index.Apply) drops the file's bytes, and bytes read while a report came
// are not kept (gen: the report may have come before they were stored). A
// rename or removal needs no such report (the name then holds another inode,
// or nothing Evidence would find). Safe for concurrent use.
type texts struct {
	mu    sync.Mutex
	bytes int
	m     map[string]*fileText // by path
	gen   uint64               // reports of changes taken (forget)
}

// fileText is one version of a file's passages' bytes, by span start.
type fileText struct {
	v     version
	spans map[int64]string
	bytes int
}

// version is what tells one version of a file from another: its size, mtime
// and ctime (Unix ns) and inode. The zero version is none known (a source
// that gives no ctime): nothing is kept for it.
type version struct {
	size, mtime, ctime int64
	ino                uint64
}

// get returns, for each of h's spans, its bytes as read from the version of
// h's file Evidence checked; ok false unless every span is kept.
func (t *texts) get(h *index.ContentHit) (out []string, ok bool) {
	v := version{h.Size, h.MTime, h.CTime, h.Ino}
	t.mu.Lock()
	defer t.mu.Unlock()
	f := t.m[h.Path]
	if f == nil || v.ctime == 0 || f.v != v || len(h.Spans) == 0 {
		return nil, false
	}
	out = make([]string, len(h.Spans))
	for i, sp := range h.Spans {
		b, ok := f.spans[sp[0]]
		if !ok {
			return nil, false
		}
		out[i] = b
	}
	return out, true
}

// generation is the count of change reports taken: read it before reading
// files for put.
func (t *texts) generation() uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.gen
}

// put keeps bs, the bytes of h's spans (readText's) read from the version
// st of its file after generation returned gen, unless a change was reported
// since.
func (t *texts) put(h *index.ContentHit, st FileState, bs []string, gen uint64) {
	v := version{st.Size, st.MTime, st.CTime, st.Ino}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.gen != gen || v.ctime == 0 {
		return
	}
	f := t.m[h.Path]
	if f != nil && f.v != v {
		t.dropLocked(h.Path)
		f = nil
	}
	if f == nil {
		if t.m == nil {
			t.m = map[string]*fileText{}
		}
		f = &fileText{v: v, spans: map[int64]string{}}
		t.m[h.Path] = f
	}
	for i, sp := range h.Spans {
		if _, ok := f.spans[sp[0]]; ok {
			continue
		}
		if !t.roomLocked(h.Path, len(bs[i])) {
			break
		}
		f.spans[sp[0]] = bs[i]
		f.bytes += len(bs[i])
		t.bytes += len(bs[i])
	}
	if len(f.spans) == 0 {
		delete(t.m, h.Path)
	}
}

// roomLocked makes room for n more bytes of path's file, dropping other
// files' (any: map order), never its own; false when there is none.
func (t *texts) roomLocked(path string, n int) bool {
	for p := range t.m {
		if t.bytes+n <= textsMax && len(t.m) <= textsFiles {
			break
		}
		if p != path {
			t.dropLocked(p)
		}
	}
	return t.bytes+n <= textsMax
}

// forget drops the bytes of each path the changes cs name: a write, or a
// file's old name (its bytes are of no use there any more).
func (t *texts) forget(cs []content.Change) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.gen++
	for _, c := range cs {
		t.dropLocked(c.Path)
	}
}

func (t *texts) dropLocked(p string) {
	if f := t.m[p]; f != nil {
		t.bytes -= f.bytes
		delete(t.m, p)
	}
}
