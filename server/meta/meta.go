// Package meta is the .semfs namespace: a virtual directory at the root of
// every export through which a process that can only read, write and list
// files (a QEMU guest on 9P, a container with the NFS volume, an agent whose
// tools are file tools) queries and tags the tree, the way Gifford's Semantic
// File System and TMSU's queries/ directory make queries directories.
//
//	.semfs/query/README           what this is
//	.semfs/query/<text>[@N]/      runs the query (as POST /v1/query, at most 50
//	                              results, or N ≤ 1000) when listed or looked in:
//	  NN-<basename>               a symlink per result, in rank order, to
//	                              ../../../<path>
//	  .results.json               the API's answer, {"results": [...]}
//	.semfs/grep/<pattern>[@iF]/   POST /v1/grep for the pattern (grep.go):
//	  NN-<basename>               a symlink per matching file, most matches first
//	  .results.json, matches      the API's answer; GNU grep's path:line:text
//	.semfs/changes                the last 1,000 changes the caller may see,
//	                              as JSON lines, newest last (changes.go)
//	.semfs/tags/<path>            the file's record as JSON; writing
//	                              {"task": ..., "relatedApps": [...]} retags it
//	                              as POST /v1/tag does
//
// The Tree implements server.Virtual, so the core routes every call on these
// paths here and both front ends (their fast paths included) serve the same
// tree with no code of their own. It also answers the per-field extended
// attributes user.semfs.* (Xattrs) that 9P shows on every real file.
//
// Invariants: nothing here touches the backing directory except through the
// FS with the caller's identity (a result the caller cannot see is left out);
// nothing in the tree is indexed, archived or returned by a query (the FS
// never walks it, and no real file can bear its name); every path of it has a
// stable inode number (server.VirtualIno), so NFS handles outlive the daemon;
// a tag is written only whole and valid, through the same check and index call
// as the control API (which also keeps the durable copies).
package meta

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/index/content"
	"github.com/semfs/semfs/server"
	"github.com/semfs/semfs/server/control"
)

// DefaultName is the tree's name in the root of every export.
const DefaultName = ".semfs"

// Limits of a query directory: the default count, and the most a name's @N
// may ask for.
const (
	DefaultLimit = 50
	MaxLimit     = 1000
)

// maxTagWrite bounds what a tags file accepts before it is whole: a record is
// small (a task is at most control.MaxTask bytes).
const maxTagWrite = 64 << 10

// maxPending bounds how many tags files may hold an unfinished write at once.
const maxPending = 1024

// maxCached bounds the query answers kept (per index generation).
const maxCached = 64

// Tree is the .semfs namespace of one daemon. Attach the FS it serves before
// any call (the FS needs the Tree at its creation, the Tree needs the FS).
type Tree struct {
	name string
	idx  *index.Index
	sync func(context.Context) error
	fs   *server.FS
	uid  uint32
	gid  uint32
	dev  uint64

	mu      sync.Mutex
	gen     uint64    // the index generation last seen
	changed time.Time // when it was seen to change: the tree's mtime and ctime
	cache   map[queryKey]cached
	seen    map[seenKey]seenView // per caller, see results
	pending map[string][]byte    // tags files written but not yet whole JSON
	grep    func(context.Context, content.Request) (content.Answer, error)
	greps   map[grepSeenKey]grepView // per caller, see grepAnswer (grep.go)
	changes ChangesFunc              // Options.Changes
	contents
}

type queryKey struct {
	text  string
	limit int
}

type cached struct {
	gen uint64
	res []index.Result
}

// Options configure a Tree.
type Options struct {
	Name  string       // the tree's name in the root; "" = DefaultName
	Index *index.Index // what queries ask and tags change
	// Sync waits until every file change so far has reached the index (the
	// daemon's change queue), so that a query directory shows the files
	// written before it was looked at, as POST /v1/query does. Nil: nothing
	// to wait for.
	Sync func(context.Context) error
	// Grep answers the grep/ directories (grep.go) as POST /v1/grep does,
	// for the caller of ctx. Nil: grep/ is empty.
	Grep func(ctx context.Context, req content.Request) (content.Answer, error)
	// Changes, when set, gives .semfs/changes its content (changes.go).
	Changes ChangesFunc
	// Contents, when set, adds the files' contents to the query/
	// directories' best rank, for their caller (contents.go).
	Contents func(ctx context.Context) index.ContentSource
}

