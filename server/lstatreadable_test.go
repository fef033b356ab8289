package server_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/semfs/semfs/server"
)

// LstatReadable says a file is readable exactly where `test -r` run as the
// caller (a process of the caller's uid, gid and groups: the kernel's own
// answer, path walk included) says so, on generated trees of directories and
// files of random owners, groups and modes, for several callers, asked twice
// (the second answer from the grants the first remembered), then again after
// random chmods and chowns (a remembered grant must not outlive the mode or
// owner it was given for).
func TestLstatReadableIsTestR(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("root mode needs a daemon running as root")
	}
	r := seeded(t, 32)
	callers, owners, groups := permCallers()
	dirModes := []os.FileMode{0o755, 0o711, 0o700, 0o750, 0o705}
	fileModes := []os.FileMode{0o644, 0o600, 0o640, 0o604, 0o000, 0o400, 0o040}
	for round := range 5 {
		f := searchableFixture(t)
		dirs := []string{""}
		var files []string
		for i := range 40 {
			parent := dirs[r.IntN(len(dirs))]
			p := filepath.Join(parent, fmt.Sprintf("n%d", i))
			full := filepath.Join(f.dir, p)
			if r.IntN(4) == 0 {
				if err := os.Mkdir(full, 0o755); err != nil {
					t.Fatal(err)
				}
				dirs = append(dirs, p)
				continue
			}
			if err := os.WriteFile(full, []byte(p), 0o644); err != nil {
				t.Fatal(err)
			}
			files = append(files, p)
		}
		scramble := func() {
			for _, p := range dirs[1:] {
				chown(t, filepath.Join(f.dir, p), owners[r.IntN(len(owners))], groups[r.IntN(len(groups))], dirModes[r.IntN(len(dirModes))])
			}
			for _, p := range files {
				if r.IntN(2) == 0 {
					chown(t, filepath.Join(f.dir, p), owners[r.IntN(len(owners))], groups[r.IntN(len(groups))], fileModes[r.IntN(len(fileModes))])
				}
			}
		}
		paths := append(append([]string(nil), files...), "missing", dirs[len(dirs)-1]+"/missing")
		for pass := range 3 {
			if pass != 1 {
				scramble()
			}
			for _, c := range callers {
				ctx := caller(c.uid, c.gid, c.groups...)
				want := testAs(t, f.dir, c, []string{"-r"}, paths)
				_, errs := f.fs.LstatReadable(ctx, paths)
				for i, p := range paths {
					if got := errs[i] == nil; got != want[i][0] {
						t.Fatalf("round %d pass %d: uid %d, %q: LstatReadable readable=%v (%v), test -r says %v",
							round, pass, c.uid, p, got, errs[i], want[i][0])
					}
					if errs[i] != nil && server.KindOf(errs[i]) != server.KindPermission && server.KindOf(errs[i]) != server.KindNotFound {
						t.Fatalf("round %d: uid %d, %q: %v, want permission denied or not found", round, c.uid, p, errs[i])
					}
				}
			}
		}
	}
}

// permCaller is a caller the permission oracles act as.
type permCaller struct {
	uid, gid uint32
	groups   []uint32
}

// permCallers returns the callers the permission oracles act as, and the
// owners and groups they give files: each caller owns some, is in some
// groups (one through a supplementary group only) and neither of others.
func permCallers() (callers []permCaller, owners, groups []int) {
	return []permCaller{{1000, 1000, nil}, {2000, 2000, []uint32{4000}}, {3000, 3000, nil}},
		[]int{0, 1000, 2000}, []int{0, 1000, 4000}
}

