package integration_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/semfs/semfs/client"
	"github.com/semfs/semfs/integration/semfstest"
)

// .semfs/grep/<pattern>/ through 9P and NFS: its matches file is GNU grep -rn's
// output (as a set of lines; files not UTF-8 on some lines, and binary ones,
// included), its .results.json the /v1/grep answer (asked with all), and
// its links the matching files, most matching lines first.
func TestGrepDirectoryThroughNFSAnd9P(t *testing.T) {
	gnu := requireGNUGrep(t)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 5))
	data := filepath.Join(t.TempDir(), "data")
	files := map[string]string{"a/b/slash.txt": "see a/b here\n100% done\nmail me@i.example\n"}
	for i := range 25 {
		files[fmt.Sprintf("%s/m%02d.txt", []string{"x", "y/z"}[i%2], i)] = genGrepText(r, 1+r.IntN(30))
	}
	// Not content-indexed, read by GNU grep all the same: valid lines of a
	// file not UTF-8 on others print; a binary file prints none.
	for i := range 4 {
		var sb strings.Builder
		for j := range 3 + r.IntN(8) {
			line := genGrepLine(r)
			if i%2 == 0 && j%2 == 0 {
				line = "\xe9t\xe9 " + line
			}
			if i%2 == 1 && j == 1 {
				line += "\x00"
			}
			sb.WriteString(line + "\n")
		}
		files[fmt.Sprintf("w/n%02d.dat", i)] = sb.String()
	}
	writeFiles(t, data, files)
	d := semfstest.Start(t, semfstest.Options{Data: data, ModelDir: "off"})
	waitContentSettled(t, d)
	v := d.MountNFS(t, "/", 0)
	root9 := d.Attach9P(t, "/", 0)

	type tc struct {
		dir   string
		req   client.GrepRequest
		flags []string
	}
	cases := []tc{
		{"a%2Fb", client.GrepRequest{Pattern: "a/b"}, []string{"-E"}},
		{"100%25", client.GrepRequest{Pattern: "100%"}, []string{"-E"}},
		{"me%40i@F", client.GrepRequest{Pattern: "me@i", Fixed: true}, []string{"-F"}},
		{"%2E", client.GrepRequest{Pattern: "."}, []string{"-E"}},
		{"%2E%2E@F", client.GrepRequest{Pattern: "..", Fixed: true}, []string{"-F"}},
	}
	for range 12 {
		pat := genGrepPattern(r)
		if strings.ContainsAny(pat, "/%@") || pat == "" {
			continue
		}
		name := pat
		if pat == "." || pat == ".." {
			// The names "." and ".." are the directory and its parent.
			name = strings.ReplaceAll(pat, ".", "%2E")
		}
		c := tc{name, client.GrepRequest{Pattern: pat}, []string{"-E"}}
		if r.IntN(2) == 0 {
			c.dir += "@i"
			c.req.IgnoreCase = true
			c.flags = append(c.flags, "-i")
		}
		cases = append(cases, c)
	}
	for _, c := range cases {
		dir := ".semfs/grep/" + c.dir
		// matches: GNU grep -rn's lines.
		out, _ := gnuRun(t, gnu, data, append([]string{"-n"}, c.flags...), c.req.Pattern)
		want := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		slices.Sort(want)
		for door, b := range map[string][]byte{"9P": read9P(t, root9, dir+"/matches"), "NFS": nfsRead(t, v, dir+"/matches")} {
			got := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Fatalf("%s %s/matches:\n%s\nGNU grep -rn %v:\n%s", door, dir, b, c.flags, out)
			}
		}
		// .results.json: the API's answer; the links: its files by count.
		c.req.All = true
		ans, err := d.Client.Grep(d.Context(), c.req)
		if err != nil {
			t.Fatal(err)
		}
		var got client.GrepResponse
		if err := json.Unmarshal(read9P(t, root9, dir+"/.results.json"), &got); err != nil {
			t.Fatal(err)
		}
		if !slices.EqualFunc(got.Matches, ans.Matches, func(a, b client.GrepMatch) bool { return a.Path == b.Path && a.Line == b.Line }) {
			t.Fatalf("%s/.results.json differs from /v1/grep", dir)
		}
		counts := map[string]int{}
		var order []string
		for _, m := range ans.Matches {
			if counts[m.Path] == 0 {
				order = append(order, m.Path)
			}
			counts[m.Path] += max(1, m.Lines) // a binary match: the lines it stands for
		}
		slices.SortStableFunc(order, func(a, b string) int { return counts[b] - counts[a] })
		wantNames := []string{".results.json", "matches"}
		for i, p := range order {
			wantNames = append(wantNames, fmt.Sprintf("%0*d-%s", max(2, len(fmt.Sprint(len(order)))), i+1, filepath.Base(p)))
		}
		slices.Sort(wantNames)
		if names := names9P(t, walk9P(t, root9, dir)); !slices.Equal(sortedCopy(names), wantNames) {
			t.Fatalf("9P listing of %s: %v, want %v", dir, names, wantNames)
		}
		if names := nfsNames(t, v, dir); !slices.Equal(sortedCopy(names), wantNames) {
			t.Fatalf("NFS listing of %s: %v, want %v", dir, names, wantNames)
		}
		if len(order) > 0 {
			link := walk9P(t, root9, dir+"/"+strings.TrimPrefix(wantLinkName(order, 0), ""))
			if target, err := link.Readlink(); err != nil || target != "../../../"+order[0] {
				t.Fatalf("readlink: %q %v", target, err)
			}
		}
	}
	// A file written over 9P is found at once.
	if err := write9PWhole(root9, "x/m00.txt", []byte("fresh needle-42\n")); err != nil {
		t.Fatal(err)
	}
	if b := read9P(t, root9, ".semfs/grep/needle-42/matches"); string(b) != "x/m00.txt:1:fresh needle-42\n" {
		t.Fatalf("after a write: %q", b)
	}
	// An invalid pattern is EINVAL, not an empty directory.
	if _, _, err := root9.Walk([]string{".semfs", "grep", "a(b"}); err == nil {
		t.Fatal("walk to an invalid pattern succeeded")
	}
}

func wantLinkName(order []string, i int) string {
	return fmt.Sprintf("%0*d-%s", max(2, len(fmt.Sprint(len(order)))), i+1, filepath.Base(order[i]))
}
