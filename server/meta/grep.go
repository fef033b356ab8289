package meta

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/semfs/semfs/index/content"
	"github.com/semfs/semfs/server"
)

// .semfs/grep/<pattern>/ is POST /v1/grep from inside the mount:
//
//	NN-<basename>   a symlink per matching file, most matching lines first
//	.results.json   the /v1/grep answer, asked with all (every file read, as GNU grep reads them)
//	matches         GNU grep -rn's "path:line:text" lines
//
// The directory name is the pattern with "/" written %2F, "%" %25 and "@"
// %40 (a name holds no "/"), and "." as %2E where needed (the names "." and
// ".." are the directory itself and its parent at every door); a suffix "@i"
// matches case-insensitively, "@F" takes the pattern as a literal, "@iF" both.

// matchesName is the grep directory's GNU grep-style listing.
const matchesName = "matches"

// grepKey is one grep directory.
type grepKey struct {
	pattern           string
	ignoreCase, fixed bool
}

// parseGrepName reads a grep directory's name.
func parseGrepName(op, p, name string) (grepKey, error) {
	var k grepKey
	if i := strings.LastIndexByte(name, '@'); i >= 0 && i+1 < len(name) && strings.Trim(name[i+1:], "iF") == "" {
		k.ignoreCase = strings.Contains(name[i+1:], "i")
		k.fixed = strings.Contains(name[i+1:], "F")
		name = name[:i]
	}
	r := strings.NewReplacer("%2F", "/", "%2f", "/", "%25", "%", "%40", "@", "%2E", ".", "%2e", ".")
	k.pattern = r.Replace(name)
	if k.pattern == "" {
		return k, server.E(op, server.KindInvalid, p, errors.New("the pattern is empty"))
	}
	if !utf8.ValidString(k.pattern) {
		return k, server.E(op, server.KindInvalid, p, errors.New("the pattern is not UTF-8"))
	}
	return k, nil
}

// grepAnswer runs k for ctx's caller (the daemon's grep checks each file
// as that caller), reused for seenFor by the same caller, so that a listing
// and the lookups and reads that follow it agree.
func (t *Tree) grepAnswer(ctx context.Context, p string, k grepKey) (grepView, error) {
	if noCaller(ctx) {
		// Contents for no known caller are nobody's (world-readable
		// files only), never the daemon's.
		ctx = server.WithIdentity(ctx, server.Identity{Proto: "meta"})
	}
	return t.grepAs(ctx, p, k)
}

// noCaller reports whether ctx names no caller: the daemon's own call.
func noCaller(ctx context.Context) bool {
	id := server.IdentityFrom(ctx)
	return !id.HasUID && id.MountApp == "" && id.Proto == ""
}

// grepSize is the size of a grep directory's file for Lstat. The NFS door
// asks a file's attributes with no caller (its handle's, shared by every
// caller), then reads with the caller's identity; a size smaller than the
// caller's answer would cut it short, so a call with no caller is given the
// daemon's answer's size, the largest of all (a reader whose answer is
// smaller meets the end of the file sooner).
func (t *Tree) grepSize(ctx context.Context, p string, n node) (int64, error) {
	if !noCaller(ctx) {
		b, err := t.grepFile(ctx, p, n)
		return int64(len(b)), err
	}
	v, err := t.grepAs(ctx, parentOf(p), n.grep)
	if err != nil {
		return 0, err
	}
	if n.kind == kindGrepMatches {
		return int64(len(v.matches)), nil
	}
	return int64(len(v.json)), nil
}

// grepAs is grepAnswer for ctx as it is.
func (t *Tree) grepAs(ctx context.Context, p string, k grepKey) (grepView, error) {
	if t.grep == nil {
		return grepView{}, server.E("grep", server.KindNotFound, p, errors.New("grep is not available"))
	}
	who := fmt.Sprintf("%+v", server.IdentityFrom(ctx))
	gk := grepSeenKey{k: k, who: who}
	t.mu.Lock()
	if v, ok := t.greps[gk]; ok && time.Since(v.at) < seenFor {
		t.mu.Unlock()
		return v, nil
	}
	t.mu.Unlock()
	// With all, as GNU grep reads every file: matches then holds the lines
	// grep -rn prints of a file not content-indexed too (the valid lines of
	// one that is not UTF-8, those of one over the cap).
	ans, err := t.grep(ctx, content.Request{Pattern: k.pattern, IgnoreCase: k.ignoreCase, Fixed: k.fixed, All: true})
	if err != nil {
		kind := server.KindIO
		if errors.Is(err, content.ErrInvalid) {
			kind = server.KindInvalid
		}
		return grepView{}, server.E("grep", kind, p, err)
	}
	v := grepView{at: time.Now(), ans: ans}
	counts := map[string]int{}
	var matches bytes.Buffer
	for _, m := range ans.Matches {
		if counts[m.Path] == 0 {
			v.files = append(v.files, m.Path)
		}
		counts[m.Path] += m.LineCount()
		if m.Binary {
			continue // GNU grep prints no line for it ("binary file matches" goes to its standard error)
		}
		fmt.Fprintf(&matches, "%s:%d:%s\n", m.Path, m.Line, m.Text)
	}
	slices.SortStableFunc(v.files, func(a, b string) int { return counts[b] - counts[a] })
	v.matches = matches.Bytes()
	if v.json, err = json.MarshalIndent(ans, "", "  "); err != nil {
		return grepView{}, server.E("grep", server.KindIO, p, err)
	}
	v.json = append(v.json, '\n')
	t.mu.Lock()
	if len(t.greps) >= maxSeen {
		for k := range t.greps {
			delete(t.greps, k)
			break
		}
	}
	t.greps[gk] = v
	t.mu.Unlock()
	return v, nil
}

