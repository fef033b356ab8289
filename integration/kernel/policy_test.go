package kernel_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/semfs/semfs/integration/kernel"
)

// TestKernelPolicy: the --policy file (issue 26) through the Linux 6.1
// NFSv3 and v9fs clients. As agent, a hidden file is not listed and not
// found, and creating or renaming onto its name is refused as any unwritable
// name is (EACCES, never EEXIST); outside agent's write patterns changes are
// EACCES. As viewer (an empty write list) every change is EROFS. The NFS
// mounts use the README's options for fresh answers.
func TestKernelPolicy(t *testing.T) {
	h := newHarness(t)
	d := &semfsd{
		bin:       semfsBinary(t, h),
		data:      filepath.Join(h.dir, "data"),
		index:     filepath.Join(h.dir, "index"),
		sock:      filepath.Join(h.dir, "ctl.sock"),
		ninepSock: filepath.Join(h.dir, "9p.sock"),
	}
	for p, body := range map[string]string{"agent/mine.txt": "mine\n", "mail/m.txt": "party\n",
		"secrets/s.txt": "0000\n", "notes/id.key": "KEY\n"} {
		full := filepath.Join(d.data, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	pol := filepath.Join(h.dir, "policy.json")
	if err := os.WriteFile(pol, []byte(`{
  "default": {"read": ["**"], "write": ["**"], "tag": ["**"], "hide": []},
  "apps": {
    "agent":  {"write": ["agent/**", "scratch/**"], "tag": ["own"], "hide": ["secrets/**", "**/*.key"]},
    "viewer": {"write": []},
    "":       {"write": [], "hide": ["**"]}
  }
}`), 0o644); err != nil {
		t.Fatal(err)
	}
	h.srv = &kernel.Server{
		Netns:    h.ns,
		Argv:     [][]string{append(d.argv(), "--policy", pol)},
		WaitTCP:  []string{fmt.Sprintf("127.0.0.1:%d", nfsPort), fmt.Sprintf("127.0.0.1:%d", ninepPort)},
		WaitUnix: []string{d.sock, d.ninepSock},
		LogPath:  filepath.Join(h.dir, "semfs.log"),
	}
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
for app in agent viewer; do
	mkdir -p /mnt/nfs-$app
	o="$NFS_OPTS_BASE,port=%[1]d,mountport=%[1]d,addr=10.0.2.2,mountaddr=10.0.2.2,actimeo=0,lookupcache=none"
	timeout 60 mount -t nfs -o "$o" 10.0.2.2:/@$app /mnt/nfs-$app || fail "NFS mount of @$app"
	mount_9p_tcp @$app /mnt/9p-$app %[2]d
done
grep -E ' (nfs|9p) ' /proc/mounts`, nfsPort, ninepPort))

	// says CMD WANT: CMD fails and its message says WANT.
	const lib = `
says() { out=$(sh -c "$1" 2>&1) && fail "$1 succeeded"; case "$out" in *"$2"*) ;; *) fail "$1: '$out', want '$2'";; esac; }
`
	for _, m := range []string{"/mnt/nfs-agent", "/mnt/9p-agent"} {
		h.step(t, m, "agent", 90*time.Second, lib+fmt.Sprintf(`
M=%s
ls $M | grep -q secrets && fail "the root lists secrets"
[ -z "$(ls $M/notes)" ] || fail "notes lists $(ls $M/notes)"
says "cat $M/secrets/s.txt" "No such file"
says "stat $M/notes/id.key" "No such file"
says "touch $M/notes/id.key" "Permission denied"
says "touch $M/notes/new.key" "Permission denied"
says "mkdir $M/notes/id.key" "Permission denied"
says "mv $M/agent/mine.txt $M/notes/id.key" "Permission denied"
says "touch $M/secrets/new.txt" "No such file"
says "echo x > $M/mail/m.txt" "Permission denied"
says "rm $M/mail/m.txt" "Permission denied"
echo made > $M/agent/$(basename $M).txt || fail "write inside agent/**"
cat $M/mail/m.txt | grep -q party || fail "read mail/m.txt"
true`, m))
	}
	for _, m := range []string{"/mnt/nfs-viewer", "/mnt/9p-viewer"} {
		h.step(t, m, "viewer", 90*time.Second, lib+fmt.Sprintf(`
M=%s
says "touch $M/v.txt" "Read-only file system"
says "mkdir $M/vdir" "Read-only file system"
says "echo x > $M/mail/m.txt" "Read-only file system"
says "rm $M/mail/m.txt" "Read-only file system"
grep -q 0000 $M/secrets/s.txt || fail "viewer reads secrets/s.txt"
true`, m))
	}
	for p, want := range map[string]string{"notes/id.key": "KEY\n", "mail/m.txt": "party\n", "agent/mine.txt": "mine\n"} {
		if b, err := os.ReadFile(filepath.Join(d.data, p)); err != nil || string(b) != want {
			t.Errorf("%s after the refusals: %q %v", p, b, err)
		}
	}
}
