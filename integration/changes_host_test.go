package integration_test

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/semfs/semfs/client"
	"github.com/semfs/semfs/integration/semfstest"
)

// Host processes' changes in the backing directory, each made by the
// coreutils a user would run (not Go calls standing in for them), appear
// once each, in order, with their op, path, old path, type and app "host":
// directories made, moved and removed (one event for a directory moved, not
// one per file below it), files made, appended to (one event per settled
// burst), truncated, chmodded, linked, symlinked, moved, moved over
// another, a tree removed; then what host processes did while the daemon was down, which
// the start-up reconcile finds (a directory's chmod too, from the modes in
// the list of directories saved at the stop).
func TestChangesOfHostProcesses(t *testing.T) {
	d := semfstest.Start(t, semfstest.Options{ModelDir: "off", NFS: "off", NineP: "off"})
	f := newFeedReader(t, d)
	sh := func(script string) {
		t.Helper()
		cmd := exec.Command("sh", "-ec", script)
		cmd.Dir = d.Data
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", script, err, out)
		}
	}
	type want struct {
		line, typ string
		size      int64 // -1: not checked
	}
	steps := []struct {
		script string
		want   []want
	}{
		{"mkdir -p hd/sub", []want{{"mkdir host hd", "dir", -1}, {"mkdir host hd/sub", "dir", -1}}},
		{"printf hello > hd/sub/a.txt", []want{{"create host hd/sub/a.txt", "file", 5}}},
		// Two appends in one burst: one event, once it settled.
		{"echo more >> hd/sub/a.txt; echo again >> hd/sub/a.txt", []want{{"write host hd/sub/a.txt", "file", 16}}},
		{"truncate -s 2 hd/sub/a.txt", []want{{"truncate host hd/sub/a.txt", "file", 2}}},
		{"ln hd/sub/a.txt hd/b.txt", []want{{"link host hd/b.txt", "file", 2}}},
		{"ln -s sub/a.txt hd/s", []want{{"symlink host hd/s", "symlink", -1}}},
		{"chmod 600 hd/sub/a.txt", []want{{"setattr host hd/sub/a.txt", "file", 2}}},
		{"mv hd/b.txt hd/c.txt", []want{{"rename host hd/c.txt <- hd/b.txt", "file", -1}}},
		{"mv hd/sub hd/moved", []want{{"rename host hd/moved <- hd/sub", "dir", -1}}},
		{"printf x > hd/d.txt", []want{{"create host hd/d.txt", "file", 1}}},
		{"mv hd/d.txt hd/c.txt", []want{{"rename host hd/c.txt <- hd/d.txt", "file", -1}}},
		{"mkdir hd/empty", []want{{"mkdir host hd/empty", "dir", -1}}},
		{"rmdir hd/empty", []want{{"remove host hd/empty", "dir", -1}}},
		// A tree: children before their directory.
		{"rm -r hd", []want{{"remove host hd/s", "", -1}, {"remove host hd/moved/a.txt", "", -1},
			{"remove host hd/moved", "dir", -1}, {"remove host hd/c.txt", "", -1}, {"remove host hd", "dir", -1}}},
		{"mkdir olddir modedir; printf 12 > keep.txt; printf 123 > mode.txt", []want{{"mkdir host modedir", "dir", -1},
			{"mkdir host olddir", "dir", -1}, {"create host keep.txt", "file", 2}, {"create host mode.txt", "file", 3}}},
	}
	for _, s := range steps {
		sh(s.script)
		var lines []string
		for _, w := range s.want {
			lines = append(lines, w.line)
		}
		got := f.expectReplaying(lines...)
		for _, w := range s.want {
			c := got[w.line]
			if c.Type != w.typ || w.size >= 0 && c.Size != w.size {
				t.Errorf("%s: %s is %+v, want type %q size %d", s.script, w.line, c, w.typ, w.size)
			}
		}
	}

	// While the daemon is down: the start-up reconcile records what changed,
	// and the cursor goes on (a clean stop keeps the history).
	d.Stop()
	sh("mkdir down; printf abc > down/f.txt; mv olddir newdir; rm keep.txt; chmod 600 mode.txt; chmod 700 modedir")
	d.Restart()
	got := f.expect("mkdir host down", "rename host newdir <- olddir", "create host down/f.txt", "setattr host mode.txt",
		"setattr host modedir", "remove host keep.txt")
	if got[2].Size != 3 {
		t.Errorf("create while down: %+v, want size 3", got[2])
	}
}

// expectReplaying is expect for the changes of one host command, which the
// watcher may take in more than one burst when the machine is slow (rm -r
// unlinking a tree): each event once, in an order that replays (a
// directory made before what is in it, removed after), not necessarily the
// one listed. It returns the changes by line.
func (f *feedReader) expectReplaying(want ...string) map[string]client.Change {
	f.t.Helper()
	var got []client.Change
	deadline := time.Now().Add(30 * time.Second)
	for len(got) < len(want) && time.Now().Before(deadline) {
		got = append(got, f.read(10*time.Second)...)
	}
	if len(got) == len(want) {
		got = append(got, f.read(0)...)
	}
	by := map[string]client.Change{}
	pos := map[string]int{}
	var lines []string
	for i, c := range got {
		by[line(c)], pos[c.Path] = c, i
		lines = append(lines, line(c))
	}
	ok := len(got) == len(want)
	for _, w := range want {
		_, in := by[w]
		ok = ok && in
	}
	for _, c := range got {
		for _, d := range got {
			if c.Type != "dir" || !strings.HasPrefix(d.Path, c.Path+"/") {
				continue
			}
			if c.Op == "mkdir" && pos[d.Path] < pos[c.Path] || c.Op == "remove" && pos[d.Path] > pos[c.Path] {
				ok = false
			}
		}
	}
	if !ok {
		f.t.Fatalf("changes:\n  %s\nwant, in an order that replays:\n  %s\n%s", strings.Join(lines, "\n  "), strings.Join(want, "\n  "), f.d.Log())
	}
	return by
}
