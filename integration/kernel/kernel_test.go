package kernel_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/semfs/semfs/integration/kernel"
)

// Apps the guest's mounts act as. No path the tests create contains any of
// these words, so a keyword query for one matches on created_by only.
const (
	appNFS    = "kernel-nfs"
	app9P     = "kernel-9p"
	app9PFD   = "kernel-9pfd"
	appNotes  = "notes"
	appEditor = "editor"
	appUID    = "uidapp"
)

// semfsd is the real daemon under test, run inside the harness's netns.
type semfsd struct {
	bin, data, index, sock, ninepSock string
}

func (d *semfsd) argv() []string {
	return []string{d.bin, "serve", "--data", d.data, "--index", d.index, "--socket", d.sock,
		"--nfs", fmt.Sprintf("127.0.0.1:%d", nfsPort), "--9p", fmt.Sprintf("127.0.0.1:%d", ninepPort),
		"--9p-socket", d.ninepSock, "--model-dir", "off"}
}

// semfsBinary builds ./cmd/semfs into the run directory, or takes the
// binary named by $SEMFS_BIN (e.g. one .ci/run already built).
func semfsBinary(t *testing.T, h *harness) string {
	if p := os.Getenv("SEMFS_BIN"); p != "" {
		abs, err := filepath.Abs(p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(abs); err != nil {
			t.Fatalf("SEMFS_BIN: %v", err)
		}
		return abs
	}
	return buildGo(t, h.dir, "github.com/semfs/semfs/cmd/semfs", "semfs")
}

// cli runs `semfs CMD --socket SOCK ARGS...` on the host, as root or (uid >
// 0) as that uid with the socket's group (root) as a supplementary group: the
// control socket is 0660 root:root and register binds the caller's uid from
// SO_PEERCRED.
func (d *semfsd) cli(t *testing.T, uid uint32, cmd string, args ...string) (string, int) {
	t.Helper()
	c := exec.Command(d.bin, append([]string{cmd, "--socket", d.sock}, args...)...)
	if uid != 0 {
		c.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: uid, Groups: []uint32{0}}}
	}
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	err := c.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return out.String(), 0
	case errors.As(err, &ee):
		return out.String() + errb.String(), ee.ExitCode()
	default:
		t.Fatalf("semfs %s: %v", cmd, err)
		return "", -1
	}
}

type record struct {
	Path      string `json:"path"`
	CreatedBy string `json:"createdBy"`
	Task      string `json:"task"`
}

// query returns the results of `semfs query TEXT --json` (none: empty).
func (d *semfsd) query(t *testing.T, text string) []record {
	t.Helper()
	out, code := d.cli(t, 0, "query", text, "--json")
	if code != 0 && code != 1 {
		t.Fatalf("semfs query %q: exit %d: %s", text, code, out)
	}
	var resp struct {
		Results []record `json:"results"`
	}
	if code == 0 {
		if err := json.Unmarshal([]byte(out), &resp); err != nil {
			t.Fatalf("semfs query %q --json: %v: %s", text, err, out)
		}
	}
	return resp.Results
}

// expectQuery checks `semfs query text`: the answer is exactly path. Every
// name the tests use (app, task) is a word that occurs in no other file's
// path, creator or task, and the daemon runs keyword-only (--model-dir off), so
// nothing else may match. The default rank splits words at '-' (kernel-nfs is
// kernel + nfs), so a task that must match one file alone is one token.
func (d *semfsd) expectQuery(t *testing.T, text, path, createdBy string) {
	t.Helper()
	res := d.query(t, text)
	var all []string
	for _, r := range res {
		all = append(all, fmt.Sprintf("%s (createdBy=%q task=%q)", r.Path, r.CreatedBy, r.Task))
	}
	if len(res) == 0 || res[0].Path != path {
		t.Errorf("semfs query %s: got [%s], want %s first", text, strings.Join(all, ", "), path)
		return
	}
	if createdBy != "" && res[0].CreatedBy != createdBy {
		t.Errorf("semfs query %s: %s has createdBy %q, want %q", text, path, res[0].CreatedBy, createdBy)
	}
	for _, r := range res[1:] {
		if createdBy != "" && r.CreatedBy == createdBy {
			t.Errorf("semfs query %s: %s is also attributed to %q; only %s was created through that app", text, r.Path, createdBy, path)
		}
		if strings.Contains(r.Path, text) || strings.Contains(r.CreatedBy, text) || strings.Contains(r.Task, text) {
			t.Errorf("semfs query %s: unexpected keyword match %s (createdBy=%q task=%q)", text, r.Path, r.CreatedBy, r.Task)
		}
	}
	if len(res) != 1 {
		t.Errorf("semfs query %s: %d results, want exactly %s: %s", text, len(res), path, strings.Join(all, ", "))
	}
}

