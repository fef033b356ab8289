package passage_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/index/content"
	"github.com/semfs/semfs/index/passage"
)

func open(t *testing.T, root, idx string) *passage.Index {
	t.Helper()
	x, err := passage.Open(passage.Options{Dir: idx, Files: content.Dir(root), CPU: -1})
	if err != nil {
		t.Fatal(err)
	}
	return x
}

func settle(t *testing.T, x *passage.Index) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := x.Settle(ctx); err != nil {
		t.Fatal(err)
	}
}

func write(t *testing.T, root string, files map[string]string) []content.Change {
	t.Helper()
	var cs []content.Change
	for p, body := range files {
		full := filepath.Join(root, p)
		os.MkdirAll(filepath.Dir(full), 0o755)
		if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		cs = append(cs, content.Change{Op: content.Written, Path: p})
	}
	return cs
}

func search(t *testing.T, x *passage.Index, root, q string) []index.ContentHit {
	t.Helper()
	src := passage.DirSource(x, root)
	hits, err := src.Evidence(context.Background(), q, nil, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	read := make([]*index.ContentHit, len(hits))
	for i := range hits {
		read[i] = &hits[i]
	}
	if err := src.Read(context.Background(), q, read); err != nil {
		t.Fatal(err)
	}
	return hits
}

// notFilesText says what is wrong with p as a passage of the file of lines:
// its text must be the file's from the start of a word of line p.Line (not
// a blank line), at most 480 bytes of it; "" when nothing is.
func notFilesText(lines []string, p index.Passage) string {
	if p.Line < 1 || p.Line > len(lines) {
		return fmt.Sprintf("passage at line %d of %d", p.Line, len(lines))
	}
	rest := strings.Join(lines[p.Line-1:], "\n")
	at := strings.Index(rest, p.Text)
	switch {
	case p.Text == "" || at < 0 || at > len(lines[p.Line-1]) || at > 0 && !strings.ContainsRune(" \t", rune(rest[at-1])):
		return fmt.Sprintf("passage at line %d is not the file's text from a word of that line: %q", p.Line, p.Text)
	case at == 0 && strings.TrimSpace(lines[p.Line-1]) == "":
		return fmt.Sprintf("passage starts at a blank line %d", p.Line)
	case len(p.Text) > 480:
		return fmt.Sprintf("passage of %d bytes at line %d", len(p.Text), p.Line)
	}
	return ""
}

func hitPaths(hs []index.ContentHit) []string {
	var out []string
	for _, h := range hs {
		out = append(out, h.Path)
	}
	return out
}

var vocab = strings.Fields("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu")

// genText is a random file: paragraphs, headings, declarations, long runs
// without a blank line, blank-line runs, with or without a final newline.
func genText(r *rand.Rand) string {
	var b strings.Builder
	for range r.IntN(40) {
		switch r.IntN(8) {
		case 0:
			b.WriteString("\n")
		case 1:
			b.WriteString("## " + vocab[r.IntN(len(vocab))] + "\n")
		case 2:
			b.WriteString("func " + vocab[r.IntN(len(vocab))] + "() {\n")
		case 3:
			b.WriteString("   \t\n")
		default:
			for range r.IntN(60) {
				b.WriteString(vocab[r.IntN(len(vocab))] + " ")
			}
			b.WriteString("\n")
		}
	}
	s := b.String()
	if r.IntN(3) == 0 {
		s = strings.TrimSuffix(s, "\n")
	}
	return s
}

// Every passage answered is its file's text from a word of the line it says
// (an independent count of the file's lines), at most 480 bytes of it, and a
// word of the file is found in a passage whose text shows it.
func TestPassagesAreTheFilesLines(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 4))
	root := t.TempDir()
	files := map[string]string{}
	for i := range 40 {
		files[fmt.Sprintf("d%d/f%02d.txt", i%3, i)] = genText(r)
	}
	x := open(t, root, "")
	defer x.Close()
	x.Apply(write(t, root, files))
	settle(t, x)
	for _, w := range vocab {
		hits := search(t, x, root, w)
		var want []string
		for p, body := range files {
			if slices.Contains(strings.FieldsFunc(body, func(r rune) bool { return !('a' <= r && r <= 'z') }), w) {
				want = append(want, p)
			}
		}
		slices.Sort(want)
		if got := hitPaths(hits); !slices.Equal(got, want) {
			t.Fatalf("%q: files %v, want %v", w, got, want)
		}
		for _, h := range hits {
			lines := strings.Split(files[h.Path], "\n")
			if len(h.Passages) == 0 || len(h.Passages) > 3 {
				t.Fatalf("%q in %s: %d passages", w, h.Path, len(h.Passages))
			}
			for _, p := range h.Passages {
				if msg := notFilesText(lines, p); msg != "" {
					t.Fatalf("%s: %s", h.Path, msg)
				}
			}
			if !strings.Contains(h.Passages[0].Text, w) || h.Keyword <= 0 || h.Keyword > 1 {
				t.Fatalf("%s: best passage for %q lacks it (kw %v): %q", h.Path, w, h.Keyword, h.Passages[0].Text)
			}
		}
	}
}