// New returns the tree. It checks the name as the core checks any name.
func New(opt Options) (*Tree, error) {
	name := opt.Name
	if name == "" {
		name = DefaultName
	}
	if err := server.CheckName("meta-dir", name); err != nil {
		return nil, err
	}
	if name == "." || name == ".." {
		return nil, server.E("meta-dir", server.KindInvalid, name, errors.New("not a name"))
	}
	return &Tree{name: name, idx: opt.Index, sync: opt.Sync, uid: uint32(os.Getuid()), gid: uint32(os.Getgid()),
		changed: time.Now(), cache: map[queryKey]cached{}, seen: map[seenKey]seenView{}, pending: map[string][]byte{},
		grep: opt.Grep, greps: map[grepSeenKey]grepView{}, changes: opt.Changes, contents: contents{source: opt.Contents, views: map[seenKey]seenView{}}}, nil
}

// flush brings the index up to the file changes made so far.
func (t *Tree) flush(ctx context.Context, p string) error {
	if t.sync == nil {
		return nil
	}
	if err := t.sync(ctx); err != nil {
		return server.E("query", server.KindIO, p, err)
	}
	return nil
}

// Attach gives the tree the FS whose files it shows; the owner and device of
// its entries are the backing root's.
func (t *Tree) Attach(fs *server.FS) {
	t.fs = fs
	if a, err := fs.Lstat(context.Background(), ""); err == nil {
		t.uid, t.gid, t.dev = a.UID, a.GID, a.Dev
	}
}

// Name implements server.Virtual.
func (t *Tree) Name() string { return t.name }

// node is what a path of the tree is.
type node struct {
	kind  nodeKind
	query queryKey // kindQueryDir and below
	rank  int      // kindResult: 1-based
	real  string   // kindTagsDir: the real path ("" = root)
	grep  grepKey  // the grep kinds
}

type nodeKind int

const (
	kindRoot nodeKind = iota
	kindQueryRoot
	kindReadme
	kindQueryDir
	kindResults // .results.json
	kindResult  // NN-name symlink
	kindTagsDir // a tags directory or file: the real path's type says which
	kindGrepRoot
	kindGrepDir
	kindGrepResults // grep/<pattern>/.results.json
	kindGrepMatches // grep/<pattern>/matches
	kindGrepResult  // grep/<pattern>/NN-name symlink
	kindChanges     // changes (changes.go)
)

const resultsName = ".results.json"

// parse classifies p (a path at or below the tree's name). It does not run
// queries or touch the backing directory.
func (t *Tree) parse(op, p string) (node, error) {
	rest := strings.TrimPrefix(p, t.name)
	rest = strings.TrimPrefix(rest, "/")
	if rest == "" {
		return node{kind: kindRoot}, nil
	}
	first, rest, _ := strings.Cut(rest, "/")
	switch first {
	case "query":
		if rest == "" {
			return node{kind: kindQueryRoot}, nil
		}
		dir, below, _ := strings.Cut(rest, "/")
		if dir == "README" && below == "" {
			return node{kind: kindReadme}, nil
		}
		if dir == "README" {
			return node{}, server.E(op, server.KindNotDir, p, nil)
		}
		q, err := parseQuery(op, p, dir)
		if err != nil {
			return node{}, err
		}
		switch {
		case below == "":
			return node{kind: kindQueryDir, query: q}, nil
		case below == resultsName:
			return node{kind: kindResults, query: q}, nil
		case strings.Contains(below, "/"):
			// Below a result: the kernel follows the symlink itself; a
			// path through it is not the tree's.
			return node{}, server.E(op, server.KindNotDir, p, nil)
		}
		num, _, ok := strings.Cut(below, "-")
		rank, err := strconv.Atoi(num)
		if !ok || err != nil || rank < 1 || rank > q.limit {
			return node{}, server.E(op, server.KindNotFound, p, nil)
		}
		return node{kind: kindResult, query: q, rank: rank}, nil
	case "tags":
		return node{kind: kindTagsDir, real: rest}, nil // file or dir: the real one says
	case "grep":
		return t.parseGrep(op, p, rest)
	case changesName:
		if t.changes != nil {
			if rest != "" {
				return node{}, server.E(op, server.KindNotDir, p, nil)
			}
			return node{kind: kindChanges}, nil
		}
	}
	return node{}, server.E(op, server.KindNotFound, p, nil)
}