// get returns `semfs get PATH --json`, ok=false when the daemon has no record.
func (d *semfsd) get(t *testing.T, path string) (record, bool) {
	t.Helper()
	out, code := d.cli(t, 0, "get", path, "--json")
	if code == 1 {
		return record{}, false
	}
	if code != 0 {
		t.Fatalf("semfs get %s: exit %d: %s", path, code, out)
	}
	var r record
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("semfs get %s --json: %v: %s", path, err, out)
	}
	return r, true
}

// TestKernelClients boots one guest against the real `semfs serve` and, in
// that one boot, runs the POSIX battery through NFSv3, 9P/TCP and 9P/fd
// (virtio-serial), then cross-protocol coherence, attribution by mount and
// by uid, tags across renames, and restarts of the daemon (SIGTERM, SIGKILL)
// under an open NFS file. Restarts come last: they end the 9P sessions.
func TestKernelClients(t *testing.T) {
	h := newHarness(t)
	t0 := time.Now()
	d := &semfsd{
		bin:       semfsBinary(t, h),
		data:      filepath.Join(h.dir, "data"),
		index:     filepath.Join(h.dir, "index"),
		sock:      filepath.Join(h.dir, "ctl.sock"),
		ninepSock: filepath.Join(h.dir, "9p.sock"),
	}
	h.mark("go build ./cmd/semfs", t0)
	makeListingDir(t, filepath.Join(d.data, "list5000"), 5000)
	xdev := mountInsideBacking(t, d) // before the daemon: its mount namespace is its own
	h.srv = &kernel.Server{
		Netns:    h.ns,
		Argv:     [][]string{d.argv()},
		WaitTCP:  []string{fmt.Sprintf("127.0.0.1:%d", nfsPort), fmt.Sprintf("127.0.0.1:%d", ninepPort)},
		WaitUnix: []string{d.sock, d.ninepSock},
		LogPath:  filepath.Join(h.dir, "semfs.log"),
	}
	t0 = time.Now()
	if err := h.srv.Start(h.ctx, 90*time.Second); err != nil {
		t.Fatalf("semfs serve: %v\n%s", err, tail(h.srv.LogPath, 30))
	}
	h.mark("semfs serve ready", t0)
	defer func() {
		if t.Failed() {
			t.Logf("semfs log (%s), last 40 lines:\n%s", h.srv.LogPath, tail(h.srv.LogPath, 40))
		}
	}()
	h.boot(d.ninepSock)
	// QEMU connects a reconnect=1 chardev asynchronously; bytes the guest
	// sends before that would be lost, so the 9P/fd mount waits for it.
	if err := h.vm.WaitNinePConnected(30 * time.Second); err != nil {
		t.Fatal(err)
	}

	nfs := mnt{"nfs", "/mnt/nfs", d.data}
	p9 := mnt{"9p-tcp", "/mnt/9p", d.data}
	p9fd := mnt{"9p-fd", "/mnt/9pfd", d.data}
	t0 = time.Now()
	h.step(t, "all", "mount", 120*time.Second, fmt.Sprintf(`
mount_nfs /@%s /mnt/nfs %d
mount_9p_tcp @%s /mnt/9p %d
mount_9p_fd @%s /mnt/9pfd
mount_nfs /@%s /mnt/notes %d
mount_9p_tcp @%s /mnt/editor %d
mount_nfs / /mnt/root %d
grep -E ' (nfs|9p) ' /proc/mounts`, appNFS, nfsPort, app9P, ninepPort, app9PFD, appNotes, nfsPort, appEditor, ninepPort, nfsPort))
	h.mark("six mounts", t0)

	for _, m := range []mnt{nfs, p9, p9fd} {
		t0 = time.Now()
		t.Run("battery/"+m.Name, func(t *testing.T) { h.battery(t, m, "b-"+m.Name, "list5000", 5000) })
		h.mark("battery "+m.Name, t0)
	}
	t.Run("battery/created_by", func(t *testing.T) {
		for _, c := range []struct{ path, app string }{
			{"b-nfs/rw.txt", appNFS}, {"b-9p-tcp/rw.txt", app9P}, {"b-9p-fd/rw.txt", app9PFD},
		} {
			r, ok := d.get(t, c.path)
			if !ok || r.CreatedBy != c.app {
				t.Errorf("semfs get %s: createdBy %q (record found: %v), want %q", c.path, r.CreatedBy, ok, c.app)
			}
		}
	})
	t0 = time.Now()
	t.Run("coherence", func(t *testing.T) { h.coherence(t, nfs, p9, p9fd, "coh") })
	t.Run("attribution/mount", func(t *testing.T) { attributionByMount(t, h, d) })
	t.Run("attribution/uid", func(t *testing.T) { attributionByUID(t, h, d) })
	t.Run("tags-follow-mv", func(t *testing.T) { tagsFollowRename(t, h, d) })
	t.Run("locks/9p", func(t *testing.T) { ninepLocks(t, h) })
	protocolChecks(t, h, d, xdev)
	h.mark("coherence, attribution, tags", t0)
	t0 = time.Now()
	t.Run("restart", func(t *testing.T) { restart(t, h, d) })
	h.mark("restart (SIGTERM, SIGKILL, 9P remounts)", t0)
	for _, l := range h.timing {
		t.Log("timing: " + l)
	}
}

