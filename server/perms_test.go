package server_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/semfs/semfs/server"
)

func caller(uid, gid uint32, groups ...uint32) context.Context {
	return server.WithIdentity(context.Background(), server.Identity{UID: uid, HasUID: true, GID: gid, HasGID: true, Groups: groups, Proto: "test"})
}

// rootTree lays out, in f.dir (shared 0777):
//
//	secret      root 0600
//	private/    root 0700, holding f (root 0644) and ln (symlink)
//	pub/        root 0755, holding f (root 0644)
//	group       root:4000 0640
//	sgid/       root:4000 02777 (setgid)
//	mine        1000:1000 0600
func rootTree(t *testing.T, dir string) {
	t.Helper()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	file := func(p string, mode os.FileMode, uid, gid int) {
		t.Helper()
		full := filepath.Join(dir, p)
		must(os.WriteFile(full, []byte(p), mode))
		must(os.Chmod(full, mode))
		must(os.Lchown(full, uid, gid))
	}
	must(os.Mkdir(filepath.Join(dir, "private"), 0o700))
	must(os.Mkdir(filepath.Join(dir, "pub"), 0o755))
	must(os.Mkdir(filepath.Join(dir, "sgid"), 0o777))
	must(os.Chown(filepath.Join(dir, "sgid"), 0, 4000))
	must(os.Chmod(filepath.Join(dir, "sgid"), 0o777|os.ModeSetgid))
	must(os.Symlink("f", filepath.Join(dir, "private", "ln")))
	file("secret", 0o600, 0, 0)
	file("private/f", 0o644, 0, 0)
	file("pub/f", 0o644, 0, 0)
	file("group", 0o640, 0, 4000)
	file("mine", 0o600, 1000, 1000)
}

