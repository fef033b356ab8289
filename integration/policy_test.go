package integration_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hugelgupf/p9/linux"
	"github.com/hugelgupf/p9/p9"
	"golang.org/x/sys/unix"

	"github.com/semfs/semfs/client"
	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/integration/semfstest"
	"github.com/semfs/semfs/server/control"
	"github.com/semfs/semfs/server/snapshot"
)

// Per-app views and rights (issue 26) through the real daemon: the control
// socket as registered apps (each connection made with the app's uid, so the
// daemon learns it by SO_PEERCRED), the .semfs tree over NFS and 9P, the
// CLI, and reloads of the file while clients stay connected.

// policyExample is the policy.
const policyExample = `{
  "default": {"read": ["**"], "write": ["**"], "tag": ["**"], "hide": []},
  "apps": {
    "agent":  {"write": ["agent/**", "scratch/**"], "tag": ["own"], "hide": ["secrets/**", "**/*.key"]},
    "viewer": {"write": []},
    "":       {"write": [], "hide": ["**"]}
  }
}`

// The uids the apps connect with.
const (
	uidAgent  = 52601
	uidViewer = 52602
	uidNobody = 52603 // registered for no app: unattributed
)

// appConn is an HTTP client of the control socket whose connections are
// made by a thread running with uid as its effective uid (its file system
// uid stays the test's, so the socket's mode does not stand in the way):
// SO_PEERCRED reports that uid, as for a process of that user.
type appConn struct {
	t    *testing.T
	http *http.Client
}

func dialAs(uid uint32, sock string) (net.Conn, error) {
	type res struct {
		c   net.Conn
		err error
	}
	ch := make(chan res, 1)
	go func() {
		// The thread is never unlocked: it ends with this goroutine, so no
		// other goroutine ever runs with its credentials.
		runtime.LockOSThread()
		if _, _, e := unix.RawSyscall(unix.SYS_SETRESUID, ^uintptr(0), uintptr(uid), ^uintptr(0)); e != 0 {
			ch <- res{nil, fmt.Errorf("setresuid: %w", e)}
			return
		}
		unix.RawSyscall(unix.SYS_SETFSUID, 0, 0, 0)
		c, err := net.Dial("unix", sock)
		ch <- res{c, err}
	}()
	r := <-ch
	return r.c, r.err
}

func newAppConn(t *testing.T, d *semfstest.Daemon, uid uint32) *appConn {
	if os.Geteuid() != 0 {
		t.Skip("acting as other uids on the control socket needs root")
	}
	sock := d.Socket
	tr := &http.Transport{DialContext: func(context.Context, string, string) (net.Conn, error) { return dialAs(uid, sock) }}
	t.Cleanup(tr.CloseIdleConnections)
	return &appConn{t: t, http: &http.Client{Transport: tr, Timeout: 60 * time.Second}}
}