// attributionByMount: files created through NFS /@notes and 9P aname @editor
// are the only answers to `semfs query notes` / `semfs query editor`.
func attributionByMount(t *testing.T, h *harness, d *semfsd) {
	h.step(t, "nfs:/@notes+9p-tcp:@editor", "create", 60*time.Second, `
mkdir -p /mnt/root/attr || fail mkdir
printf 'minutes of the meeting\n' >/mnt/notes/attr/minutes.txt || fail "create over NFS /@notes"
printf 'chapter one\n' >/mnt/editor/attr/chapter.txt || fail "create over 9P @editor"
echo created`)
	for _, c := range []struct{ app, path string }{{appNotes, "attr/minutes.txt"}, {appEditor, "attr/chapter.txt"}} {
		d.expectQuery(t, c.app, c.path, c.app)
	}
}

// attributionByUID: the host registers an app for uid 1000 (the CLI runs as
// uid 1000); the guest writes as uid 1000 through an NFS mount of "/", so
// only AUTH_UNIX can tell who wrote.
func attributionByUID(t *testing.T, h *harness, d *semfsd) {
	if out, code := d.cli(t, 1000, "register", appUID, "--json"); code != 0 {
		t.Fatalf("semfs register %s as uid 1000: exit %d: %s", appUID, code, out)
	}
	out := h.step(t, "nfs:/", "write-as-uid-1000", 60*time.Second, `
mkdir -p /mnt/root/shared && chmod 1777 /mnt/root/shared || fail "mkdir+chmod as root"
$G runas 1000 1000 sh -c 'id; printf "written by uid 1000\n" >/mnt/root/shared/by-uid.txt' ||
	fail "write as uid 1000"
printf 'written by root\n' >/mnt/root/shared/by-root.txt || fail "write as root"
echo "owner of by-uid.txt on the server: uid $(stat -c %u /mnt/root/shared/by-uid.txt)"
echo ok`)
	// Ownership is not part of issue 6's acceptance; report it, don't judge.
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "owner of") {
			t.Log(l)
		}
	}
	if r, ok := d.get(t, "shared/by-uid.txt"); !ok || r.CreatedBy != appUID {
		t.Errorf("semfs get shared/by-uid.txt: createdBy %q (found %v), want %q (uid 1000's app)", r.CreatedBy, ok, appUID)
	}
	if r, ok := d.get(t, "shared/by-root.txt"); !ok || r.CreatedBy != "" {
		t.Errorf("semfs get shared/by-root.txt: createdBy %q (found %v), want \"\" (uid 0 is not registered, mount is /)", r.CreatedBy, ok)
	}
	d.expectQuery(t, appUID, "shared/by-uid.txt", appUID)
}