// TestRootModeChecksCallers: every core call a door makes for uid 1000 is
// decided as the kernel decides it for uid 1000 (gid 1000, its groups), while
// the daemon's own calls and root's are not checked.
func TestRootModeChecksCallers(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("root mode needs a daemon running as root")
	}
	f := newFixture(t)
	rootTree(t, f.dir)
	u := caller(1000, 1000)
	denied := func(what string, err error) {
		t.Helper()
		if err == nil || server.KindOf(err) != server.KindPermission {
			t.Errorf("%s: %v, want permission denied", what, err)
		}
	}
	_, err := f.fs.Open(u, "secret", os.O_RDONLY)
	denied("open root's 0600 file", err)
	_, err = f.fs.Open(u, "pub/f", os.O_RDWR)
	denied("open root's 0644 file for writing", err)
	_, err = f.fs.Open(u, "private/f", os.O_RDONLY)
	denied("open a file in root's 0700 directory", err)
	_, err = f.fs.Lstat(u, "private/f")
	denied("lstat in root's 0700 directory", err)
	_, err = f.fs.LstatInline(u, "private/f")
	denied("inline lstat in root's 0700 directory", err)
	_, err = f.fs.ReadDir(u, "private")
	denied("list root's 0700 directory", err)
	_, err = f.fs.Readlink(u, "private/ln")
	denied("readlink in root's 0700 directory", err)
	_, _, err = f.fs.Create(u, "pub/x", 0o644, true)
	denied("create in root's 0755 directory", err)
	_, _, ok, err := f.fs.TryCreate(u, "pub/x", 0o644, true)
	if ok {
		denied("try-create in root's 0755 directory", err)
	}
	_, err = f.fs.Mkdir(u, "pub/d", 0o755)
	denied("mkdir in root's 0755 directory", err)
	_, err = f.fs.Symlink(u, "f", "pub/l")
	denied("symlink in root's 0755 directory", err)
	_, err = f.fs.Mkfifo(u, "pub/p", 0o644)
	denied("mkfifo in root's 0755 directory", err)
	denied("remove in root's 0755 directory", f.fs.Remove(u, "pub/f", false))
	denied("rename out of root's 0755 directory", f.fs.Rename(u, "pub/f", "stolen"))
	uid0, mode := uint32(0), os.FileMode(0o666)
	uid1000, size := uint32(1000), int64(0)
	now := time.Unix(1, 0)
	// What only the owner may do whatever the mode bits say is EPERM (the
	// kernel's word, kept as KindNotPermitted); what the bits refuse, EACCES.
	notPermitted := func(what string, err error) {
		t.Helper()
		if err == nil || server.KindOf(err) != server.KindNotPermitted {
			t.Errorf("%s: %v, want operation not permitted", what, err)
		}
	}
	for what, c := range map[string]struct {
		sa    server.SetAttr
		owner bool // refused because the caller is not the owner: EPERM
	}{
		"chown root's file to the caller": {server.SetAttr{UID: &uid1000}, true},
		"chmod root's file":               {server.SetAttr{Mode: &mode}, true},
		"truncate root's file":            {server.SetAttr{Size: &size}, false},
		"set root's file's times":         {server.SetAttr{Mtime: &now}, true},
		"touch root's file":               {server.SetAttr{MtimeNow: true, AtimeNow: true}, false},
	} {
		_, err := f.fs.SetAttr(u, "pub/f", c.sa)
		if c.owner {
			notPermitted(what, err)
		} else {
			denied(what, err)
		}
	}
	_, err = f.fs.SetAttr(u, "mine", server.SetAttr{UID: &uid0})
	notPermitted("chown own file to root", err)
	if got, err := f.fs.Access(u, "secret", server.MayRead|server.MayWrite|server.MayExec); err != nil || got != 0 {
		t.Errorf("access to root's 0600 file: %v %v, want none", got, err)
	}
	if got, err := f.fs.Access(u, "pub", server.MayRead|server.MayWrite|server.MayExec); err != nil || got != server.MayRead|server.MayExec {
		t.Errorf("access to root's 0755 directory: %v %v, want r-x", got, err)
	}
	// A descriptor the daemon opened, used for the caller (NFS READ and WRITE).
	fl, err := f.fs.Open(context.Background(), "secret", os.O_RDWR)
	if err != nil {
		t.Fatal(err)
	}
	denied("read through the daemon's descriptor", fl.CheckIO(u, false))
	denied("write through the daemon's descriptor", fl.CheckIO(u, true))
	if err := fl.CheckIO(caller(0, 0), true); err != nil {
		t.Errorf("root's write through the daemon's descriptor: %v", err)
	}
	fl.Close()
	// The kernel's answers are remembered per caller and file state: a chmod
	// or chown after a granted read is seen at the next request.
	fl, err = f.fs.Open(context.Background(), "pub/f", os.O_RDWR)
	if err != nil {
		t.Fatal(err)
	}
	for i, change := range []func() error{
		func() error { return os.Chmod(filepath.Join(f.dir, "pub/f"), 0o600) },
		func() error { return os.Chown(filepath.Join(f.dir, "pub/f"), 0, 4000) },
	} {
		must := func(err error) {
			if err != nil {
				t.Fatal(err)
			}
		}
		must(os.Chmod(filepath.Join(f.dir, "pub/f"), 0o644))
		if i == 1 {
			must(os.Chmod(filepath.Join(f.dir, "pub/f"), 0o640))
			must(os.Chown(filepath.Join(f.dir, "pub/f"), 0, 1000))
		}
		for range 2 {
			if err := fl.CheckIO(u, false); err != nil {
				t.Fatalf("change %d: read of a readable file: %v", i, err)
			}
		}
		must(change())
		denied(fmt.Sprintf("change %d: read after access was taken away", i), fl.CheckIO(u, false))
	}
	fl.Close()
	os.Chmod(filepath.Join(f.dir, "pub/f"), 0o644)
	os.Chown(filepath.Join(f.dir, "pub/f"), 0, 0)

	// Groups: root:4000 0640 is readable with group 4000 only.
	_, err = f.fs.Open(u, "group", os.O_RDONLY)
	denied("open a 0640 file of a group the caller is not in", err)
	if fl, err := f.fs.Open(caller(1000, 1000, 4000), "group", os.O_RDONLY); err != nil {
		t.Errorf("open a 0640 file of a group the caller is in: %v", err)
	} else {
		fl.Close()
	}
	if fl, err := f.fs.Open(caller(1000, 4000), "group", os.O_RDONLY); err != nil {
		t.Errorf("open a 0640 file of the caller's primary group: %v", err)
	} else {
		fl.Close()
	}

	// The caller's own files, and new files' owners and groups.
	if fl, err := f.fs.Open(u, "mine", os.O_RDWR); err != nil {
		t.Errorf("open own 0600 file: %v", err)
	} else {
		fl.Close()
	}
	m := os.FileMode(0o640)
	if _, err := f.fs.SetAttr(u, "mine", server.SetAttr{Mode: &m}); err != nil {
		t.Errorf("chmod own file: %v", err)
	}
	owner := func(p string, uid, gid uint32) {
		t.Helper()
		a, err := f.fs.Lstat(context.Background(), p)
		if err != nil || a.UID != uid || a.GID != gid {
			t.Errorf("%s owned by %d:%d (%v), want %d:%d", p, a.UID, a.GID, err, uid, gid)
		}
	}
	newFile := func(ctx context.Context, p string) {
		t.Helper()
		fl, _, err := f.fs.Create(ctx, p, 0o755|os.ModeSetgid, true)
		if err != nil {
			t.Fatalf("create %s: %v", p, err)
		}
		fl.Close()
	}
	newFile(u, "new")
	owner("new", 1000, 1000)
	newFile(u, "sgid/new") // a setgid directory gives its group
	owner("sgid/new", 1000, 4000)
	if a, _ := f.fs.Lstat(u, "sgid/new"); a.Mode&os.ModeSetgid != 0 {
		t.Error("uid 1000 made a setgid executable of group 4000, which it is not in")
	}
	if _, err := f.fs.Mkdir(u, "sgid/dir", 0o755); err != nil {
		t.Fatal(err)
	}
	owner("sgid/dir", 1000, 4000)
	if a, _ := f.fs.Lstat(u, "sgid/dir"); a.Mode&os.ModeSetgid == 0 {
		t.Error("a directory made in a setgid directory is not setgid")
	}
	// A group asked for at create (9P) is given where the caller may have it.
	asking := func(gid uint32, groups ...uint32) context.Context {
		id := server.IdentityFrom(caller(1000, 1000, groups...))
		id.CreateGID, id.HasCreateGID = gid, true
		return server.WithIdentity(context.Background(), id)
	}
	newFile(asking(4000, 4000), "member")
	owner("member", 1000, 4000)
	newFile(asking(0), "not-member")
	owner("not-member", 1000, 1000)
	// Anonymous door callers are nobody.
	newFile(server.WithIdentity(context.Background(), server.Identity{Proto: "test"}), "anon")
	owner("anon", server.NobodyUID, server.NobodyGID)

	// Nothing refused happened; root and the daemon itself are not checked.
	for _, p := range []string{"pub/x", "pub/d", "pub/l", "pub/p", "stolen"} {
		if _, err := os.Lstat(filepath.Join(f.dir, p)); !os.IsNotExist(err) {
			t.Errorf("%s exists after a refused call: %v", p, err)
		}
	}
	owner("pub/f", 0, 0)
	owner("mine", 1000, 1000)
	for _, ctx := range []context.Context{context.Background(), caller(0, 0)} {
		fl, err := f.fs.Open(ctx, "private/f", os.O_RDWR)
		if err != nil {
			t.Fatalf("root: open private/f: %v", err)
		}
		fl.Close()
	}
	if _, err := f.fs.SetAttr(caller(0, 0), "mine", server.SetAttr{UID: &uid0}); err != nil {
		t.Errorf("root: chown to root: %v", err)
	}

	// A root caller's new file is its uid's and gid's, but in a setgid
	// directory the directory's group, as a local file system, Linux's nfsd
	// and ganesha give it (the differential test against ganesha found the
	// difference); a group it asks for at create wins.
	newFile(caller(0, 0), "root-0")
	owner("root-0", 0, 0)
	newFile(caller(0, 5), "root-5")
	owner("root-5", 0, 5)
	newFile(caller(0, 0), "sgid/root-0")
	owner("sgid/root-0", 0, 4000)
	newFile(caller(0, 5), "sgid/root-5")
	owner("sgid/root-5", 0, 4000)
	rootAsking := server.IdentityFrom(caller(0, 0))
	rootAsking.CreateGID, rootAsking.HasCreateGID = 7, true
	newFile(server.WithIdentity(context.Background(), rootAsking), "root-asks-7")
	owner("root-asks-7", 0, 7)
	// The attributes a create hands the front end are the file's final ones.
	fl, _, err = f.fs.Create(caller(0, 5), "root-5b", 0o644, true)
	if err != nil {
		t.Fatal(err)
	}
	if a, ok := fl.Created(); !ok || a.UID != 0 || a.GID != 5 {
		t.Errorf("Created() of root-5b: %+v %v, want owner 0:5", a, ok)
	}
	fl.Close()
}