type grepSeenKey struct {
	k   grepKey
	who string
}

// grepView is one caller's grep answer as the directory shows it.
type grepView struct {
	at      time.Time
	ans     content.Answer
	files   []string // matching files, most matching lines first (then by path)
	json    []byte
	matches []byte
}

// parseGrep classifies a path below grep/ (rest is what follows "grep/").
func (t *Tree) parseGrep(op, p, rest string) (node, error) {
	if rest == "" {
		return node{kind: kindGrepRoot}, nil
	}
	dir, below, _ := strings.Cut(rest, "/")
	k, err := parseGrepName(op, p, dir)
	if err != nil {
		return node{}, err
	}
	switch {
	case below == "":
		return node{kind: kindGrepDir, grep: k}, nil
	case below == resultsName:
		return node{kind: kindGrepResults, grep: k}, nil
	case below == matchesName:
		return node{kind: kindGrepMatches, grep: k}, nil
	case strings.Contains(below, "/"):
		return node{}, server.E(op, server.KindNotDir, p, nil)
	}
	num, _, ok := strings.Cut(below, "-")
	rank, err := strconv.Atoi(num)
	if !ok || err != nil || rank < 1 {
		return node{}, server.E(op, server.KindNotFound, p, nil)
	}
	return node{kind: kindGrepResult, grep: k, rank: rank}, nil
}

// grepLstat is Lstat for the grep kinds; ok false for another kind.
func (t *Tree) grepLstat(ctx context.Context, p string, n node) (a server.Attr, ok bool, err error) {
	switch n.kind {
	case kindGrepRoot, kindGrepDir:
		if n.kind == kindGrepDir {
			if _, err := t.grepAnswer(ctx, p, n.grep); err != nil {
				return a, true, err
			}
		}
		return t.attr(p, dirMode, 0), true, nil
	case kindGrepResults, kindGrepMatches:
		size, err := t.grepSize(ctx, p, n)
		if err != nil {
			return a, true, err
		}
		return t.attr(p, roMode, size), true, nil
	case kindGrepResult:
		name, target, err := t.grepResult(ctx, p, n)
		if err != nil {
			return a, true, err
		}
		if !strings.HasSuffix(p, "/"+name) {
			return a, true, server.E("lstat", server.KindNotFound, p, nil)
		}
		return t.attr(p, linkMode, int64(len(target))), true, nil
	}
	return a, false, nil
}

// grepFile is the bytes of .results.json or matches.
func (t *Tree) grepFile(ctx context.Context, p string, n node) ([]byte, error) {
	v, err := t.grepAnswer(ctx, parentOf(p), n.grep)
	if err != nil {
		return nil, err
	}
	if n.kind == kindGrepMatches {
		return v.matches, nil
	}
	return v.json, nil
}

// grepResult is the n.rank-th matching file's link name and target.
func (t *Tree) grepResult(ctx context.Context, p string, n node) (name, target string, err error) {
	v, err := t.grepAnswer(ctx, parentOf(p), n.grep)
	if err != nil {
		return "", "", err
	}
	if n.rank > len(v.files) {
		return "", "", server.E("lstat", server.KindNotFound, p, nil)
	}
	f := v.files[n.rank-1]
	return linkName(n.rank, len(v.files), f), linkTarget(f), nil
}

// grepReadDir lists a grep directory.
func (t *Tree) grepReadDir(ctx context.Context, p string, n node) ([]server.DirEntry, error) {
	if n.kind == kindGrepRoot {
		return nil, nil
	}
	v, err := t.grepAnswer(ctx, p, n.grep)
	if err != nil {
		return nil, err
	}
	out := make([]server.DirEntry, 0, len(v.files)+2)
	out = append(out, server.DirEntry{Name: resultsName, Attr: t.attr(server.Join(p, resultsName), roMode, int64(len(v.json)))})
	out = append(out, server.DirEntry{Name: matchesName, Attr: t.attr(server.Join(p, matchesName), roMode, int64(len(v.matches)))})
	for i, f := range v.files {
		name := linkName(i+1, len(v.files), f)
		out = append(out, server.DirEntry{Name: name, Attr: t.attr(server.Join(p, name), linkMode, int64(len(linkTarget(f))))})
	}
	return out, nil
}

func parentOf(p string) string {
	d, _ := server.Split(p)
	return d
}
