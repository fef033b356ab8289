package passage_test

import (
	"context"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/index/content"
	"github.com/semfs/semfs/index/passage"
)

// A query reads passages' text from the answer's files only (a busy query
// has hundreds of candidates and keeps ten), and every passage it shows is
// the file's lines at that line number; a file changed between the check
// and the read shows no passage rather than wrong lines. Random corpora.
func TestAnswerReadsOnlyItsFiles(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 30))
	ctx := context.Background()
	x, px, root, files := answerCorpus(t, r, 60, 4)
	var opened opens
	src := opened.count(passage.DirSource(px, root))
	for range 30 {
		q := vocab[r.IntN(len(vocab))] + " " + vocab[r.IntN(len(vocab))]
		limit := 1 + r.IntN(5)
		opened.reset()
		res, err := x.Query(ctx, index.Query{Text: q, Limit: limit, Contents: src})
		if err != nil {
			t.Fatal(err)
		}
		hits, err := src.Evidence(ctx, q, nil, "", 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) <= limit {
			continue // nothing to leave unread
		}
		var shown []string
		for _, rs := range res {
			if len(rs.Passages) > 0 {
				shown = append(shown, rs.Path)
			}
			lines := strings.Split(files[rs.Path], "\n")
			for _, p := range rs.Passages {
				if msg := notFilesText(lines, p); msg != "" {
					t.Fatalf("%q: %s: %s", q, rs.Path, msg)
				}
			}
		}
		read := opened.paths()
		slices.Sort(shown)
		if !slices.Equal(read, shown) { // DirSource gives no ctime: nothing kept (texts)
			t.Fatalf("%q, limit %d, %d content hits: read %v, showed passages of %v", q, limit, len(hits), read, shown)
		}
	}

	// Changed after Evidence, before Read: no passage, the others kept.
	hits, err := src.Evidence(ctx, "alpha", nil, "", 0)
	if err != nil || len(hits) < 2 {
		t.Fatalf("%d hits for alpha: %v", len(hits), err)
	}
	if err := os.WriteFile(filepath.Join(root, hits[0].Path), []byte("alpha changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ptrs := []*index.ContentHit{&hits[0], &hits[1]}
	if err := src.Read(ctx, "alpha", ptrs); err != nil {
		t.Fatal(err)
	}
	if len(hits[0].Passages) != 0 || len(hits[1].Passages) == 0 || hits[1].Passages[0].Text == "" {
		t.Fatalf("after a change between the check and the read: %+v / %+v", hits[0].Passages, hits[1].Passages)
	}
	px.Apply([]content.Change{{Op: content.Written, Path: hits[0].Path}})
}

// withVersion is src with each file's ctime and inode in its states, as the
// daemon's source gives them: answers' passages' bytes are then kept (texts).
// fakeCTime, when it returns a time, stands in for a file's own ctime (a
// write within the clock tick of the last read).
func withVersion(src passage.Source, root string, fakeCTime func(p string) (int64, bool)) passage.Source {
	version := func(p string, fi os.FileInfo, st *passage.FileState) {
		sys := fi.Sys().(*syscall.Stat_t)
		st.CTime, st.Ino = sys.Ctim.Nano(), sys.Ino
		if c, ok := fakeCTime(p); ok {
			st.CTime = c
		}
	}
	stat := src.Stat
	src.Stat = func(ctx context.Context, paths []string) []passage.FileState {
		out := stat(ctx, paths)
		for i, p := range paths {
			if fi, err := os.Lstat(filepath.Join(root, p)); err == nil && out[i].Err == nil {
				version(p, fi, &out[i])
			}
		}
		return out
	}
	readEach := src.ReadEach
	src.ReadEach = func(ctx context.Context, paths []string, each func(int, io.ReaderAt, passage.FileState)) {
		readEach(ctx, paths, func(i int, r io.ReaderAt, st passage.FileState) {
			if f, ok := r.(*os.File); ok && st.Err == nil {
				if fi, err := f.Stat(); err == nil {
					version(paths[i], fi, &st)
				}
			}
			each(i, r, st)
		})
	}
	return src
}

// An answer's files are not opened again for the next query they answer while
// they stay the version read (same size, mtime, ctime and inode): the second
// query shows the same passages without a read. A file rewritten (a new
// ctime) is read again and shows its new lines; one rewritten within the
// clock tick of the last read (the same ctime, faked here) shows its new
// lines once the change stream reports the write (Apply), as the daemon's
// does for every write. Random corpora.
func TestAnswerTextKeptForItsVersion(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 31))
	ctx := context.Background()
	x, px, root, files := answerCorpus(t, r, 40, 3)
	var mu sync.Mutex
	faked := map[string]int64{}
	var opened opens
	src := opened.count(withVersion(passage.DirSource(px, root), root, func(p string) (int64, bool) {
		mu.Lock()
		defer mu.Unlock()
		c, ok := faked[p]
		return c, ok
	}))
	query := func(q string) map[string][]index.Passage {
		t.Helper()
		opened.reset()
		res, err := x.Query(ctx, index.Query{Text: q, Limit: 5, Contents: src})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string][]index.Passage{}
		for _, rs := range res {
			if len(rs.Passages) == 0 {
				continue
			}
			out[rs.Path] = rs.Passages
			lines := strings.Split(files[rs.Path], "\n")
			for _, p := range rs.Passages {
				if msg := notFilesText(lines, p); msg != "" {
					t.Fatalf("%q: %s: %s", q, rs.Path, msg)
				}
			}
		}
		return out
	}
	for range 20 {
		q := vocab[r.IntN(len(vocab))] + " " + vocab[r.IntN(len(vocab))]
		first := query(q)
		if len(first) == 0 {
			continue
		}
		again := query(q)
		if read := opened.paths(); len(read) != 0 || fmt.Sprint(again) != fmt.Sprint(first) {
			t.Fatalf("%q asked again: opened %v; passages %v, first %v", q, read, again, first)
		}
	}

	// Rewritten, same size and mtime: a new ctime, so read again.
	q := "alpha bravo"
	first := query(q)
	if len(first) == 0 {
		t.Fatalf("no passage for %q", q)
	}
	var p string
	for p = range first {
		break
	}
	rewrite := func(p string) {
		t.Helper()
		full := filepath.Join(root, p)
		fi, err := os.Stat(full)
		if err != nil {
			t.Fatal(err)
		}
		// Each word spelt backwards: the same size and lines, other text.
		files[p] = regexp.MustCompile(`[a-z]+`).ReplaceAllStringFunc(files[p], func(w string) string {
			b := []byte(w)
			slices.Reverse(b)
			return string(b)
		})
		if err := os.WriteFile(full, []byte(files[p]), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(full, fi.ModTime(), fi.ModTime()); err != nil {
			t.Fatal(err)
		}
	}
	rewrite(p)
	query(q) // checks every passage shown against the new lines
	readAgain := slices.Contains(opened.paths(), p)
	if _, shown := query(q)[p]; shown && !readAgain {
		t.Fatalf("%s rewritten (a new ctime) was not read again", p)
	}

	// Rewritten within the tick: the same ctime until the change stream
	// reports the write.
	first = query(q)
	for p = range first {
		break
	}
	fi, err := os.Stat(filepath.Join(root, p))
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	faked[p] = fi.Sys().(*syscall.Stat_t).Ctim.Nano()
	mu.Unlock()
	rewrite(p)
	px.Apply([]content.Change{{Op: content.Written, Path: p}})
	// The index queues the file again; until it is read, its entry is the old
	// version's, which Evidence accepts (same size and mtime): the passages
	// shown must be the new lines (query checks them).
	query(q)
	readAgain = slices.Contains(opened.paths(), p)
	if _, shown := query(q)[p]; shown && !readAgain {
		t.Fatalf("%s rewritten within the tick and reported was not read again", p)
	}
}