// A passage holding more of the query's words ranks first; renames, removes
// and rewrites are followed; the index is saved without text and survives a
// restart, and a damaged file is discarded (Damaged) and rebuilt.
func TestPassagesFollowChangesAndRestarts(t *testing.T) {
	root, idx := t.TempDir(), t.TempDir()
	x := open(t, root, idx)
	x.Apply(write(t, root, map[string]string{
		"a.txt": "the lighthouse keeper\n\n" + strings.Repeat("filler words here ", 50) + "\n\nships pass the lighthouse at night\n",
		"b.txt": "a keeper of bees\n",
	}))
	settle(t, x)
	hits := search(t, x, root, "lighthouse ships night")
	if got := hitPaths(hits); !slices.Equal(got, []string{"a.txt"}) || hits[0].Passages[0].Text != "ships pass the lighthouse at night" || hits[0].Passages[0].Line != 5 {
		t.Fatalf("%+v", hits)
	}
	os.Rename(filepath.Join(root, "a.txt"), filepath.Join(root, "moved.txt"))
	x.Apply([]content.Change{{Op: content.Renamed, Path: "a.txt", NewPath: "moved.txt"}})
	os.Remove(filepath.Join(root, "b.txt"))
	x.Apply([]content.Change{{Op: content.Removed, Path: "b.txt"}})
	settle(t, x)
	if got := hitPaths(search(t, x, root, "keeper")); !slices.Equal(got, []string{"moved.txt"}) {
		t.Fatalf("after rename and remove: %v", got)
	}
	// A file changed on disk but not yet read again gives no evidence (its
	// offsets may be wrong), and is found once read.
	os.WriteFile(filepath.Join(root, "moved.txt"), []byte("nothing of the kind\n"), 0o644)
	if got := search(t, x, root, "keeper"); len(got) != 0 {
		t.Fatalf("stale file answered: %+v", got)
	}
	x.Apply([]content.Change{{Op: content.Written, Path: "moved.txt"}})
	settle(t, x)
	if got := hitPaths(search(t, x, root, "kind")); !slices.Equal(got, []string{"moved.txt"}) {
		t.Fatalf("after rewrite: %v", got)
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(idx, "passages.gob"))
	if err != nil || strings.Contains(string(raw), "nothing of the") {
		t.Fatalf("saved index holds the text, or is missing: %v", err)
	}

	x = open(t, root, idx)
	if x.Damaged() != "" {
		t.Fatalf("reopened: damaged %q", x.Damaged())
	}
	if got := hitPaths(search(t, x, root, "kind")); !slices.Equal(got, []string{"moved.txt"}) {
		t.Fatalf("after restart: %v", got)
	}
	// A walk that no longer sees the file drops it.
	os.Remove(filepath.Join(root, "moved.txt"))
	x.Reconcile(x.Begin(), nil, nil)
	if got := search(t, x, root, "kind"); len(got) != 0 {
		t.Fatalf("after reconcile: %+v", got)
	}
	x.Close()

	for _, damage := range []func([]byte) []byte{
		func(b []byte) []byte { return b[:len(b)/2] },
		func(b []byte) []byte { b[len(b)/2] ^= 0xff; return b },
		func([]byte) []byte { return nil },
	} {
		b, _ := os.ReadFile(filepath.Join(idx, "passages.gob"))
		os.WriteFile(filepath.Join(idx, "passages.gob"), damage(b), 0o600)
		x = open(t, root, idx)
		if x.Damaged() == "" || x.Damaged() == "missing" {
			t.Fatalf("damage not seen: %q", x.Damaged())
		}
		x.Apply(write(t, root, map[string]string{"new.txt": "rebuilt from the files\n"}))
		settle(t, x)
		if got := hitPaths(search(t, x, root, "rebuilt")); !slices.Equal(got, []string{"new.txt"}) {
			t.Fatalf("after damage: %v", got)
		}
		x.Close()
	}
}

// Files the content rules skip are not split: binary, not UTF-8, over the cap.
func TestPassagesSkipWhatContentSkips(t *testing.T) {
	root := t.TempDir()
	x, err := passage.Open(passage.Options{Files: content.Dir(root), CPU: -1, Max: 100})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	x.Apply(write(t, root, map[string]string{
		"bin":  "needle\x00",
		"l1":   "needle \xff\n",
		"big":  "needle " + strings.Repeat("x", 200),
		"text": "needle\n",
	}))
	settle(t, x)
	if got := hitPaths(search(t, x, root, "needle")); !slices.Equal(got, []string{"text"}) {
		t.Fatalf("%v", got)
	}
	if st := x.Stats(); st.Files != 1 || st.Pending != 0 {
		t.Fatalf("%+v", st)
	}
}