// TestCallerCredentialsStayInTheirCall: callers of both kinds, at once on every
// thread, never see each other's credentials: uid 1000 is refused root's file
// every time and root is granted it every time; afterwards every thread of the
// process is back to the daemon's fsuid, fsgid and groups.
func TestCallerCredentialsStayInTheirCall(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("root mode needs a daemon running as root")
	}
	f := newFixture(t)
	rootTree(t, f.dir)
	before := threadCreds(t)
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := caller(1000, 1000)
			switch g % 4 {
			case 0, 2:
				ctx = caller(0, 0)
			case 1: // with groups: the daemon's come back after each call
				ctx = caller(1000, 1000, 4000, 4001)
			}
			for range 300 {
				fl, err := f.fs.Open(ctx, "secret", os.O_RDONLY)
				if (err == nil) != (g%2 == 0) {
					t.Errorf("goroutine %d: open secret: %v", g, err)
					return
				}
				if err == nil {
					fl.Close()
				}
				if _, err := f.fs.LstatInline(ctx, "private/f"); (err == nil) != (g%2 == 0) {
					t.Errorf("goroutine %d: lstat private/f: %v", g, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	for tid, c := range threadCreds(t) {
		if c != before[""] {
			t.Errorf("thread %s holds %q after the calls, want the daemon's %q", tid, c, before[""])
		}
	}
}

// threadCreds returns each thread's Uid, Gid and Groups lines (real, effective,
// saved and file-system ids), by thread id; "" holds the process's own.
func threadCreds(t *testing.T) map[string]string {
	t.Helper()
	read := func(p string) string {
		fh, err := os.Open(p)
		if err != nil {
			return ""
		}
		defer fh.Close()
		var b strings.Builder
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			l := sc.Text()
			if strings.HasPrefix(l, "Uid:") || strings.HasPrefix(l, "Gid:") || strings.HasPrefix(l, "Groups:") {
				b.WriteString(l + "\n")
			}
		}
		return b.String()
	}
	out := map[string]string{"": read("/proc/self/status")}
	tids, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Skip("no /proc/self/task")
	}
	for _, d := range tids {
		if c := read(filepath.Join("/proc/self/task", d.Name(), "status")); c != "" {
			out[d.Name()] = c
		}
	}
	return out
}