// call sends a JSON request and returns the status and the body.
func (a *appConn) call(method, path string, in any) (int, []byte) {
	a.t.Helper()
	var body io.Reader
	if in != nil {
		b, _ := json.Marshal(in)
		body = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, "http://semfs"+path, body)
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := a.http.Do(req)
	if err != nil {
		a.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

func (a *appConn) query(text string, limit int) []string {
	a.t.Helper()
	st, b := a.call("POST", "/v1/query", client.QueryRequest{Text: text, Limit: limit})
	if st != 200 {
		a.t.Fatalf("query %q: %d %s", text, st, b)
	}
	var qr control.QueryResponse
	if err := json.Unmarshal(b, &qr); err != nil {
		a.t.Fatal(err)
	}
	var out []string
	for _, r := range qr.Results {
		out = append(out, r.Path)
	}
	return out
}

func errorOf(b []byte) control.ErrorDetail {
	var eb control.ErrorBody
	json.Unmarshal(b, &eb)
	return eb.Error
}

// policyFixture starts a keyword-only daemon with the example policy and
// files made by their apps, tagged by the operator:
//
//	agent/mine.txt     by agent   "launch checklist"
//	mail/m.txt         by mail    "launch party"
//	secrets/s.txt      by mail    "launch codes"      hidden from agent
//	notes/id.key       by mail    "launch key"        hidden from agent
func policyFixture(t *testing.T, policy string, args ...string) (*semfstest.Daemon, string) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "policy.json")
	if err := os.WriteFile(file, []byte(policy), 0o644); err != nil {
		t.Fatal(err)
	}
	d := semfstest.Start(t, semfstest.Options{ModelDir: "off", Args: append([]string{"--policy", file}, args...)})
	mk := func(app, dir, name, body string) {
		root := d.Attach9P(t, "@"+app, 0)
		_, dd, err := root.Walk([]string{dir})
		if err != nil {
			if _, err := root.Mkdir(dir, 0o755, p9.NoUID, p9.NoGID); err != nil {
				t.Fatal(err)
			}
			if _, dd, err = root.Walk([]string{dir}); err != nil {
				t.Fatal(err)
			}
		}
		defer dd.Close()
		create9P(t, dd, name, []byte(body))
	}
	mk("agent", "agent", "mine.txt", "my list\n")
	mk("mail", "mail", "m.txt", "party\n")
	mk("mail", "secrets", "s.txt", "0000\n")
	mk("mail", "notes", "id.key", "KEY\n")
	for p, task := range map[string]string{"agent/mine.txt": "launch checklist", "mail/m.txt": "launch party",
		"secrets/s.txt": "launch codes", "notes/id.key": "launch key"} {
		if _, err := d.Client.Tag(d.Context(), client.TagRequest{Path: p, Task: task}); err != nil {
			t.Fatal(err)
		}
	}
	for uid, app := range map[uint32]string{uidAgent: "agent", uidViewer: "viewer"} {
		if st, b := newAppConn(t, d, uid).call("POST", "/v1/register", client.RegisterRequest{App: app}); st != 200 {
			t.Fatalf("register %s: %d %s", app, st, b)
		}
	}
	return d, file
}

func sorted(s []string) string {
	c := append([]string(nil), s...)
	slices.Sort(c)
	return strings.Join(c, ",")
}

