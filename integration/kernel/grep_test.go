package kernel_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/semfs/semfs/client"
	"github.com/semfs/semfs/integration/kernel"
)

// grepCorpus is a small generated tree for the grep smoke check: its
// directory under the export root, its file count and the seed that made it.
type grepCorpus struct {
	Dir  string
	N    int
	Seed uint64
	rng  *rand.Rand
	text map[string]string
}

// writeGrepCorpus writes, on the host, n files of random lines drawn from a
// random vocabulary under data/grepsmoke (before the daemon starts, so its
// start-up reconcile indexes them). The seed is logged: a failure replays.
func writeGrepCorpus(t *testing.T, data string, n int) *grepCorpus {
	t.Helper()
	seed := uint64(time.Now().UnixNano())
	c := &grepCorpus{Dir: "grepsmoke", N: n, Seed: seed, rng: rand.New(rand.NewPCG(seed, 25)), text: map[string]string{}}
	t.Logf("grep smoke corpus: %d files, seed %d", n, seed)
	vocab := make([]string, 120)
	for i := range vocab {
		w := make([]byte, 4+c.rng.IntN(6))
		for j := range w {
			w[j] = byte('a' + c.rng.IntN(26))
		}
		vocab[i] = string(w)
	}
	for i := 0; i < n; i++ {
		var b strings.Builder
		for l := c.rng.IntN(20); l >= 0; l-- {
			for k := 1 + c.rng.IntN(8); k > 0; k-- {
				b.WriteString(vocab[c.rng.IntN(len(vocab))])
				b.WriteByte(" \t"[c.rng.IntN(2)])
			}
			b.WriteString("\n")
		}
		rel := fmt.Sprintf("%s/d%d/f%03d.txt", c.Dir, i%4, i)
		p := filepath.Join(data, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		c.text[rel] = b.String()
	}
	return c
}

// patterns draws one literal (a word of a random line) and one regular
// expression with a required literal (three letters of a word, then letters,
// blanks and two letters of the next word) from the corpus.
func (c *grepCorpus) patterns() (literal, regex string) {
	names := make([]string, 0, len(c.text))
	for n := range c.text {
		names = append(names, n)
	}
	slices.Sort(names)
	for {
		lines := strings.Split(strings.TrimSpace(c.text[names[c.rng.IntN(len(names))]]), "\n")
		ws := strings.Fields(lines[c.rng.IntN(len(lines))])
		if len(ws) < 2 {
			continue
		}
		i := c.rng.IntN(len(ws) - 1)
		return ws[i], regexp.QuoteMeta(ws[i][:3]) + "[a-z]*[[:blank:]]+" + regexp.QuoteMeta(ws[i+1][:2])
	}
}

// gnuGrepSmoke is the smoke form of the grep benchmark's GNU grep column
// (integration/bench/grep): GNU grep -rl in the guest, through the kernel
// NFS mount at mnt, cold (guest caches dropped) and warm, lists exactly the
// files POST /v1/grep answers for the same generated pattern: an independent
// oracle through a real kernel client.
func gnuGrepSmoke(t *testing.T, h *harness, sock string, c *grepCorpus, mnt string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cl := client.New(sock)
	for {
		hl, err := cl.Health(ctx)
		if err != nil {
			t.Fatalf("grep smoke: health: %v", err)
		}
		if hl.Content != nil && hl.Content.Files >= c.N && hl.Content.Pending == 0 {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("grep smoke: the content index did not settle on the %d corpus files: %+v", c.N, hl.Content)
		case <-time.After(100 * time.Millisecond):
		}
	}
	lit, re := c.patterns()
	for _, p := range []struct {
		pat   string
		fixed bool
	}{{lit, true}, {re, false}} {
		ans, err := cl.Grep(ctx, client.GrepRequest{Pattern: p.pat, Fixed: p.fixed, Paths: []string{"/" + c.Dir}, Limit: 1000000})
		if err != nil {
			t.Fatalf("grep smoke: /v1/grep %q: %v", p.pat, err)
		}
		var want []string
		for _, m := range ans.Matches {
			if r := strings.TrimPrefix(m.Path, c.Dir+"/"); len(want) == 0 || want[len(want)-1] != r {
				want = append(want, r)
			}
		}
		if len(want) == 0 {
			t.Fatalf("grep smoke: /v1/grep found no file for %q, drawn from the corpus (seed %d)", p.pat, c.Seed)
		}
		for _, cold := range []bool{true, false} {
			name := fmt.Sprintf("gnu-grep-fixed=%v-cold=%v", p.fixed, cold)
			out := h.step(t, mnt, name, 120*time.Second, kernel.GrepScript(mnt+"/"+c.Dir, p.pat, p.fixed, cold))
			run, err := kernel.ParseGrep(out)
			if err != nil {
				t.Fatal(err)
			}
			if run.Status != 0 || !slices.Equal(run.Files, want) {
				t.Fatalf("grep smoke (seed %d): GNU grep -rl %q in the guest through %s (cold=%v) exited %d listing\n%v\n/v1/grep's files:\n%v\nstderr: %s",
					c.Seed, p.pat, mnt, cold, run.Status, run.Files, want, run.Stderr)
			}
			t.Logf("grep smoke: %q (fixed=%v, cold=%v): %d files, GNU grep in the guest %.3fs", p.pat, p.fixed, cold, len(want), run.Seconds)
		}
	}
}