// TestUnprivilegedDaemonKeepsItsAccess: a daemon that is not root checks nothing
// of its own (it has only its uid's access to give): a caller claiming another
// uid reads the daemon user's 0600 file, and new files stay the daemon's. The
// test runs itself again as uid 1000 for that.
func TestUnprivilegedDaemonKeepsItsAccess(t *testing.T) {
	if dir := os.Getenv("SEMFS_UNPRIVILEGED_DIR"); dir != "" {
		unprivilegedDaemon(t, dir)
		return
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root to run a daemon as another uid")
	}
	base := t.TempDir()
	bin := filepath.Join(base, "server.test")
	data, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(base, "data")
	for _, err := range []error{
		os.WriteFile(bin, data, 0o755), os.Chmod(base, 0o755), os.Chmod(filepath.Dir(base), 0o755),
		os.Mkdir(dir, 0o700), os.Chown(dir, 1000, 1000),
		os.WriteFile(filepath.Join(dir, "private"), []byte("the daemon's"), 0o600),
		os.Chown(filepath.Join(dir, "private"), 1000, 1000),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(bin, "-test.run=^TestUnprivilegedDaemonKeepsItsAccess$", "-test.v")
	cmd.Env = append(os.Environ(), "SEMFS_UNPRIVILEGED_DIR="+dir)
	cmd.Dir = base
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 1000, Gid: 1000}}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS") {
		t.Fatalf("as uid 1000: %v\n%s", err, out)
	}
}

func unprivilegedDaemon(t *testing.T, dir string) {
	fsys, err := server.New(dir, server.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close()
	other := caller(2000, 2000)
	if fsys.ChecksPermissions(other) {
		t.Error("an unprivileged daemon says it checks its callers")
	}
	fl, err := fsys.Open(other, "private", os.O_RDWR)
	if err != nil {
		t.Fatalf("open the daemon's 0600 file for another uid: %v", err)
	}
	if err := fl.CheckIO(other, true); err != nil {
		t.Errorf("CheckIO: %v", err)
	}
	fl.Close()
	nf, _, err := fsys.Create(other, "new", 0o644, true)
	if err != nil {
		t.Fatal(err)
	}
	nf.Close()
	if a, err := fsys.Lstat(other, "new"); err != nil || a.UID != uint32(os.Geteuid()) {
		t.Errorf("new file owned by %d (%v), want the daemon's %d", a.UID, err, os.Geteuid())
	}
}