// answerCorpus writes n generated files in dirs directories, each with a
// record in a new tag index and indexed by a new passage index (settled):
// the corpus of a query with contents.
func answerCorpus(t *testing.T, r *rand.Rand, n, dirs int) (x *index.Index, px *passage.Index, root string, files map[string]string) {
	t.Helper()
	root = t.TempDir()
	x, err := index.Open(t.TempDir(), index.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { x.Close() })
	px = open(t, root, "")
	t.Cleanup(func() { px.Close() })
	files = map[string]string{}
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	for i := range n {
		p := fmt.Sprintf("d%d/f%02d.txt", i%dirs, i)
		files[p] = genText(r)
		if err := x.Create(p, "", uint64(i+1), at); err != nil {
			t.Fatal(err)
		}
	}
	px.Apply(write(t, root, files))
	settle(t, px)
	return x, px, root, files
}

// opens counts the files a source opens (its ReadEach).
type opens struct {
	mu sync.Mutex
	m  map[string]int
}

// count is src with its opens counted in o.
func (o *opens) count(src passage.Source) passage.Source {
	readEach := src.ReadEach
	src.ReadEach = func(ctx context.Context, paths []string, each func(int, io.ReaderAt, passage.FileState)) {
		o.mu.Lock()
		if o.m == nil {
			o.m = map[string]int{}
		}
		for _, p := range paths {
			o.m[p]++
		}
		o.mu.Unlock()
		readEach(ctx, paths, each)
	}
	return src
}

func (o *opens) reset() {
	o.mu.Lock()
	defer o.mu.Unlock()
	clear(o.m)
}

// paths are the files opened since the last reset, sorted.
func (o *opens) paths() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Sorted(maps.Keys(o.m))
}
