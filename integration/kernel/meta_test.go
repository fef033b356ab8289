package kernel_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/semfs/semfs/integration/kernel"
)

// TestKernelMeta: the .semfs namespace (issue 13) through the Linux 6.1 NFSv3
// and v9fs clients, as a guest with no control socket uses it: files are made
// and tagged through the mounts, `ls` of a query directory lists them in rank
// order, `cat` reads through a result link, the host's `semfs query` sees
// tags written into tags files and set with setxattr, and getxattr reads
// user.semfs.created_by. The NFS mount uses the options docs/inside-the-mount.md gives for
// fresh answers (actimeo=0,lookupcache=none); v9fs's default is cache=none.
func TestKernelMeta(t *testing.T) {
	h := newHarness(t)
	d := &semfsd{
		bin:       semfsBinary(t, h),
		data:      filepath.Join(h.dir, "data"),
		index:     filepath.Join(h.dir, "index"),
		sock:      filepath.Join(h.dir, "ctl.sock"),
		ninepSock: filepath.Join(h.dir, "9p.sock"),
	}
	h.srv = &kernel.Server{
		Netns:    h.ns,
		Argv:     [][]string{d.argv()},
		WaitTCP:  []string{fmt.Sprintf("127.0.0.1:%d", nfsPort), fmt.Sprintf("127.0.0.1:%d", ninepPort)},
		WaitUnix: []string{d.sock, d.ninepSock},
		LogPath:  filepath.Join(h.dir, "semfs.log"),
	}
	corpus := writeGrepCorpus(t, d.data, 40)
	if err := h.srv.Start(h.ctx, 90*time.Second); err != nil {
		t.Fatalf("semfs serve: %v\n%s", err, tail(h.srv.LogPath, 30))
	}
	defer func() {
		if t.Failed() {
			t.Logf("semfs log (%s), last 40 lines:\n%s", h.srv.LogPath, tail(h.srv.LogPath, 40))
		}
	}()
	h.boot(d.ninepSock)
	h.step(t, "all", "mount", 120*time.Second, fmt.Sprintf(`
mkdir -p /mnt/nfs
o="$NFS_OPTS_BASE,port=%[1]d,mountport=%[1]d,addr=10.0.2.2,mountaddr=10.0.2.2,actimeo=0,lookupcache=none"
timeout 60 mount -t nfs -o "$o" 10.0.2.2:/@notes /mnt/nfs || fail "NFS mount"
mount_9p_tcp @notes /mnt/9p %[2]d
grep -E ' (nfs|9p) ' /proc/mounts`, nfsPort, ninepPort))
	gnuGrepSmoke(t, h, d.sock, corpus, "/mnt/nfs")

	// Files made through the mounts, tagged through tags files of both.
	h.step(t, "all", "make-and-tag", 60*time.Second, `
mkdir -p /mnt/nfs/logs || fail mkdir
echo "ERROR: login failed for alice" > /mnt/nfs/logs/login-failure.md || fail write
echo "tokens expire after an hour" > /mnt/9p/token-expiry.md || fail write
echo "milk" > /mnt/9p/groceries.txt || fail write
ls -a /mnt/nfs | grep -q semfs && fail ".semfs is listed in the root"
[ -d /mnt/nfs/.semfs/query ] || fail "no .semfs/query over NFS"
[ -d /mnt/9p/.semfs/query ] || fail "no .semfs/query over 9P"
cat /mnt/nfs/.semfs/tags/logs/login-failure.md
echo '{"task": "auth problems: login failure auth auth"}' > /mnt/nfs/.semfs/tags/logs/login-failure.md || fail "NFS tags write"
echo '{"task": "auth token expiry"}' > /mnt/9p/.semfs/tags/token-expiry.md || fail "9P tags write"
echo '{"task": "x", "colour": "blue"}' > /mnt/9p/.semfs/tags/groceries.txt 2>/dev/null && fail "an unknown field was accepted over 9P"
grep -q '"task": "auth token expiry"' /mnt/nfs/.semfs/tags/token-expiry.md || fail "the NFS tags file does not show the 9P write"
true`)
	if r, _ := d.get(t, "logs/login-failure.md"); r.Task != "auth problems: login failure auth auth" || r.CreatedBy != "notes" {
		t.Fatalf("after the NFS tags write: %+v", r)
	}
	if r, _ := d.get(t, "groceries.txt"); r.Task != "" {
		t.Fatalf("a refused tags write changed groceries.txt: %+v", r)
	}
	res := d.query(t, "auth problems")
	if len(res) != 2 {
		t.Fatalf("semfs query \"auth problems\": %+v", res)
	}
	want := fmt.Sprintf("01-%s\n02-%s", filepath.Base(res[0].Path), filepath.Base(res[1].Path))
	content := map[string]string{"logs/login-failure.md": "ERROR: login failed for alice", "token-expiry.md": "tokens expire after an hour"}
	for _, m := range []string{"/mnt/nfs", "/mnt/9p"} {
		out := h.step(t, m, "query-dir", 60*time.Second, fmt.Sprintf(`
q="%s/.semfs/query/auth problems"
echo "ls:"; ls "$q"
echo "cat:"; cat "$q/01-%s"
echo "json:"; grep -c '"path"' "$q/.results.json"`, m, filepath.Base(res[0].Path)))
		ls := between(out, "ls:\n", "\ncat:")
		if ls != want {
			t.Errorf("%s: ls of the query dir:\n%s\nwant\n%s", m, ls, want)
		}
		if got := between(out, "cat:\n", "\njson:"); got != content[res[0].Path] {
			t.Errorf("%s: cat through the result link: %q, want %q", m, got, content[res[0].Path])
		}
		if !strings.HasSuffix(strings.TrimSpace(out), "json:\n2") {
			t.Errorf("%s: .results.json: %s", m, out)
		}
	}

	// A tag from the host is in the guest's next listing (fresh answers).
	if out, code := d.cli(t, 0, "tag", "groceries.txt", "--task", "auth problems problems problems"); code != 0 {
		t.Fatalf("semfs tag: %s", out)
	}
	res = d.query(t, "auth problems")
	if len(res) != 3 {
		t.Fatalf("semfs query \"auth problems\" after the host tag: %+v", res)
	}
	want = fmt.Sprintf("01-%s\n02-%s\n03-%s", filepath.Base(res[0].Path), filepath.Base(res[1].Path), filepath.Base(res[2].Path))
	for _, m := range []string{"/mnt/nfs", "/mnt/9p"} {
		out := h.step(t, m, "fresh", 60*time.Second, fmt.Sprintf(`ls "%s/.semfs/query/auth problems"`, m))
		if got := strings.TrimSpace(out); got != want {
			t.Errorf("%s: after a host tag the query dir lists\n%s\nwant\n%s", m, got, want)
		}
	}

	// Extended attributes over 9P.
	out := h.step(t, "/mnt/9p", "xattr", 60*time.Second, `
$G setfattr /mnt/9p/groceries.txt user.semfs.task "pantry inventory" || fail setfattr
$G setfattr /mnt/9p/groceries.txt user.semfs.created_by mallory 2>&1 && fail "created_by was set"
echo "by: $($G getfattr /mnt/9p/groceries.txt user.semfs.created_by)"
echo "task: $($G getfattr /mnt/9p/groceries.txt user.semfs.task)"`)
	if !strings.Contains(out, "operation not permitted") {
		t.Errorf("setfattr of created_by did not fail EPERM:\n%s", out)
	}
	if !strings.Contains(out, "by: notes\n") || !strings.Contains(out, "task: pantry inventory") {
		t.Errorf("getfattr over 9P:\n%s", out)
	}
	d.expectQuery(t, "pantry", "groceries.txt", "notes")

	// Refusals through the kernel.
	h.step(t, "all", "refusals", 60*time.Second, `
for m in /mnt/nfs /mnt/9p; do
  touch $m/.semfs/new 2>/dev/null && fail "$m: create in .semfs"
  mkdir $m/.semfs/tags/newdir 2>/dev/null && fail "$m: mkdir in tags/"
  rm $m/.semfs/query/README 2>/dev/null && fail "$m: rm README"
  mv $m/.semfs/query/README $m/stolen 2>/dev/null && fail "$m: mv out of .semfs"
  chmod 777 $m/.semfs/tags/groceries.txt 2>/dev/null && fail "$m: chmod of a tags file"
  ln $m/groceries.txt $m/.semfs/tags/hard 2>/dev/null && fail "$m: link into tags/"
done
true`)
}

// between returns the text of s after the first from and before the next to.
func between(s, from, to string) string {
	_, after, ok := strings.Cut(s, from)
	if !ok {
		return ""
	}
	before, _, _ := strings.Cut(after, to)
	return strings.TrimSpace(before)
}
