package integration_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hugelgupf/p9/p9"
	"github.com/semfs/semfs/client"
	"github.com/semfs/semfs/integration/semfstest"
	nfsc "github.com/willscott/go-nfs-client/nfs"
)

// genNode is one entry of the generated test's model of the backing
// directory.
type genNode struct {
	dir     bool
	symlink bool
	size    int64
	// linked: one of the names of a file with another (a hard link). A
	// change through one name is a change of the other too, which no event
	// of the other's names: such files are only removed.
	linked bool
}

// genTree is the model: what the sequence made so far, by path.
type genTree map[string]*genNode

// pick is a random path of t for which ok holds ("" none), in path order so
// that a seed replays.
func (t genTree) pick(r *rand.Rand, ok func(p string, n *genNode) bool) string {
	var ps []string
	for p, n := range t {
		if ok(p, n) {
			ps = append(ps, p)
		}
	}
	if len(ps) == 0 {
		return ""
	}
	slices.Sort(ps)
	return ps[r.IntN(len(ps))]
}

// dirOf is a random directory to make something in ("" the root).
func (t genTree) dirOf(r *rand.Rand) string {
	if r.IntN(3) == 0 {
		return ""
	}
	return t.pick(r, func(_ string, n *genNode) bool { return n.dir })
}

// under lists p and everything below it.
func (t genTree) under(p string) []string {
	var out []string
	for q := range t {
		if q == p || strings.HasPrefix(q, p+"/") {
			out = append(out, q)
		}
	}
	slices.Sort(out)
	return out
}

func (t genTree) move(from, to string) {
	for _, q := range t.under(from) {
		t[to+q[len(from):]] = t[q]
		delete(t, q)
	}
}

func plain(_ string, n *genNode) bool { return !n.dir && !n.symlink && !n.linked }