// parseQuery reads a query directory's name: the text, and an optional @N.
func parseQuery(op, p, name string) (queryKey, error) {
	q := queryKey{text: name, limit: DefaultLimit}
	if i := strings.LastIndexByte(name, '@'); i >= 0 {
		if n, err := strconv.Atoi(name[i+1:]); err == nil && name[i+1:] == strconv.Itoa(n) {
			if n < 1 || n > MaxLimit {
				return q, server.E(op, server.KindInvalid, p, fmt.Errorf("a query directory lists 1 to %d results (@N)", MaxLimit))
			}
			q.text, q.limit = name[:i], n
		}
	}
	if strings.TrimSpace(q.text) == "" {
		return q, server.E(op, server.KindInvalid, p, errors.New("the query text is empty"))
	}
	if !utf8.ValidString(q.text) {
		return q, server.E(op, server.KindInvalid, p, errors.New("the query text is not UTF-8"))
	}
	return q, nil
}

// stamp is the tree's change time: the moment the index generation was last
// seen to move. Kernel clients compare a directory's mtime and ctime to decide
// whether their cached listing still holds, so a query directory must show a
// new one whenever its answer may have changed.
func (t *Tree) stamp() time.Time {
	g := t.idx.Generation()
	t.mu.Lock()
	defer t.mu.Unlock()
	if g != t.gen {
		now := time.Now()
		if !now.After(t.changed) {
			now = t.changed.Add(time.Microsecond)
		}
		t.gen, t.changed = g, now
	}
	return t.changed
}

func (t *Tree) attr(p string, mode os.FileMode, size int64) server.Attr {
	ts := t.stamp()
	nl := uint32(1)
	if mode.IsDir() {
		nl = 2
	}
	return server.Attr{Mode: mode, Size: size, Ino: server.VirtualIno(p), Dev: t.dev, Nlink: nl,
		UID: t.uid, GID: t.gid, Blocks: (size + 511) / 512, Atime: ts, Mtime: ts, Ctime: ts}
}

const (
	dirMode  = os.ModeDir | 0o555
	roMode   = 0o444
	tagMode  = 0o644
	linkMode = os.ModeSymlink | 0o777
)

// Lstat implements server.Virtual.
func (t *Tree) Lstat(ctx context.Context, p string) (server.Attr, error) {
	n, err := t.parse("lstat", p)
	if err != nil {
		return server.Attr{}, err
	}
	if a, ok, err := t.grepLstat(ctx, p, n); ok {
		return a, err
	}
	switch n.kind {
	case kindQueryDir:
		// Its times must move when its answer may have: the changes so far
		// are in the index first.
		if err := t.flush(ctx, p); err != nil {
			return server.Attr{}, err
		}
		return t.attr(p, dirMode, 0), nil
	case kindRoot, kindQueryRoot:
		return t.attr(p, dirMode, 0), nil
	case kindReadme:
		return t.attr(p, roMode, int64(len(readme(t.name)))), nil
	case kindChanges:
		return t.changesAttr(ctx, p), nil
	case kindResults:
		b, err := t.resultsJSON(ctx, p, n.query)
		if err != nil {
			return server.Attr{}, err
		}
		return t.attr(p, roMode, int64(len(b))), nil
	case kindResult:
		name, target, err := t.result(ctx, p, n)
		if err != nil {
			return server.Attr{}, err
		}
		if !strings.HasSuffix(p, "/"+name) {
			return server.Attr{}, server.E("lstat", server.KindNotFound, p, nil)
		}
		return t.attr(p, linkMode, int64(len(target))), nil
	}
	return t.tagsAttr(ctx, "lstat", p, n.real)
}

// tagsAttr is the attributes of tags path p, mirroring real path rp.
func (t *Tree) tagsAttr(ctx context.Context, op, p, rp string) (server.Attr, error) {
	if rp == "" {
		return t.attr(p, dirMode, 0), nil
	}
	if t.inTree(rp) {
		return server.Attr{}, server.E(op, server.KindNotFound, p, nil)
	}
	a, err := t.lstat(ctx, op, rp)
	if err != nil {
		return server.Attr{}, rebase(err, p)
	}
	switch {
	case a.IsDir():
		return t.attr(p, dirMode, 0), nil
	case a.Mode.IsRegular() || a.IsSymlink():
		return t.attr(p, tagMode, int64(len(t.record(rp)))), nil
	}
	return server.Attr{}, server.E(op, server.KindNotFound, p, errors.New("only files carry tags"))
}