// tagsFollowRename: files created in the guest, tagged on the host, renamed in
// the guest (a file across directories over NFS, a directory over 9P) keep
// their tags under the new paths.
func tagsFollowRename(t *testing.T, h *harness, d *semfsd) {
	h.step(t, "nfs+9p-tcp", "create", 60*time.Second, `
mkdir -p /mnt/nfs/tags/from /mnt/nfs/tags/to /mnt/9p/tags/dir || fail mkdir
printf 'plan\n' >/mnt/nfs/tags/from/plan.txt || fail "create over NFS"
printf 'budget\n' >/mnt/9p/tags/dir/budget.txt || fail "create over 9P"
echo ok`)
	for _, c := range [][2]string{{"tags/from/plan.txt", "kerneltaskalpha"}, {"tags/dir/budget.txt", "kerneltaskbeta"}} {
		if out, code := d.cli(t, 0, "tag", c[0], "--task", c[1], "--json"); code != 0 {
			t.Fatalf("semfs tag %s --task %s: exit %d: %s", c[0], c[1], code, out)
		}
	}
	h.step(t, "nfs+9p-tcp", "mv", 60*time.Second, `
mv /mnt/nfs/tags/from/plan.txt /mnt/nfs/tags/to/plan-v2.txt || fail "mv over NFS"
mv /mnt/9p/tags/dir /mnt/9p/tags/dir2 || fail "mv of a directory over 9P"
eq "$(cat /mnt/nfs/tags/to/plan-v2.txt)$(cat /mnt/9p/tags/dir2/budget.txt)" planbudget "contents after mv"
echo ok`)
	for _, c := range [][3]string{
		{"tags/from/plan.txt", "tags/to/plan-v2.txt", "kerneltaskalpha"},
		{"tags/dir/budget.txt", "tags/dir2/budget.txt", "kerneltaskbeta"},
	} {
		if r, ok := d.get(t, c[1]); !ok || r.Task != c[2] {
			t.Errorf("after mv %s -> %s: semfs get %s: task %q (found %v), want %q", c[0], c[1], c[1], r.Task, ok, c[2])
		}
		if _, ok := d.get(t, c[0]); ok {
			t.Errorf("after mv %s -> %s: semfs get %s still finds a record", c[0], c[1], c[0])
		}
		d.expectQuery(t, c[2], c[1], "")
	}
}