func TestPolicyControlSocket(t *testing.T) {
	d, _ := policyFixture(t, policyExample)
	agent, viewer, nobody := newAppConn(t, d, uidAgent), newAppConn(t, d, uidViewer), newAppConn(t, d, uidNobody)
	all := "agent/mine.txt,mail/m.txt,notes/id.key,secrets/s.txt"

	t.Run("query leaves hidden paths out", func(t *testing.T) {
		if got := sorted(agent.query("launch", 0)); got != "agent/mine.txt,mail/m.txt" {
			t.Errorf("agent's query: %s", got)
		}
		// The limit counts what the app sees.
		if got := agent.query("launch", 2); len(got) != 2 {
			t.Errorf("agent's query with limit 2: %v", got)
		}
		if got := sorted(viewer.query("launch", 0)); got != all {
			t.Errorf("viewer's query: %s", got)
		}
		if got := nobody.query("launch", 0); len(got) != 0 {
			t.Errorf("the unattributed caller's query: %v (it hides everything)", got)
		}
		res, err := d.Client.Query(d.Context(), client.QueryRequest{Text: "launch"})
		if err != nil || len(res) != 4 {
			t.Errorf("the operator's query: %d results, %v", len(res), err)
		}
	})

	t.Run("a hidden file answers as a missing one", func(t *testing.T) {
		for _, p := range []string{"secrets/s.txt", "notes/id.key", "secrets", "secrets/nope"} {
			missing := strings.Replace(p, "s", "zz", 1) + "-missing"
			st, b := agent.call("GET", "/v1/files/"+p, nil)
			st2, b2 := agent.call("GET", "/v1/files/"+missing, nil)
			if st != 404 || st2 != 404 || strings.ReplaceAll(errorOf(b).Message, p, "X") != strings.ReplaceAll(errorOf(b2).Message, missing, "X") {
				t.Errorf("files %s: %d %s; missing: %d %s", p, st, b, st2, b2)
			}
			// Tagging cannot confirm the name either.
			st, b = agent.call("POST", "/v1/tag", client.TagRequest{Path: p, Task: "x"})
			st2, b2 = agent.call("POST", "/v1/tag", client.TagRequest{Path: missing, Task: "x"})
			if st != 404 || st2 != 404 || strings.ReplaceAll(errorOf(b).Message, p, "X") != strings.ReplaceAll(errorOf(b2).Message, missing, "X") {
				t.Errorf("tag %s: %d %s; missing: %d %s", p, st, b, st2, b2)
			}
		}
		if st, b := viewer.call("GET", "/v1/files/secrets/s.txt", nil); st != 200 {
			t.Errorf("viewer hides nothing: %d %s", st, b)
		}
	})

	t.Run("tag rights", func(t *testing.T) {
		// agent tags its own files only.
		if st, b := agent.call("POST", "/v1/tag", client.TagRequest{Path: "agent/mine.txt", Task: "launch checklist v2"}); st != 200 {
			t.Errorf("agent tagging its own file: %d %s", st, b)
		}
		st, b := agent.call("POST", "/v1/tag", client.TagRequest{Path: "mail/m.txt", Task: "mine now"})
		if e := errorOf(b); st != 403 || e.Code != control.CodeForbidden || !strings.Contains(e.Message, `app "agent" may not tag /mail/m.txt`) || !strings.Contains(e.Message, `apps.agent.tag`) {
			t.Errorf("agent tagging mail's file: %d %s", st, b)
		}
		// A batch is all or nothing.
		st, b = agent.call("POST", "/v1/tags", client.TagsRequest{Tags: []client.TagRequest{
			{Path: "agent/mine.txt", Task: "batch"}, {Path: "mail/m.txt", Task: "batch"}}})
		if st != 403 || !strings.Contains(errorOf(b).Message, "tags[1]: ") {
			t.Errorf("a batch with one refused tag: %d %s", st, b)
		}
		if rec := tagsOf(t, d, "agent/mine.txt"); rec.Task != "launch checklist v2" {
			t.Errorf("the refused batch changed agent/mine.txt: %q", rec.Task)
		}
		if rec := tagsOf(t, d, "mail/m.txt"); rec.Task != "launch party" {
			t.Errorf("mail/m.txt was retagged: %q", rec.Task)
		}
		// viewer has default's tag ["**"]; the operator has no limits.
		if st, b := viewer.call("POST", "/v1/tag", client.TagRequest{Path: "mail/m.txt", Task: "launch party"}); st != 200 {
			t.Errorf("viewer tagging: %d %s", st, b)
		}
		if _, err := d.Client.Tag(d.Context(), client.TagRequest{Path: "secrets/s.txt", Task: "launch codes"}); err != nil {
			t.Errorf("the operator tagging a path hidden from agent: %v", err)
		}
	})

	t.Run("an app's snapshot holds what it sees", func(t *testing.T) {
		st, b := agent.call("POST", "/v1/snapshot", nil)
		if st != 200 {
			t.Fatalf("agent's snapshot: %d %.200s", st, b)
		}
		base := t.TempDir()
		data, idxDir := filepath.Join(base, "data"), filepath.Join(base, "index")
		if err := snapshot.Restore(bytes.NewReader(b), data, idxDir, index.Options{}); err != nil {
			t.Fatal(err)
		}
		for p, want := range map[string]bool{"agent/mine.txt": true, "mail/m.txt": true, "secrets": false, "notes/id.key": false, "notes": true} {
			if _, err := os.Lstat(filepath.Join(data, p)); (err == nil) != want {
				t.Errorf("restored %s: %v, want present=%v", p, err, want)
			}
		}
		idx, err := index.Open(idxDir, index.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer idx.Close()
		for p, want := range map[string]bool{"agent/mine.txt": true, "secrets/s.txt": false, "notes/id.key": false} {
			if _, err := idx.Get(p); (err == nil) != want {
				t.Errorf("restored index record of %s: %v, want present=%v", p, err, want)
			}
		}
	})

	t.Run("denials are counted and logged", func(t *testing.T) {
		st, b := agent.call("GET", "/v1/metrics", nil)
		if st != 200 || !bytes.Contains(b, []byte(`semfs_policy_denials_total{app="agent",op="tag"}`)) {
			t.Errorf("metrics: %d, no agent tag denials in:\n%s", st, grepLines(b, "policy"))
		}
		if bytes.Contains(b, []byte("secrets")) {
			t.Errorf("a hidden path reached the metrics")
		}
		if !d.WaitLog("policy denied", semfstest.WaitBound) {
			t.Errorf("no denial in the log")
		}
	})

	t.Run("explain asks the daemon without --policy", func(t *testing.T) {
		out, errs, code := d.Run("policy", "explain", "agent", "agent/mine.txt")
		if code != 0 || !strings.Contains(out, `tag   yes  apps.agent.tag "own" (created_by is "agent")`) {
			t.Errorf("explain: %d\n%s%s", code, out, errs)
		}
	})

	t.Run("health shows the policy", func(t *testing.T) {
		h, err := d.Client.Health(d.Context())
		if err != nil || h.Policy == nil || h.Policy.Loaded.IsZero() || h.Policy.Error != "" {
			t.Errorf("health: %+v %v", h.Policy, err)
		}
	})
}

func grepLines(b []byte, s string) string {
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, s) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

func TestPolicyMetaTree(t *testing.T) {
	d, _ := policyFixture(t, policyExample)
	// As uid 0: the kernel's permission checks (a root daemon's) allow
	// everything, so each refusal below is the policy's.
	v := d.MountNFS(t, "/@agent", 0)
	root := d.Attach9P(t, "@agent", 0)
	want := []string{".results.json", "01-mine.txt", "02-m.txt"}
	if got := nfsNames(t, v, ".semfs/query/launch"); sorted(got) != sorted(want) {
		t.Errorf("NFS .semfs/query/launch: %v", got)
	}
	if got := names9P(t, walk9P(t, root, ".semfs/query/launch")); sorted(got) != sorted(want) {
		t.Errorf("9P .semfs/query/launch: %v", got)
	}
	js := read9P(t, root, ".semfs/query/launch/.results.json")
	if bytes.Contains(js, []byte("secrets")) || bytes.Contains(js, []byte("id.key")) || !bytes.Contains(js, []byte("mail/m.txt")) {
		t.Errorf(".results.json: %s", js)
	}
	// tags/: hidden entries are absent from listings and lookups.
	if got := names9P(t, walk9P(t, root, ".semfs/tags")); strings.Contains(strings.Join(got, ","), "secrets") {
		t.Errorf(".semfs/tags lists %v", got)
	}
	if got := names9P(t, walk9P(t, root, ".semfs/tags/notes")); len(got) != 0 {
		t.Errorf(".semfs/tags/notes lists %v", got)
	}
	for _, p := range []string{".semfs/tags/secrets", ".semfs/tags/secrets/s.txt", ".semfs/tags/notes/id.key"} {
		if _, _, err := root.Walk(strings.Split(p, "/")); !errors.Is(err, linux.ENOENT) {
			t.Errorf("9P walk %s: %v, want ENOENT", p, err)
		}
	}
	// Tag rights: a tags-file write and setfattr outside "tag" are EACCES.
	if err := write9PWhole(root, ".semfs/tags/mail/m.txt", []byte(`{"task":"mine"}`)); !errors.Is(err, linux.EACCES) {
		t.Errorf("9P tags-file write outside tag rights: %v, want EACCES", err)
	}
	if err := nfsWriteWhole(v, ".semfs/tags/mail/m.txt", []byte(`{"task":"mine"}`)); err == nil || !strings.Contains(err.Error(), "ACCES") {
		t.Errorf("NFS tags-file write outside tag rights: %v, want NFS3ERR_ACCES", err)
	}
	r := dial9PRaw(t, d.NineP, "@agent")
	if err := r.setxattr("mail/m.txt", "user.semfs.task", "mine"); !errors.Is(err, linux.EACCES) {
		t.Errorf("setfattr user.semfs.task outside tag rights: %v, want EACCES", err)
	}
	if rec := tagsOf(t, d, "mail/m.txt"); rec.Task != "launch party" {
		t.Errorf("mail/m.txt was retagged: %q", rec.Task)
	}
	// Within them, both work.
	if err := write9PWhole(root, ".semfs/tags/agent/mine.txt", []byte(`{"task":"own tags"}`)); err != nil {
		t.Errorf("tags-file write of agent's own file: %v", err)
	}
	if err := r.setxattr("agent/mine.txt", "user.semfs.task", "own again"); err != nil {
		t.Errorf("setfattr of agent's own file: %v", err)
	}
	if rec := tagsOf(t, d, "agent/mine.txt"); rec.Task != "own again" {
		t.Errorf("agent/mine.txt: %q", rec.Task)
	}
	// A file agent has just made is its own at once: created_by is durable
	// before the create returns, whether or not the index has it yet.
	_, dir, err := root.Walk([]string{"agent"})
	if err != nil {
		t.Fatal(err)
	}
	defer dir.Close()
	for i := 0; i < 20; i++ {
		name := fmt.Sprintf("fresh-%d.txt", i)
		create9P(t, dir, name, []byte("x"))
		if err := r.setxattr("agent/"+name, "user.semfs.task", "just made"); err != nil {
			t.Fatalf("setfattr right after the create: %v", err)
		}
	}
}

// waitPolicy waits until health's policy state satisfies ok.
func waitPolicy(t *testing.T, d *semfstest.Daemon, what string, ok func(*client.Health) bool) *client.Health {
	t.Helper()
	var h client.Health
	d.WaitFor(t, "the policy: "+what, func() error {
		var err error
		h, err = d.Client.Health(d.Context())
		if err == nil && h.Policy != nil && ok(&h) {
			return nil
		}
		return fmt.Errorf("health's policy: %+v %v", h.Policy, err)
	})
	return &h
}

func TestPolicyReload(t *testing.T) {
	d, file := policyFixture(t, policyExample)
	// One client of each door, kept connected throughout.
	agent := newAppConn(t, d, uidAgent)
	root := d.Attach9P(t, "@agent", uidAgent)
	v := d.MountNFS(t, "/@agent", 0)
	if _, _, err := v.Lookup("secrets/s.txt"); nfsStatus(err) != "NFS3ERR_NOENT" {
		t.Fatalf("NFS LOOKUP of a hidden file before the reload: %v", err)
	}
	if got := sorted(agent.query("launch", 0)); got != "agent/mine.txt,mail/m.txt" {
		t.Fatalf("before: %s", got)
	}
	first := waitPolicy(t, d, "loaded", func(h *client.Health) bool { return !h.Policy.Loaded.IsZero() }).Policy.Loaded

	// An invalid file keeps the policy in force, and health says why, with
	// the line and column.
	if err := os.WriteFile(file, []byte("{\n  \"apps\": {\"agent\": {\"hide\": [\"a/[b\"]}}\n}"), 0o644); err != nil {
		t.Fatal(err)
	}
	h := waitPolicy(t, d, "refused the invalid file", func(h *client.Health) bool { return h.Policy.Error != "" })
	if !strings.Contains(h.Policy.Error, "2:31:") || !h.Policy.Loaded.Equal(first) {
		t.Errorf("health after an invalid reload: %+v", h.Policy)
	}
	if out, _, _ := d.Run("status"); !strings.Contains(out, "the last reload failed") {
		t.Errorf("semfs status does not show the failed reload:\n%s", out)
	}
	if !d.WaitLog("policy reload failed", semfstest.WaitBound) {
		t.Error("the failed reload was not logged")
	}
	if got := sorted(agent.query("launch", 0)); got != "agent/mine.txt,mail/m.txt" {
		t.Errorf("after an invalid reload: %s (the old policy must stay)", got)
	}
	if _, _, err := root.Walk([]string{".semfs", "tags", "secrets"}); !errors.Is(err, linux.ENOENT) {
		t.Errorf("after an invalid reload, .semfs/tags/secrets: %v", err)
	}
	if _, _, err := v.Lookup("secrets/s.txt"); nfsStatus(err) != "NFS3ERR_NOENT" {
		t.Errorf("after an invalid reload, NFS LOOKUP of a hidden file: %v", err)
	}

	// A valid file replaces it at once for connected clients.
	if err := os.WriteFile(file, []byte(`{"apps": {"agent": {"hide": ["mail/"]}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	waitPolicy(t, d, "reloaded", func(h *client.Health) bool { return h.Policy.Error == "" && h.Policy.Loaded.After(first) })
	if got := sorted(agent.query("launch", 0)); got != "agent/mine.txt,notes/id.key,secrets/s.txt" {
		t.Errorf("after the reload: %s", got)
	}
	walk9P(t, root, ".semfs/tags/secrets/s.txt")
	walk9P(t, root, "secrets/s.txt")
	if _, _, err := v.Lookup("secrets/s.txt"); err != nil {
		t.Errorf("NFS LOOKUP after the reload: %v", err)
	}
	if _, _, err := root.Walk([]string{"mail", "m.txt"}); !errors.Is(err, linux.ENOENT) {
		t.Errorf("9P walk of a path the new policy hides: %v", err)
	}

	// SIGHUP reloads too.
	before := waitPolicy(t, d, "loaded", func(*client.Health) bool { return true }).Policy.Loaded
	if err := syscall.Kill(d.PID(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	if !d.WaitLog("SIGHUP: reloading the policy", semfstest.WaitBound) {
		t.Error("SIGHUP did not reload")
	}
	waitPolicy(t, d, "reloaded by SIGHUP", func(h *client.Health) bool { return h.Policy.Loaded.After(before) })
}

func TestPolicyInvalidAtStart(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "policy.json")
	os.WriteFile(file, []byte("{\n  \"apps\": {\"agent\": {\"reed\": []}}\n}"), 0o644)
	cmd := exec.Command(semfstest.Binary(t), "serve", "--policy", file, "--data", filepath.Join(dir, "data"),
		"--index", filepath.Join(dir, "index"), "--socket", filepath.Join(dir, "s.sock"), "--nfs", "off", "--9p", "off", "--model-dir", "off")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(stderr.String(), `policy.json:2:22: apps.agent: unknown field "reed"`) {
		t.Errorf("serve with an invalid policy: %v\n%s", err, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "s.sock")); err == nil {
		t.Error("the daemon served with an invalid policy")
	}
}

func TestPolicyCommands(t *testing.T) {
	dir := t.TempDir()
	good, bad := filepath.Join(dir, "good.json"), filepath.Join(dir, "bad.json")
	os.WriteFile(good, []byte(policyExample), 0o644)
	os.WriteFile(bad, []byte(`{"apps": {"agent": {"read": ["own"]}}}`), 0o644)
	run := func(args ...string) (string, string, int) {
		cmd := exec.Command(semfstest.Binary(t), args...)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return out.String(), errb.String(), code
	}
	out, _, code := run("policy", "check", good)
	if code != 0 || !strings.Contains(out, `app "agent":`) || !strings.Contains(out, `write [`+`"agent/**", "scratch/**"]  (apps.agent)`) ||
		!strings.Contains(out, `read  ["**"]  (default)`) || !strings.Contains(out, `app "" (unattributed callers)`) {
		t.Errorf("check: %d\n%s", code, out)
	}
	if _, errs, code := run("policy", "check", bad); code != 2 || !strings.Contains(errs, `bad.json:1:30: apps.agent.read: "own" means`) {
		t.Errorf("check of an invalid file: %d %s", code, errs)
	}
	out, _, code = run("policy", "explain", "--policy", good, "agent", "secrets/db/pw")
	if code != 0 || !strings.Contains(out, `see   no   apps.agent.hide "secrets/**" matches the directory "secrets"`) {
		t.Errorf("explain: %d\n%s", code, out)
	}
	out, _, code = run("policy", "explain", "--policy", good, "--created-by", "agent", "agent", "mail/x")
	if code != 0 || !strings.Contains(out, `tag   yes  apps.agent.tag "own" (created_by is "agent")`) || !strings.Contains(out, `write no   apps.agent.write: no pattern matches`) {
		t.Errorf("explain own: %d\n%s", code, out)
	}
	if _, errs, code := run("policy", "explain", "--policy", bad, "agent", "x"); code != 2 || !strings.Contains(errs, "1:30:") {
		t.Errorf("explain with an invalid file: %d %s", code, errs)
	}
}

// TestPolicyChanges: the change feed leaves out what the policy hides from
// the reader, on the control socket (the peer's registered app) and in
// .semfs/changes (the mount's app), while the operator sees everything; a
// rename out of the reader's view reads as a remove.
func TestPolicyChanges(t *testing.T) {
	d, _ := policyFixture(t, policyExample)
	agent := newAppConn(t, d, uidAgent)
	changes := func(st int, b []byte) client.ChangesResponse {
		t.Helper()
		var resp client.ChangesResponse
		if st != 200 || json.Unmarshal(b, &resp) != nil {
			t.Fatalf("changes: %d %s", st, b)
		}
		return resp
	}
	lines := func(r client.ChangesResponse) string {
		var ls []string
		for _, c := range r.Changes {
			ls = append(ls, c.Op+" "+c.Path)
		}
		return strings.Join(ls, ",")
	}
	agentFrom := changes(agent.call("GET", "/v1/changes", nil)).Cursor
	opFrom, err := d.Client.ChangesOnce(d.Context(), client.ChangesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	mail := d.Attach9P(t, "@mail", 0)
	for _, dir := range []string{"secrets", "mail"} {
		_, dd, err := mail.Walk([]string{dir})
		if err != nil {
			t.Fatal(err)
		}
		create9P(t, dd, "new.txt", []byte("x"))
		dd.Close()
	}
	_, md, err1 := mail.Walk([]string{"mail"})
	_, sd, err2 := mail.Walk([]string{"secrets"})
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	defer md.Close()
	defer sd.Close()
	if err := md.RenameAt("new.txt", sd, "moved.txt"); err != nil {
		t.Fatal(err)
	}
	if got, want := lines(changes(agent.call("GET", "/v1/changes?since="+url.QueryEscape(agentFrom), nil))),
		"create mail/new.txt,write mail/new.txt,remove mail/new.txt"; got != want {
		t.Errorf("agent's feed: %q, want %q", got, want)
	}
	op, err := d.Client.ChangesOnce(d.Context(), client.ChangesRequest{Since: opFrom.Cursor})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := lines(op), "create secrets/new.txt,write secrets/new.txt,create mail/new.txt,write mail/new.txt,rename secrets/moved.txt"; got != want {
		t.Errorf("the operator's feed: %q, want %q", got, want)
	}
	recent := read9P(t, d.Attach9P(t, "@agent", 0), ".semfs/changes")
	if bytes.Contains(recent, []byte("secrets")) || bytes.Contains(recent, []byte("id.key")) || !bytes.Contains(recent, []byte("mail/m.txt")) {
		t.Errorf(".semfs/changes as agent: %s", recent)
	}
}