// inTree reports whether real path rp is the tree itself (tags/.semfs/...).
func (t *Tree) inTree(rp string) bool {
	return server.Within(rp, t.name)
}

// rebase names p (the tree's path) in an error the FS gave for a real path.
func rebase(err error, p string) error {
	var se *server.Error
	if errors.As(err, &se) {
		return server.E(se.Op, se.Kind, p, se.Err)
	}
	return err
}

// ReadDir implements server.Virtual.
func (t *Tree) ReadDir(ctx context.Context, p string) ([]server.DirEntry, error) {
	n, err := t.parse("readdir", p)
	if err != nil {
		return nil, err
	}
	var names []string
	switch n.kind {
	case kindGrepRoot, kindGrepDir:
		return t.grepReadDir(ctx, p, n)
	case kindRoot:
		names = []string{"query", "grep", "tags"}
		if t.changes != nil {
			names = append(names, changesName)
		}
	case kindQueryRoot:
		names = []string{"README"}
	case kindQueryDir:
		// Built from one answer: a Lstat per entry would filter the whole
		// answer again for each.
		res, err := t.results(ctx, p, n.query)
		if err != nil {
			return nil, err
		}
		js, err := t.resultsJSON(ctx, p, n.query)
		if err != nil {
			return nil, err
		}
		out := make([]server.DirEntry, 0, len(res)+1)
		rp := server.Join(p, resultsName)
		out = append(out, server.DirEntry{Name: resultsName, Attr: t.attr(rp, roMode, int64(len(js)))})
		for i, r := range res {
			name := linkName(i+1, len(res), r.Path)
			out = append(out, server.DirEntry{Name: name, Attr: t.attr(server.Join(p, name), linkMode, int64(len(linkTarget(r.Path))))})
		}
		return out, nil
	case kindTagsDir:
		if n.real != "" {
			if a, err := t.lstat(ctx, "readdir", n.real); err != nil {
				return nil, rebase(err, p)
			} else if !a.IsDir() {
				return nil, server.E("readdir", server.KindNotDir, p, nil)
			}
		}
		if t.inTree(n.real) {
			return nil, server.E("readdir", server.KindNotFound, p, nil)
		}
		ents, err := t.readDir(ctx, n.real)
		if err != nil {
			return nil, rebase(err, p)
		}
		out := make([]server.DirEntry, 0, len(ents))
		for _, e := range ents {
			rp := server.Join(n.real, e.Name)
			if t.inTree(rp) {
				continue
			}
			cp := server.Join(p, e.Name)
			switch {
			case e.Attr.IsDir():
				out = append(out, server.DirEntry{Name: e.Name, Attr: t.attr(cp, dirMode, 0)})
			case e.Attr.Mode.IsRegular() || e.Attr.IsSymlink():
				out = append(out, server.DirEntry{Name: e.Name, Attr: t.attr(cp, tagMode, int64(len(t.record(rp))))})
			}
		}
		return out, nil
	default:
		return nil, server.E("readdir", server.KindNotDir, p, nil)
	}
	out := make([]server.DirEntry, 0, len(names))
	for _, name := range names {
		a, err := t.Lstat(ctx, server.Join(p, name))
		if err != nil {
			continue // gone since the listing was made
		}
		out = append(out, server.DirEntry{Name: name, Attr: a})
	}
	return out, nil
}

// Readlink implements server.Virtual.
func (t *Tree) Readlink(ctx context.Context, p string) (string, error) {
	n, err := t.parse("readlink", p)
	if err != nil {
		return "", err
	}
	if n.kind != kindResult && n.kind != kindGrepResult {
		return "", server.E("readlink", server.KindInvalid, p, errors.New("not a symlink"))
	}
	result := t.result
	if n.kind == kindGrepResult {
		result = t.grepResult
	}
	name, target, err := result(ctx, p, n)
	if err != nil {
		return "", err
	}
	if !strings.HasSuffix(p, "/"+name) {
		return "", server.E("readlink", server.KindNotFound, p, nil)
	}
	return target, nil
}

