package eval

import (
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/semfs/semfs/embed"
	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/index/content"
	"github.com/semfs/semfs/index/passage"
)

// The content known-item set: real documents nobody here wrote, the machine's
// man pages (sections 1 and 8), generated at evaluation time and never
// committed. One item per page: the file is the page's text (troff requests
// dropped, escapes cleaned, one paragraph per block, "## SECTION" headings)
// under a neutral name (pages/NNNN.txt), its NAME section and every
// occurrence of its command's name removed; the query is the NAME section's
// one-line description ("list directory contents"). Nothing but the contents
// can find the file: its path says nothing and it has no tags.

// Doc is one generated document.
type Doc struct {
	Name  string // the command (kept out of Body)
	Body  string
	Query string
}

// ManDocs reads up to n pages of dir (evenly spaced over the sorted names of
// man1 and man8), or fewer when fewer qualify.
func ManDocs(dir string, n int) ([]Doc, error) {
	var files []string
	for _, sec := range []string{"man1", "man8"} {
		fs, err := filepath.Glob(filepath.Join(dir, sec, "*.gz"))
		if err != nil {
			return nil, err
		}
		files = append(files, fs...)
	}
	sort.Slice(files, func(i, j int) bool { return filepath.Base(files[i]) < filepath.Base(files[j]) })
	var docs []Doc
	seen := map[string]bool{}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".gz")
		name = name[:max(0, strings.LastIndexByte(name, '.'))]
		if name == "" || seen[name] {
			continue
		}
		d, ok := manDoc(f, name)
		if ok {
			seen[name] = true
			docs = append(docs, d)
		}
	}
	if n > 0 && len(docs) > n {
		picked := make([]Doc, 0, n)
		for i := 0; i < n; i++ {
			picked = append(picked, docs[i*len(docs)/n])
		}
		docs = picked
	}
	return docs, nil
}

var (
	fontEsc  = regexp.MustCompile(`\\f(\[[^\]]*\]|\(..|.)`)
	namedEsc = regexp.MustCompile(`\\(\(..|\[[^\]]*\])`)
	otherEsc = regexp.MustCompile(`\\[&|^%:/,~0 ]|\\\*(\(..|\[[^\]]*\]|.)|\\[sv][-+]?\d*|\\n(\(..|\[[^\]]*\]|.)`)
	spaces   = regexp.MustCompile(`[ \t]+`)
)