// restart: a guest process holds /mnt/nfs/restart/held.bin open for writing
// while the daemon is stopped with SIGTERM and restarted, then killed with
// SIGKILL and restarted while the guest writes. NFSv3 must carry on with no
// ESTALE and no lost acknowledged bytes; 9P sessions end with the daemon, so a
// fresh 9P mount (TCP and virtio-serial) must see everything.
func restart(t *testing.T, h *harness, d *semfsd) {
	const chunk = 65536
	held := filepath.Join(d.data, "restart", "held.bin")
	var want []byte
	hostHas := func(t *testing.T, when string) {
		t.Helper()
		got, err := os.ReadFile(held)
		if err != nil {
			t.Fatalf("mount nfs, %s: host read of %s: %v", when, held, err)
		}
		if !bytes.HasPrefix(got, want) {
			t.Fatalf("mount nfs, %s: backing file holds %d bytes (md5 %s); the %d acknowledged bytes (md5 %s) are not its prefix",
				when, len(got), md5bytes(got), len(want), md5bytes(want))
		}
	}
	restartDaemon := func(t *testing.T, sig syscall.Signal) {
		t.Helper()
		if err := h.srv.Stop(sig, 20*time.Second); err != nil {
			t.Fatalf("stop semfs with %v: %v", sig, err)
		}
		if err := h.srv.Start(h.ctx, 90*time.Second); err != nil {
			t.Fatalf("restart semfs after %v: %v\n%s", sig, err, tail(h.srv.LogPath, 30))
		}
	}
	// cmd sends one command to the holder and waits for its answer.
	// The FIFOs are opened O_RDWR (fds 8, 9): such an open never blocks, while
	// opening the answer FIFO read-only would wait forever for a writer once
	// the holder has exited after "close".
	cmd := func(c string) string {
		return fmt.Sprintf(`exec 8<>/tmp/hold/ack 9<>/tmp/hold/cmd; echo %q >&9; read -t 90 r <&8 || fail "no answer to %q"; echo "$r"; eq "$r" "ok %s" %q`+"\n", c, c, c, c)
	}

	h.step(t, "nfs", "open-and-write", 60*time.Second, `
mkdir -p /mnt/nfs/restart /tmp/hold && mkfifo /tmp/hold/cmd /tmp/hold/ack || fail setup
printf 'before restart\n' >/mnt/nfs/restart/old.txt || fail "create old.txt"
setsid $G hold /mnt/nfs/restart/held.bin /tmp/hold/cmd /tmp/hold/ack </dev/null >/tmp/hold/log 2>&1 &
exec 8<>/tmp/hold/ack; read -t 30 r <&8 || fail "holder did not open"; eq "$r" "ok open /mnt/nfs/restart/held.bin" open
`+cmd("write c1 65536")+cmd("fsync"))
	want = append(want, kernel.Pattern("c1", chunk)...)
	hostHas(t, "after c1+fsync")

	t.Run("SIGTERM", func(t *testing.T) {
		restartDaemon(t, syscall.SIGTERM)
		hostHas(t, "after SIGTERM and restart")
		h.step(t, "nfs", "write-after-SIGTERM-restart", 120*time.Second, cmd("write c2 65536")+cmd("fsync")+`
eq "$(cat /mnt/nfs/restart/old.txt)" "before restart" "read of a file opened before the restart"
ls -l /mnt/nfs/restart >/dev/null || fail "ls after restart"
eq "$(cat /mnt/nfs/b-nfs/rw.txt | tr '\n' ,)" "ALPHA,beta," "battery file through its pre-restart handle"
dmesg | grep -i stale && fail "ESTALE in dmesg"
echo ok`)
		want = append(want, kernel.Pattern("c2", chunk)...)
		hostHas(t, "after c2+fsync")
	})

	t.Run("SIGKILL", func(t *testing.T) {
		if err := h.srv.Stop(syscall.SIGKILL, 20*time.Second); err != nil {
			t.Fatalf("SIGKILL semfs: %v", err)
		}
		restarted := false
		defer func() {
			if !restarted { // leave a daemon behind for the later steps whatever happened
				h.srv.Start(h.ctx, 90*time.Second)
			}
		}()
		hostHas(t, "after SIGKILL (acknowledged bytes must be on disk)")
		// Daemon down: the write lands in the guest's page cache; fsync
		// blocks until the daemon is back (hard mount), answered next step.
		h.step(t, "nfs", "write-while-daemon-down", 60*time.Second, cmd("write c3 65536")+`echo fsync >&9; echo "fsync sent"`)
		if err := h.srv.Start(h.ctx, 90*time.Second); err != nil {
			t.Fatalf("restart semfs after SIGKILL: %v\n%s", err, tail(h.srv.LogPath, 30))
		}
		restarted = true
		h.step(t, "nfs", "fsync-after-SIGKILL-restart", 180*time.Second, `exec 8<>/tmp/hold/ack; read -t 170 r <&8 || fail "fsync did not return after the restart"; echo "$r"; eq "$r" "ok fsync" fsync
`+cmd("write c4 65536")+cmd("fsync")+cmd("close")+`
eq "$(stat -c %s /mnt/nfs/restart/held.bin)" 262144 "size of the held file"
dmesg | grep -i stale && fail "ESTALE in dmesg"
md5sum </mnt/nfs/restart/held.bin | cut -c1-32`)
		want = append(want, kernel.Pattern("c3", chunk)...)
		want = append(want, kernel.Pattern("c4", chunk)...)
		hostHas(t, "after c3 (written while the daemon was down), c4 and fsync")
		if got := md5file(t, held); got != md5bytes(want) {
			t.Fatalf("mount nfs, after the restarts: backing file md5 %s, want %s (c1..c4)", got, md5bytes(want))
		}
	})

	// 9P: the daemon's restarts ended both 9P sessions (fids live in the
	// server). The old mounts are detached; fresh mounts must see it all.
	t.Run("9P-remount", func(t *testing.T) {
		wantMD5 := md5file(t, held) // what is on disk, whatever the NFS subtests found
		if err := h.vm.WaitNinePConnected(30 * time.Second); err != nil {
			t.Fatal(err)
		}
		out := h.step(t, "9p-tcp+9p-fd", "fresh-mounts-after-restart", 120*time.Second, fmt.Sprintf(`
echo "old 9P/TCP mount after the restarts: $(timeout -s KILL 20 cat /mnt/9p/restart/old.txt 2>&1 || echo killed)"
timeout -s KILL 30 umount -l /mnt/9p || fail "umount -l of the old 9P/TCP mount"
# The old 9P/fd mount is not touched before its relays are gone: QEMU has
# reconnected the port to the new daemon, which must see only the new mount.
retire_9p_fd /mnt/9pfd
mount_9p_tcp @%s /mnt/9p %d
mount_9p_fd @%s /mnt/9pfd
for m in /mnt/9p /mnt/9pfd; do
	eq "$(dd if=$m/restart/held.bin bs=1M 2>/dev/null | md5sum | cut -c1-32)" %s "$m: held.bin written over NFS across the restarts"
	eq "$(cat $m/restart/old.txt)" "before restart" "$m: old.txt"
	eq "$(tr '\n' , <$m/b-nfs/rw.txt)" "ALPHA,beta," "$m: battery file"
	set -- $m/list5000/*  # a glob reads the directory without a getattr per entry
	eq $# 5000 "$m: entries of list5000"
done
echo ok`, app9P, ninepPort, app9PFD, wantMD5))
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "old 9P") {
				t.Log(l)
			}
		}
	})
}

// tail returns the last n lines of a file (for failure messages).
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "(" + err.Error() + ")"
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
