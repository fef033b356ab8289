package integration_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/semfs/semfs/integration/semfstest"
)

// semfs grep prints what GNU grep -r prints, run in the backing directory,
// for the same flags, on generated patterns over a generated text corpus,
// and on literals over that corpus and files GNU grep takes for binary (a
// NUL: a NUL ends a line too) or that are not UTF-8 on some or every line,
// which the content index leaves out and semfs grep still reads, as GNU grep
// does: -l names them and -c counts their matching lines. (Regular
// expressions stay on the text: Go's "." and negated classes match an
// encoding error, GNU grep's do not; docs/grep.md.)
// Files are compared as sets of lines, and with context as sets of "--"
// groups: GNU grep walks directories in their on-disk order, semfs in path
// order. -c prints every file searched, "path:0" included, as GNU grep does.
func TestGrepCLIMatchesGNUGrep(t *testing.T) {
	gnu := requireGNUGrep(t)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 3))
	data := filepath.Join(t.TempDir(), "data")
	files := map[string]string{}
	for i := range 40 {
		files[fmt.Sprintf("%s/g%02d.txt", []string{"a", "b/c", "d"}[i%3], i)] = genGrepText(r, 1+r.IntN(40))
	}
	text := []string{"a", "b", "d"}
	for i := range 16 {
		var sb strings.Builder
		for j := range 2 + r.IntN(10) {
			line := genGrepLine(r)
			switch i % 3 {
			case 0: // a NUL somewhere in the file, sometimes mid-line
				if j == 0 || r.IntN(4) == 0 {
					line += "\x00" + genGrepLine(r)
				}
			case 1: // every line not UTF-8
				line = "\xff " + line
			case 2: // some lines not UTF-8
				if r.IntN(3) == 0 {
					line = "\xfe" + line
				}
			}
			sb.WriteString(line + "\n")
		}
		files[fmt.Sprintf("bin/b%02d.dat", i)] = sb.String()
	}
	writeFiles(t, data, files)
	d := semfstest.Start(t, semfstest.Options{Data: data, ModelDir: "off", NineP: "off"})
	waitContentSettled(t, d)
	// same runs semfs grep with flags and GNU grep with gnuFlags, and
	// compares their output and exit codes.
	same := func(gnuFlags, flags []string, pat string, paths ...string) {
		t.Helper()
		want, wantCode := gnuRun(t, gnu, data, gnuFlags, pat, paths...)
		out, errOut, code := d.Run(append(append(append([]string{"grep"}, flags...), "--", pat), paths...)...)
		if code != wantCode || normalize(out) != normalize(want) {
			t.Fatalf("semfs grep %v %q %v: exit %d (GNU %d)\n--- semfs\n%s%s--- GNU grep\n%s", flags, pat, paths, code, wantCode, out, errOut, want)
		}
	}
	flagSets := [][]string{{"-n"}, {}, {"-i", "-n"}, {"-l"}, {"-c"}, {"-n", "-C", "1"}, {"-C", "2"}, {"-F", "-n"}, {"-in"}}
	for i := range 60 {
		flags := flagSets[i%len(flagSets)]
		pat := genGrepPattern(r)
		gnuFlags := append([]string{"-E"}, flags...)
		if slices.Contains(flags, "-F") {
			pat = grepWords[r.IntN(len(grepWords))]
			gnuFlags = flags
		}
		same(gnuFlags, flags, pat, text...)
	}
	// Literals over the whole tree, binary and non-UTF-8 files included.
	for i := range 40 {
		flags := [][]string{{"-F", "-l"}, {"-F", "-c"}, {"-F", "-n"}, {"-F", "-i", "-c"}}[i%4]
		same(flags, flags, grepWords[r.IntN(len(grepWords))])
	}
	// Operands: GNU grep -r names the file of each line unless its one
	// operand is a file; one file, one directory, or several of either.
	var names []string
	for p := range files {
		if !strings.HasPrefix(p, "bin/") { // context in binary files: not compared (docs/grep.md)
			names = append(names, p)
		}
	}
	slices.Sort(names)
	dirs := []string{"a", "b", "b/c", "d"}
	for i := range 45 {
		flags := flagSets[i%len(flagSets)]
		var ops []string
		switch i % 5 {
		case 0, 1:
			ops = []string{names[r.IntN(len(names))]}
		case 2:
			ops = []string{dirs[r.IntN(len(dirs))]}
		case 3:
			k := r.Perm(len(names))
			ops = []string{names[k[0]], names[k[1]]}
		case 4:
			// Not a file inside the directory: GNU grep searches it twice
			// then, semfs once (docs/grep.md).
			f := names[r.IntN(len(names))]
			ops = []string{f}
			for _, d := range r.Perm(len(dirs)) {
				if !strings.HasPrefix(f, dirs[d]+"/") {
					ops = append(ops, dirs[d])
					break
				}
			}
		}
		pat := grepWords[r.IntN(len(grepWords))]
		fixedFlags := append([]string{"-F"}, flags...)
		same(fixedFlags, fixedFlags, pat, ops...)
	}
	// A path argument narrows the search as it would GNU grep's.
	want, _ := gnuRun(t, gnu, data, []string{"-E"}, "e", "b/c")
	if out, _, _ := d.Run("grep", "e", "b/c"); normalize(out) != normalize(want) {
		t.Fatalf("with a path: semfs\n%s\nGNU grep\n%s", out, want)
	}
	// A bad pattern is exit 2 with a message, as GNU grep's.
	if _, errOut, code := d.Run("grep", "a(b"); code != 2 || errOut == "" {
		t.Fatalf("bad pattern: exit %d %q", code, errOut)
	}
}

func gnuRun(t *testing.T, gnu, dir string, flags []string, pattern string, paths ...string) (string, int) {
	t.Helper()
	args := append(append(append([]string{"-r"}, flags...), "-e", pattern), paths...)
	cmd := exec.Command(gnu, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LC_ALL=C.UTF-8")
	out, err := cmd.Output()
	code := 0
	if err != nil {
		code = cmd.ProcessState.ExitCode()
		if code != 1 {
			t.Fatalf("grep %q: %v", args, err)
		}
	}
	return string(out), code
}

// normalize sorts the output's "--" groups and the lines of a group without
// context, so that walk order does not count.
func normalize(s string) string {
	groups := strings.Split(strings.TrimSuffix(s, "\n"), "\n--\n")
	if len(groups) == 1 {
		lines := strings.Split(groups[0], "\n")
		slices.Sort(lines)
		return strings.Join(lines, "\n")
	}
	slices.Sort(groups)
	return strings.Join(groups, "\n--\n")
}