// linkName is the name of the rank-th of count results: the rank, zero-padded
// so that names sort in rank order, and the file's base name, cut to fit a
// name (a cut never splits a UTF-8 sequence). The rank makes it unique.
func linkName(rank, count int, path string) string {
	w := max(2, len(strconv.Itoa(count)))
	prefix := fmt.Sprintf("%0*d-", w, rank)
	_, base := server.Split(path)
	if len(prefix)+len(base) > server.MaxNameLen {
		base = base[:server.MaxNameLen-len(prefix)]
		for len(base) > 0 && !utf8.ValidString(base) {
			base = base[:len(base)-1]
		}
	}
	return prefix + base
}

// linkTarget is where a result's symlink points: relative, from
// <name>/query/<dir>/ up to the export's root, so it works in every export and
// through every client that follows symlinks itself.
func linkTarget(path string) string { return "../../../" + path }

// result finds the n.rank-th result: its link name and target.
func (t *Tree) result(ctx context.Context, p string, n node) (name, target string, err error) {
	res, err := t.results(ctx, p, n.query)
	if err != nil {
		return "", "", err
	}
	if n.rank > len(res) {
		return "", "", server.E("lstat", server.KindNotFound, p, nil)
	}
	r := res[n.rank-1]
	return linkName(n.rank, len(res), r.Path), linkTarget(r.Path), nil
}

// results runs query q as POST /v1/query does, at most once per index
// generation, and keeps the results the caller can see (a file the index
// still lists but that is gone, or beneath a directory the caller may not
// search, is left out: the tree shows nothing its caller could not find).
func (t *Tree) results(ctx context.Context, p string, q queryKey) ([]index.Result, error) {
	if err := t.flush(ctx, p); err != nil {
		return nil, err
	}
	if t.contents.source != nil {
		return t.contentResults(ctx, p, q)
	}
	gen := t.idx.Generation()
	t.mu.Lock()
	c, ok := t.cache[q]
	t.mu.Unlock()
	if !ok || c.gen != gen {
		res, err := t.idx.Query(ctx, index.Query{Text: q.text, Limit: q.limit})
		if err != nil {
			kind := server.KindIO
			if index.KindOf(err) == index.KindInvalid {
				kind = server.KindInvalid
			}
			return nil, server.E("query", kind, p, err)
		}
		c = cached{gen: gen, res: res}
		t.mu.Lock()
		if len(t.cache) >= maxCached {
			for k := range t.cache {
				delete(t.cache, k)
				break
			}
		}
		t.cache[q] = c
		t.mu.Unlock()
	}
	// The caller's view: kept a moment, so that a client stating every entry
	// of a listing (ls -l: one lookup each) does not filter the answer again
	// for each.
	who := fmt.Sprintf("%+v", server.IdentityFrom(ctx))
	sk := seenKey{q: q, who: who}
	t.mu.Lock()
	if v, ok := t.seen[sk]; ok && v.gen == gen && time.Since(v.at) < seenFor {
		t.mu.Unlock()
		return v.res, nil
	}
	t.mu.Unlock()
	out := make([]index.Result, 0, len(c.res))
	for _, r := range c.res {
		if t.inTree(r.Path) {
			continue
		}
		if _, err := t.lstat(ctx, "query", r.Path); err != nil {
			continue
		}
		out = append(out, r)
	}
	t.mu.Lock()
	if len(t.seen) >= maxSeen {
		for k := range t.seen {
			delete(t.seen, k)
			break
		}
	}
	t.seen[sk] = seenView{gen: gen, at: time.Now(), res: out}
	t.mu.Unlock()
	return out, nil
}

// seenKey is one caller's view of one query directory.
type seenKey struct {
	q   queryKey
	who string // the caller's identity, printed
}

type seenView struct {
	gen uint64
	at  time.Time
	res []index.Result
}

// seenFor is how long a caller's filtered view of an answer is reused within
// one index generation: long enough for the lookups of one listing, short
// enough that a chmod or a removed file shows at the next look.
const seenFor = time.Second

// maxSeen bounds the views kept.
const maxSeen = 256