func cleanTroff(s string) string {
	s = fontEsc.ReplaceAllString(s, "")
	s = strings.ReplaceAll(s, `\-`, "-")
	s = strings.ReplaceAll(s, `\e`, `\`)
	s = namedEsc.ReplaceAllStringFunc(s, func(m string) string {
		switch m {
		case `\(em`, `\(en`, `\[em]`, `\[en]`:
			return "-"
		case `\(lq`, `\(rq`, `\(aq`, `\[lq]`, `\[rq]`, `\[aq]`, `\(oq`, `\(cq`:
			return `"`
		}
		return ""
	})
	s = otherEsc.ReplaceAllString(s, "")
	return strings.TrimSpace(spaces.ReplaceAllString(s, " "))
}

// manDoc turns one page into a Doc; false for an alias, a page without a
// usable NAME line, or one with too little text.
func manDoc(file, name string) (Doc, bool) {
	f, err := os.Open(file)
	if err != nil {
		return Doc{}, false
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return Doc{}, false
	}
	b, err := io.ReadAll(io.LimitReader(zr, 4<<20))
	if err != nil {
		return Doc{}, false
	}
	var section string
	var nameText []string
	var body strings.Builder
	para := false
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, ".so ") {
			return Doc{}, false
		}
		if strings.HasPrefix(line, ".SH") || strings.HasPrefix(line, ".Sh") {
			section = strings.ToUpper(strings.Trim(strings.TrimSpace(line[3:]), `"`))
			if section != "NAME" {
				fmt.Fprintf(&body, "\n## %s\n\n", section)
				para = false
			}
			continue
		}
		text := line
		if strings.HasPrefix(line, ".") || strings.HasPrefix(line, "'") {
			fields := strings.SplitN(line, " ", 2)
			switch fields[0] {
			case ".B", ".I", ".BR", ".BI", ".IR", ".RB", ".RI", ".IB", ".Nm", ".Nd", ".Sy", ".Em", ".Ar", ".Fl", ".Op", ".It":
				if len(fields) < 2 {
					continue
				}
				text = strings.ReplaceAll(fields[1], `"`, "")
				if fields[0] == ".Nd" {
					text = `\- ` + text
				}
			default:
				if section != "NAME" && para {
					body.WriteString("\n") // a paragraph break
					para = false
				}
				continue
			}
		}
		if section == "NAME" {
			nameText = append(nameText, text)
			continue
		}
		if t := cleanTroff(text); t != "" {
			body.WriteString(t)
			body.WriteString("\n")
			para = true
		}
	}
	n := cleanTroff(strings.Join(nameText, " "))
	i := strings.Index(n, " - ")
	if i < 0 {
		return Doc{}, false
	}
	desc := strings.TrimSpace(n[i+3:])
	if len(strings.Fields(desc)) < 2 {
		return Doc{}, false
	}
	nameWord := regexp.MustCompile(`(?i)(^|[^\w-])` + regexp.QuoteMeta(name) + `($|[^\w-])`)
	text := nameWord.ReplaceAllString(body.String(), "$1$2")
	if len(strings.Fields(text)) < 30 {
		return Doc{}, false
	}
	return Doc{Name: name, Body: text, Query: desc}, true
}

// ContentScores are the content known-item set's MRR@10 in each mode.
type ContentScores struct {
	N                            int
	Seed, BestTags, BestContents float64
	Files, Passages, Embedded    int
	Bytes                        int64
}

// EvaluateContents writes docs as files under dir/files, builds a tag index
// (one record per file, no tags: as an untagged file has) and a passage
// index over them (with emb: every passage embedded), and scores each
// query's known item (MRR@10) with the seed rank, the best rank with scope
// tags, and the best rank with contents.
func EvaluateContents(ctx context.Context, dir string, docs []Doc, emb embed.Embedder) (ContentScores, error) {
	var cs ContentScores
	root := filepath.Join(dir, "files")
	if err := os.MkdirAll(filepath.Join(root, "pages"), 0o755); err != nil {
		return cs, err
	}
	files := make([]File, len(docs))
	var changes []content.Change
	for i, d := range docs {
		p := fmt.Sprintf("pages/%04d.txt", i+1)
		if err := os.WriteFile(filepath.Join(root, p), []byte(d.Body), 0o644); err != nil {
			return cs, err
		}
		files[i] = File{Path: p}
		changes = append(changes, content.Change{Op: content.Written, Path: p})
	}
	x, err := index.Open(filepath.Join(dir, "index"), index.Options{Embedder: emb})
	if err != nil {
		return cs, err
	}
	defer x.Close()
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	for i, f := range files {
		if err := x.Create(f.Path, "", uint64(i+1), at); err != nil {
			return cs, err
		}
	}
	px, err := passage.Open(passage.Options{Files: content.Dir(root), Embedder: emb, CPU: 1})
	if err != nil {
		return cs, err
	}
	defer px.Close()
	px.Apply(changes)
	if err := px.Settle(ctx); err != nil {
		return cs, err
	}
	st := px.Stats()
	cs.Files, cs.Passages, cs.Embedded, cs.Bytes = st.Files, st.Passages, st.Embedded, st.Bytes
	src := passage.DirSource(px, root)
	modes := []index.Query{{Rank: index.RankSeed}, {Rank: index.RankBest, Scope: index.ScopeTags}, {Rank: index.RankBest, Contents: src}}
	sums := make([]float64, len(modes))
	for i, d := range docs {
		for m, like := range modes {
			q := like
			q.Text, q.Limit = d.Query, 10
			res, err := x.Query(ctx, q)
			if err != nil {
				return cs, fmt.Errorf("query %q: %w", d.Query, err)
			}
			ranked := make([]string, len(res))
			for j, r := range res {
				ranked[j] = r.Path
			}
			sums[m] += Score(ranked, map[string]int{files[i].Path: 2}).MRR10
		}
	}
	n := float64(len(docs))
	cs.N = len(docs)
	cs.Seed, cs.BestTags, cs.BestContents = sums[0]/n, sums[1]/n, sums[2]/n
	return cs, nil
}