// searchableFixture is newFixture with the test's own directories above the
// export searchable by anyone: the callers' processes (test -r) walk from /.
func searchableFixture(t *testing.T) *fixture {
	f := newFixture(t)
	for d := filepath.Dir(f.dir); d != "/" && strings.HasPrefix(d, os.TempDir()); d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

func chown(t *testing.T, p string, uid, gid int, mode os.FileMode) {
	t.Helper()
	if err := os.Lchown(p, uid, gid); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
}

// AccessOf answers, for a file or directory and the attributes just read
// of it, exactly what `test -r`, `test -w` and `test -x` run as the caller
// say (the kernel's own answer: owner, group, groups, mode), for generated
// owners, groups and modes and several callers, asked three times: the first
// from the kernel, the second from the grants the first remembered, the third
// after random chmods and chowns (a grant must not outlive the mode or owner
// it was given for). Everything sits in the export's searchable root, so that
// `test`'s path walk, which AccessOf leaves to each call, decides nothing.
func TestAccessOfIsTestRWX(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("root mode needs a daemon running as root")
	}
	r := seeded(t, 33)
	callers, owners, groups := permCallers()
	modes := []os.FileMode{0o755, 0o711, 0o700, 0o750, 0o705, 0o644, 0o600, 0o640, 0o604, 0o000, 0o400, 0o040, 0o070, 0o007, 0o777, 0o666, 0o123}
	f := searchableFixture(t)
	var paths []string
	for i := range 30 {
		p := fmt.Sprintf("n%d", i)
		full := filepath.Join(f.dir, p)
		var err error
		if i%3 == 0 {
			err = os.Mkdir(full, 0o755)
		} else {
			err = os.WriteFile(full, []byte(p), 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	scramble := func() {
		for _, p := range paths {
			chown(t, filepath.Join(f.dir, p), owners[r.IntN(len(owners))], groups[r.IntN(len(groups))], modes[r.IntN(len(modes))])
		}
	}
	bits := []server.Access{server.MayRead, server.MayWrite, server.MayExec}
	for pass := range 3 {
		if pass != 1 {
			scramble()
		}
		for _, c := range callers {
			ctx := caller(c.uid, c.gid, c.groups...)
			want := testAs(t, f.dir, c, []string{"-r", "-w", "-x"}, paths)
			for i, p := range paths {
				a, err := f.fs.Lstat(ctx, p)
				if err != nil {
					t.Fatal(err)
				}
				got, err := f.fs.AccessOf(ctx, p, a, server.MayRead|server.MayWrite|server.MayExec)
				if err != nil {
					t.Fatal(err)
				}
				for k, bit := range bits {
					if (got&bit != 0) != want[i][k] {
						t.Fatalf("pass %d: uid %d, %q (mode %v, owner %d:%d): AccessOf %03b, test -rwx says %v",
							pass, c.uid, p, a.Mode, a.UID, a.GID, got, want[i])
					}
				}
			}
		}
	}
}

// testAs runs `test OP` for each of ops ("-r", "-w", "-x") on each of paths
// (below dir) in one process of caller c's credentials: got[i][k] is ops[k]'s
// answer for paths[i].
func testAs(t *testing.T, dir string, c permCaller, ops []string, paths []string) [][]bool {
	t.Helper()
	args := []string{"-c", `ops=$1; shift; for p; do for o in $ops; do if test $o "$p"; then echo y; else echo n; fi; done; done`, "sh", strings.Join(ops, " ")}
	for _, p := range paths {
		args = append(args, filepath.Join(dir, p))
	}
	cmd := exec.Command("/bin/sh", args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: c.uid, Gid: c.gid, Groups: c.groups}}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("test %v as %d: %v", ops, c.uid, err)
	}
	lines := strings.Fields(string(out))
	if len(lines) != len(ops)*len(paths) {
		t.Fatalf("test %v as %d: %d answers for %d paths", ops, c.uid, len(lines), len(paths))
	}
	got := make([][]bool, len(paths))
	for i := range paths {
		got[i] = make([]bool, len(ops))
		for k := range ops {
			got[i][k] = lines[len(ops)*i+k] == "y"
		}
	}
	return got
}