// resultsJSON is the query directory's .results.json: the API's answer.
func (t *Tree) resultsJSON(ctx context.Context, p string, q queryKey) ([]byte, error) {
	res, err := t.results(ctx, p, q)
	if err != nil {
		return nil, err
	}
	b, err := json.MarshalIndent(control.QueryResponse{Results: res}, "", "  ")
	if err != nil {
		return nil, server.E("read", server.KindIO, p, err)
	}
	return append(b, '\n'), nil
}

// record is the tags file's content for real path rp: its index record as the
// API shows it (GET /v1/files/PATH), or an empty one for a file the index does
// not hold yet.
func (t *Tree) record(rp string) []byte {
	rec, err := t.idx.Get(rp)
	if err != nil {
		rec = index.Record{Path: rp}
	}
	if rec.RelatedApps == nil {
		rec.RelatedApps = []string{}
	}
	b, _ := json.MarshalIndent(rec, "", "  ")
	return append(b, '\n')
}

// OpenFile implements server.Virtual.
func (t *Tree) OpenFile(ctx context.Context, p string, write bool) (server.VirtualFile, error) {
	n, err := t.parse("open", p)
	if err != nil {
		return nil, err
	}
	a, err := t.Lstat(ctx, p)
	if err != nil {
		return nil, err
	}
	switch {
	case a.IsDir():
		return nil, server.E("open", server.KindIsDir, p, nil)
	case a.IsSymlink():
		return nil, server.E("open", server.KindInvalid, p, errors.New("a symlink is not opened"))
	case write && n.kind != kindTagsDir:
		// EACCES, as for a file without write permission: an NFS server opening
		// for reading and writing at once falls back to reading on it.
		return nil, server.E("open", server.KindPermission, p, errors.New("only tags files are written"))
	}
	return &file{t: t, ctx: ctx, p: p, n: n, write: write}, nil
}

// Truncate implements server.Virtual: a tags file's write starts over.
func (t *Tree) Truncate(ctx context.Context, p string, size int64) error {
	n, err := t.parse("truncate", p)
	if err != nil {
		return err
	}
	if n.kind != kindTagsDir {
		return server.E("truncate", server.KindReadOnly, p, errors.New("only tags files are written"))
	}
	a, err := t.tagsAttr(ctx, "truncate", p, n.real)
	if err != nil {
		return err
	}
	if a.IsDir() {
		return server.E("truncate", server.KindIsDir, p, nil)
	}
	if size != 0 {
		return server.E("truncate", server.KindInvalid, p, errors.New("a tags file is written whole: truncate it to 0 and write a JSON object"))
	}
	t.mu.Lock()
	delete(t.pending, p)
	t.mu.Unlock()
	return nil
}

// file is an open file of the tree.
type file struct {
	t     *Tree
	ctx   context.Context
	p     string
	n     node
	write bool
	// caller, when set, is whom the next write acts for (Attribute): the
	// opener is the daemon itself when NFS shares one open between callers.
	caller atomic.Pointer[server.Identity]

	snapOnce sync.Once
	snap     []byte // changes: the content as first read through this open file
}

// content is the file's bytes now.
func (f *file) content() ([]byte, error) {
	switch f.n.kind {
	case kindReadme:
		return []byte(readme(f.t.name)), nil
	case kindChanges:
		return f.changes(), nil
	case kindResults:
		return f.t.resultsJSON(f.ctx, f.p, f.n.query)
	case kindGrepResults, kindGrepMatches:
		return f.t.grepFile(f.ctx, f.p, f.n)
	}
	return f.t.record(f.n.real), nil
}

func (f *file) ReadAt(b []byte, off int64) (int, error) {
	c, err := f.content()
	if err != nil {
		return 0, err
	}
	if off >= int64(len(c)) {
		return 0, io.EOF
	}
	n := copy(b, c[off:])
	if n < len(b) {
		return n, io.EOF
	}
	return n, nil
}

func (f *file) Stat() (server.Attr, error) { return f.t.Lstat(f.ctx, f.p) }

func (f *file) Truncate(size int64) error { return f.t.Truncate(f.ctx, f.p, size) }