// Random sequences of host operations, each run by the coreutils a user
// would run (mkdir, printf >, >>, truncate, chmod of files and directories,
// mv of files and directories, ln, ln -s, rm, rm -r, touch) against the
// backing directory while the daemon runs, interleaved with changes
// through NFS and 9P (creates and writes, chmods, touches, mkdirs, removes).
// The oracle is the sequence itself: after each operation the feed holds
// exactly its events, once each, with their op, path, old path and app (a
// tree removed: each entry once, in an order that replays), and revs grow
// by one throughout. SEMFS_CHANGES_SEED replays a sequence.
func TestChangesGeneratedHostSequences(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("SEMFS_CHANGES_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("SEMFS_CHANGES_SEED=%q: %v", s, err)
		}
	}
	r := rand.New(rand.NewPCG(seed, seed^0x5eed))
	d := semfstest.Start(t, semfstest.Options{ModelDir: "off", Args: []string{"--write-quiet", "50ms"}})
	f := newFeedReader(t, d)
	v := d.MountNFS(t, "/@editor", 0)
	root9 := d.Attach9P(t, "@notes", 0)
	var done []string
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("SEMFS_CHANGES_SEED=%d; the operations, the last one failing:\n  %s", seed, strings.Join(done, "\n  "))
		}
	})
	sh := func(args ...string) {
		t.Helper()
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir = d.Data
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%q: %v\n%s", args, err, out)
		}
	}
	walk9 := func(p string) p9.File {
		t.Helper()
		var names []string
		if p != "" {
			names = strings.Split(p, "/")
		}
		_, file, err := root9.Walk(names)
		if err != nil {
			t.Fatalf("9P walk %s: %v", p, err)
		}
		return file
	}
	tree := genTree{}
	n := 0
	fresh := func(dir, prefix string) string {
		n++
		return path.Join(dir, fmt.Sprintf("%s%03d", prefix, n))
	}
	data := func() string { return strings.Repeat("x", 1+r.IntN(40)) }
	// Modes keep the owner's rwx on directories: the daemon goes on
	// working in them whoever it runs as.
	dirModes := []os.FileMode{0o700, 0o711, 0o750, 0o755}
	fileModes := []os.FileMode{0o600, 0o640, 0o644, 0o700, 0o755}
	otherMode := func(p string, modes []os.FileMode) os.FileMode {
		st, err := os.Lstat(filepath.Join(d.Data, p))
		if err != nil {
			t.Fatal(err)
		}
		for {
			if m := modes[r.IntN(len(modes))]; m != st.Mode().Perm() {
				return m
			}
		}
	}

	// Each op does one change and returns its events as lines, with the
	// type and size (-1: not checked) each must have, or nil when the op
	// does not apply to the tree as it is.
	type want struct {
		line, typ string
		size      int64
	}
	type op struct {
		name   string
		weight int
		run    func() []want
	}
	ops := []op{
		{"mkdir", 4, func() []want {
			p := fresh(tree.dirOf(r), "d")
			sh("mkdir", p)
			tree[p] = &genNode{dir: true}
			return []want{{"mkdir host " + p, "dir", -1}}
		}},
		{"create", 5, func() []want {
			p, s := fresh(tree.dirOf(r), "f"), data()
			sh("sh", "-c", `printf %s "$1" > "$2"`, "-", s, p)
			tree[p] = &genNode{size: int64(len(s))}
			return []want{{"create host " + p, "file", int64(len(s))}}
		}},
		{"append", 4, func() []want {
			p := tree.pick(r, plain)
			if p == "" {
				return nil
			}
			s := data()
			sh("sh", "-c", `printf %s "$1" >> "$2"`, "-", s, p)
			tree[p].size += int64(len(s))
			return []want{{"write host " + p, "file", tree[p].size}}
		}},
		{"truncate", 3, func() []want {
			p := tree.pick(r, func(p string, n *genNode) bool { return plain(p, n) && n.size > 0 })
			if p == "" {
				return nil
			}
			size := r.Int64N(tree[p].size)
			sh("truncate", "-s", strconv.FormatInt(size, 10), p)
			tree[p].size = size
			return []want{{"truncate host " + p, "file", size}}
		}},
		{"chmod file", 3, func() []want {
			p := tree.pick(r, plain)
			if p == "" {
				return nil
			}
			sh("chmod", fmt.Sprintf("%o", otherMode(p, fileModes)), p)
			return []want{{"setattr host " + p, "file", tree[p].size}}
		}},
		{"chmod dir", 3, func() []want {
			p := tree.pick(r, func(_ string, n *genNode) bool { return n.dir })
			if p == "" {
				return nil
			}
			sh("chmod", fmt.Sprintf("%o", otherMode(p, dirModes)), p)
			return []want{{"setattr host " + p, "dir", -1}}
		}},
		{"touch", 3, func() []want {
			p := tree.pick(r, plain)
			if p == "" {
				return nil
			}
			sh("touch", p)
			return []want{{"setattr host " + p, "file", tree[p].size}}
		}},
		{"mv file", 3, func() []want {
			p := tree.pick(r, func(_ string, n *genNode) bool { return !n.dir && !n.linked })
			if p == "" {
				return nil
			}
			to := fresh(tree.dirOf(r), "m")
			sh("mv", p, to)
			tree.move(p, to)
			return []want{{"rename host " + to + " <- " + p, "", -1}}
		}},
		{"mv dir", 2, func() []want {
			p := tree.pick(r, func(_ string, n *genNode) bool { return n.dir })
			if p == "" {
				return nil
			}
			dir := tree.pick(r, func(q string, n *genNode) bool { return n.dir && q != p && !strings.HasPrefix(q, p+"/") })
			to := fresh(dir, "e")
			sh("mv", p, to)
			tree.move(p, to)
			return []want{{"rename host " + to + " <- " + p, "dir", -1}}
		}},
		{"ln", 2, func() []want {
			p := tree.pick(r, plain)
			if p == "" {
				return nil
			}
			to := fresh(tree.dirOf(r), "l")
			sh("ln", p, to)
			tree[p].linked = true
			tree[to] = &genNode{size: tree[p].size, linked: true}
			return []want{{"link host " + to, "file", tree[p].size}}
		}},
		{"ln -s", 2, func() []want {
			to := fresh(tree.dirOf(r), "s")
			sh("ln", "-s", "../target-"+strconv.Itoa(n), to)
			tree[to] = &genNode{symlink: true}
			return []want{{"symlink host " + to, "symlink", -1}}
		}},
		{"rm", 3, func() []want {
			p := tree.pick(r, func(_ string, n *genNode) bool { return !n.dir })
			if p == "" {
				return nil
			}
			sh("rm", p)
			delete(tree, p)
			return []want{{"remove host " + p, "", -1}}
		}},
		{"rm -r", 1, func() []want {
			p := tree.pick(r, func(_ string, n *genNode) bool { return n.dir })
			if p == "" {
				return nil
			}
			sh("rm", "-r", p)
			var ws []want
			for _, q := range tree.under(p) {
				typ := ""
				if tree[q].dir {
					typ = "dir"
				}
				ws = append(ws, want{"remove host " + q, typ, -1})
				delete(tree, q)
			}
			return ws
		}},
		// Through the doors, in the same tree.
		{"nfs create", 3, func() []want {
			p, s := fresh(tree.dirOf(r), "n"), data()
			w, err := v.OpenFile(p, 0o644)
			if err != nil {
				t.Fatalf("NFS create %s: %v", p, err)
			}
			if _, err := w.Write([]byte(s)); err != nil {
				t.Fatal(err)
			}
			w.Close()
			tree[p] = &genNode{size: int64(len(s))}
			return []want{{"create editor " + p, "file", -1}, {"write editor " + p, "file", int64(len(s))}}
		}},
		{"nfs create, host chmod", 1, func() []want {
			// The host's IN_ATTRIB right after the create's own.
			p := fresh(tree.dirOf(r), "c")
			if _, err := v.Create(p, 0o644); err != nil {
				t.Fatalf("NFS create %s: %v", p, err)
			}
			sh("chmod", "600", p)
			tree[p] = &genNode{}
			return []want{{"create editor " + p, "file", -1}, {"setattr host " + p, "file", 0}}
		}},
		{"nfs chmod", 1, func() []want {
			p := tree.pick(r, func(p string, n *genNode) bool { return n.dir || plain(p, n) })
			if p == "" {
				return nil
			}
			m := otherMode(p, fileModes)
			if tree[p].dir {
				m = otherMode(p, dirModes)
			}
			if err := v.Setattr(p, nfsc.Sattr3{Mode: nfsc.SetMode{SetIt: true, Mode: uint32(m)}}); err != nil {
				t.Fatalf("NFS chmod %s: %v", p, err)
			}
			return []want{{"setattr editor " + p, "", -1}}
		}},
		{"nfs touch", 1, func() []want {
			p := tree.pick(r, plain)
			if p == "" {
				return nil
			}
			if err := v.Setattr(p, nfsc.Sattr3{Atime: nfsc.SetTime{SetIt: nfsc.SetToServerTime},
				Mtime: nfsc.SetTime{SetIt: nfsc.SetToServerTime}}); err != nil {
				t.Fatalf("NFS touch %s: %v", p, err)
			}
			return []want{{"setattr editor " + p, "file", tree[p].size}}
		}},
		{"9p mkdir", 1, func() []want {
			dir := tree.dirOf(r)
			p := fresh(dir, "k")
			parent := walk9(dir)
			defer parent.Close()
			if _, err := parent.Mkdir(path.Base(p), 0o755, p9.NoUID, p9.NoGID); err != nil {
				t.Fatalf("9P mkdir %s: %v", p, err)
			}
			tree[p] = &genNode{dir: true}
			return []want{{"mkdir notes " + p, "dir", -1}}
		}},
		{"9p remove", 1, func() []want {
			p := tree.pick(r, func(_ string, n *genNode) bool { return !n.dir })
			if p == "" {
				return nil
			}
			dir := path.Dir(p)
			if dir == "." {
				dir = ""
			}
			parent := walk9(dir)
			defer parent.Close()
			if err := parent.UnlinkAt(path.Base(p), 0); err != nil {
				t.Fatalf("9P remove %s: %v", p, err)
			}
			delete(tree, p)
			return []want{{"remove notes " + p, "", -1}}
		}},
	}
	total := 0
	for _, o := range ops {
		total += o.weight
	}
	choose := func() op {
		k := r.IntN(total)
		for _, o := range ops {
			if k -= o.weight; k < 0 {
				return o
			}
		}
		panic("unreachable")
	}

	// Bounded in time for make test: as many operations as fit (at most 300).
	deadline := time.Now().Add(35 * time.Second)
	for count := 0; count < 300 && time.Now().Before(deadline); {
		o := choose()
		ws := o.run()
		if ws == nil {
			continue
		}
		count++
		var lines []string
		for _, w := range ws {
			lines = append(lines, w.line)
		}
		done = append(done, o.name+": "+strings.Join(lines, "; "))
		var got map[string]client.Change
		if len(ws) == 1 || strings.HasPrefix(o.name, "nfs create") {
			got = map[string]client.Change{}
			for _, c := range f.expect(lines...) {
				got[line(c)] = c
			}
		} else {
			got = f.expectReplaying(lines...)
		}
		for _, w := range ws {
			c := got[w.line]
			if w.typ != "" && c.Type != w.typ || w.size >= 0 && c.Size != w.size {
				t.Fatalf("%s: %s is %+v, want type %q size %d", o.name, w.line, c, w.typ, w.size)
			}
		}
	}
	t.Logf("seed %d: %d operations", seed, len(done))
	// Nothing late: a change made now is the next event.
	sh("mkdir", "end")
	done = append(done, "mkdir: mkdir host end")
	f.expect("mkdir host end")
}