// WriteAt adds b to the tags file's pending write; once the bytes written
// since the last truncate are one whole JSON object, the tags are replaced.
// A write that makes them malformed (or names an unknown field or a bad
// value) fails, discards them and changes nothing.
func (f *file) WriteAt(b []byte, off int64) (int, error) {
	if !f.write {
		return 0, server.E("write", server.KindPermission, f.p, errors.New("not open for writing"))
	}
	t := f.t
	t.mu.Lock()
	buf := t.pending[f.p]
	end := off + int64(len(b))
	if off < 0 || end > maxTagWrite {
		delete(t.pending, f.p)
		t.mu.Unlock()
		return 0, server.E("write", server.KindTooLarge, f.p, fmt.Errorf("a tags file takes at most %d bytes", maxTagWrite))
	}
	if int64(len(buf)) < end {
		buf = append(buf, make([]byte, int(end)-len(buf))...)
	}
	copy(buf[off:], b)
	if _, ok := t.pending[f.p]; !ok && len(t.pending) >= maxPending {
		for k := range t.pending {
			delete(t.pending, k) // the oldest unfinished writes are dropped, not applied
			break
		}
	}
	t.pending[f.p] = buf
	t.mu.Unlock()

	req, whole, err := parseTags(buf)
	if err != nil {
		t.drop(f.p)
		return 0, server.E("write", server.KindInvalid, f.p, err)
	}
	if !whole {
		return len(b), nil
	}
	if err := t.tag(f.writer(), f.p, f.n.real, req); err != nil {
		t.drop(f.p)
		return 0, err
	}
	t.drop(f.p)
	return len(b), nil
}

// Attribute implements server.VirtualAttributer: the tags a write completes
// are the caller's act (its rights, its app in the change feed), not the
// opener's.
func (f *file) Attribute(ctx context.Context) {
	id := server.IdentityFrom(ctx)
	f.caller.Store(&id)
}

// writer is the context a write acts in: the last caller Attribute named, or
// the opener's.
func (f *file) writer() context.Context {
	if id := f.caller.Load(); id != nil {
		return server.WithIdentity(f.ctx, *id)
	}
	return f.ctx
}

// CheckIO implements server.VirtualIOChecker: over NFS one descriptor,
// opened as the daemon, serves every caller, so each write is checked for its
// own caller (tagging needs write access to the file, see retag).
func (f *file) CheckIO(ctx context.Context, write bool) error {
	if !write || f.n.kind != kindTagsDir {
		return nil
	}
	if err := f.t.checkTag(ctx, "tag", f.n.real); err != nil {
		return rebase(err, f.p)
	}
	return rebase(f.t.fs.CheckAccess(ctx, "tag", f.n.real, server.MayWrite), f.p)
}

// Close reports a write left unfinished (the bytes were not one JSON object):
// nothing was changed.
func (f *file) Close() error {
	if !f.write {
		return nil
	}
	f.t.mu.Lock()
	buf, ok := f.t.pending[f.p]
	delete(f.t.pending, f.p)
	f.t.mu.Unlock()
	if ok && len(bytes.TrimSpace(buf)) > 0 {
		return server.E("close", server.KindInvalid, f.p, errors.New("the tags written are not a whole JSON object; nothing changed"))
	}
	return nil
}

func (t *Tree) drop(p string) {
	t.mu.Lock()
	delete(t.pending, p)
	t.mu.Unlock()
}

// tagsWrite is what a tags file accepts: the tags, and the record's other
// fields so that a record read, edited and written back is taken (path and
// createdBy must be the file's; the times are the index's own and ignored).
type tagsWrite struct {
	Task        string          `json:"task"`
	RelatedApps []string        `json:"relatedApps"`
	Path        *string         `json:"path"`
	CreatedBy   *string         `json:"createdBy"`
	CreatedAt   json.RawMessage `json:"createdAt"`
	UpdatedAt   json.RawMessage `json:"updatedAt"`
}

// parseTags decodes buf strictly: whole=false while it is a prefix of a JSON
// object (more writes may come), an error once it cannot become one.
func parseTags(buf []byte) (req tagsWrite, whole bool, err error) {
	if len(bytes.TrimSpace(buf)) == 0 {
		return req, false, nil
	}
	if bytes.IndexByte(buf, 0) >= 0 {
		return req, false, errors.New("a NUL byte in the tags written")
	}
	dec := json.NewDecoder(bytes.NewReader(buf))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return req, false, nil
		}
		return req, false, fmt.Errorf("tags must be one JSON object {\"task\": ..., \"relatedApps\": [...]}: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return req, false, errors.New("data after the JSON object")
	}
	return req, true, nil
}

// tag replaces the tags of real path rp as POST /v1/tag does: the same checks,
// the same index call (which keeps the durable copies), acting as the caller
// (who must be able to find the file).
func (t *Tree) tag(ctx context.Context, p, rp string, req tagsWrite) error {
	if req.Path != nil && *req.Path != rp {
		return server.E("write", server.KindInvalid, p, fmt.Errorf("path %q is not this file's (%q)", *req.Path, rp))
	}
	if msg := control.CheckTags(req.Task, req.RelatedApps); msg != "" {
		return server.E("write", server.KindInvalid, p, errors.New(msg))
	}
	if req.CreatedBy != nil {
		if rec, err := t.idx.Get(rp); err == nil && rec.CreatedBy != *req.CreatedBy {
			return server.E("write", server.KindInvalid, p, errors.New("createdBy is the daemon's to say; leave it out"))
		}
	}
	return t.retag(ctx, "write", p, rp, req.Task, req.RelatedApps)
}

// retag is the one tagging call of the tree (tags files and xattrs). The
// caller must be able to find the file and, where the daemon checks
// permissions (root), to write it: a file's tags are changed by those who
// may change the file, as Linux asks of user.* extended attributes.
func (t *Tree) retag(ctx context.Context, op, p, rp, task string, apps []string) error {
	a, err := t.lstat(ctx, op, rp)
	if err != nil {
		return rebase(err, p)
	}
	if err := t.checkTag(ctx, op, rp); err != nil {
		return rebase(err, p)
	}
	if err := t.fs.CheckAccess(ctx, op, rp, server.MayWrite); err != nil {
		return rebase(err, p)
	}
	if a.IsDir() {
		return server.E(op, server.KindIsDir, p, errors.New("tags belong to files"))
	}
	if err := t.flush(ctx, p); err != nil { // a file just made is in the index
		return err
	}
	if _, err := t.idx.Tag(ctx, rp, task, apps, nil); err != nil {
		kind := server.KindIO
		switch index.KindOf(err) {
		case index.KindInvalid:
			kind = server.KindInvalid
		case index.KindNotFound:
			kind = server.KindNotFound
		}
		return server.E(op, kind, p, err)
	}
	return nil
}

func readme(name string) string {
	return `semfs: find and tag files from inside the mount
================================================

Query: list a directory named after what you look for.

    ls "` + name + `/query/auth problems/"
    cat "` + name + `/query/auth problems/01-login-failure.md"
    grep -r ERROR "` + name + `/query/auth problems/"

Each result is a symlink NN-<name> (NN = rank, best first) to the real file.
.results.json in the directory holds the full records and scores as JSON,
with "passages" (line and text) for files found by what they contain.
A directory lists at most 50 results; "<text>@N" lists N (at most 1000),
e.g. ` + name + `/query/invoices 2024@200/.

Tag: ` + name + `/tags/<path> holds a file's record as JSON. Write a JSON
object to replace its tags:

    echo '{"task": "quarterly report", "relatedApps": ["excel"]}' > ` + name + `/tags/notes/a.md

Malformed JSON or unknown fields fail the write and change nothing.
Over 9P, the extended attributes user.semfs.task and
user.semfs.related_apps (comma-separated) read and set the same tags;
user.semfs.created_by, created_at and updated_at are read-only.

Grep: list a directory named after a pattern (Go RE2 syntax) to find the
lines that match it, as grep -r would, without reading the whole tree:

    cat "` + name + `/grep/timeout/matches"          # path:line:text, as GNU grep -rn
    ls "` + name + `/grep/payment.*failed@i/"        # @i: ignore case
    cat "` + name + `/grep/a%2Fb@F/.results.json"    # @F: a literal; %2F is "/"

Each matching file is a symlink NN-<name> (most matching lines first);
.results.json holds the POST /v1/grep answer. In the name, write "/" as %2F,
"%" as %25, "@" as %40, and the patterns "." and ".." as %2E and %2E%2E. At most 1000 matching lines are listed.
Changes: ` + name + `/changes holds the last 1000 changes you may see
(creates, writes, renames, removes, tags...), one JSON object per line,
newest last; each names the app that made it ("host" for the backing
directory's own processes).

    tail -n 20 ` + name + `/changes

Everything else here is read-only. Answers follow the index: mount with
actimeo=0,lookupcache=none (NFS) or cache=none (9P) to see each change at once.
`
}
