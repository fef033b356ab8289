package integration_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hugelgupf/p9/p9"
	"github.com/semfs/semfs/client"
	"github.com/semfs/semfs/integration/semfstest"
	nfsc "github.com/willscott/go-nfs-client/nfs"
)

// feedReader reads the change feed through the Go client from a cursor and
// checks, as an independent reader would, that revs grow by one.
type feedReader struct {
	t      *testing.T
	d      *semfstest.Daemon
	cursor string
	last   uint64 // the rev of the last change read (0: none yet)
}

func newFeedReader(t *testing.T, d *semfstest.Daemon) *feedReader {
	t.Helper()
	r, err := d.Client.ChangesOnce(d.Context(), client.ChangesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Reset || len(r.Changes) != 0 || r.Cursor == "" {
		t.Fatalf("a start without since: %+v", r)
	}
	return &feedReader{t: t, d: d, cursor: r.Cursor}
}

// line is a change as the tests compare it: "op app path[ <- from]".
func line(c client.Change) string {
	s := c.Op + " " + c.App + " " + c.Path
	if c.From != "" {
		s += " <- " + c.From
	}
	return s
}

// expect reads until it has len(want) changes (long polls: a change the
// daemon has not recorded yet wakes the poll) and checks them, in order,
// then checks nothing else came.
func (f *feedReader) expect(want ...string) []client.Change {
	f.t.Helper()
	var got []client.Change
	deadline := time.Now().Add(30 * time.Second)
	for len(got) < len(want) && time.Now().Before(deadline) {
		got = append(got, f.read(10*time.Second)...)
	}
	if len(got) == len(want) {
		got = append(got, f.read(0)...)
	}
	var lines []string
	for _, c := range got {
		lines = append(lines, line(c))
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		f.t.Fatalf("changes:\n  %s\nwant:\n  %s\n%s", strings.Join(lines, "\n  "), strings.Join(want, "\n  "), f.d.Log())
	}
	return got
}

func (f *feedReader) read(timeout time.Duration) []client.Change {
	f.t.Helper()
	r, err := f.d.Client.ChangesOnce(f.d.Context(), client.ChangesRequest{Since: f.cursor, Timeout: timeout})
	if err != nil {
		f.t.Fatal(err)
	}
	if r.Reset {
		f.t.Fatalf("reset reading from %s: %+v", f.cursor, r)
	}
	for _, c := range r.Changes {
		if f.last != 0 && c.Rev != f.last+1 {
			f.t.Fatalf("rev %d after %d: a gap", c.Rev, f.last)
		}
		f.last = c.Rev
	}
	f.cursor = r.Cursor
	return r.Changes
}

// Changes made through 9P, NFS, the control socket and by host processes
// appear once each, in order, with their op, path, old path and app; the
// mount's .semfs/changes shows the same through NFS and 9P.
func TestChangesThroughEveryDoor(t *testing.T) {
	d := semfstest.Start(t, semfstest.Options{ModelDir: "off", Args: []string{"--write-quiet", "100ms"}})
	ctx := d.Context()
	if _, err := d.Client.Register(ctx, "tagger"); err != nil {
		t.Fatal(err)
	}
	f := newFeedReader(t, d)
	root9 := d.Attach9P(t, "@notes", 0)
	v := d.MountNFS(t, "/@editor", 0)

	// 9P: a file created and written in three Twrites (one burst: one
	// event, at clunk), then its mode changed.
	_, dir, err := root9.Walk(nil)
	if err != nil {
		t.Fatal(err)
	}
	nf9, _, _, err := dir.Create("a.txt", p9.WriteOnly, 0o644, p9.NoUID, p9.NoGID)
	if err != nil {
		t.Fatal(err)
	}
	off := int64(0)
	for _, part := range []string{"hel", "l", "o"} {
		if _, err := nf9.WriteAt([]byte(part), off); err != nil {
			t.Fatal(err)
		}
		off += int64(len(part))
	}
	nf9.Close()
	dir.Close()
	_, a9, err := root9.Walk([]string{"a.txt"})
	if err != nil {
		t.Fatal(err)
	}
	if err := a9.SetAttr(p9.SetAttrMask{Permissions: true}, p9.SetAttr{Permissions: 0o600}); err != nil {
		t.Fatal(err)
	}
	a9.Close()
	// The write's size is what its clunk's close found (Change.Sized).
	if got := f.expect("create notes a.txt", "write notes a.txt", "setattr notes a.txt"); got[1].Size != 5 {
		t.Errorf("9P write: %+v, want size 5", got[1])
	}

	// NFS: a directory, a rename into it, a file created and written.
	if _, err := v.Mkdir("dir", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := v.Rename("a.txt", "dir/a.txt"); err != nil {
		t.Fatal(err)
	}
	nf, err := v.OpenFile("dir/b.txt", 0o644)
	if err != nil {
		t.Fatal(err)
	}
	nf.Write([]byte("one two"))
	nf.Close()
	f.expect("mkdir editor dir", "rename editor dir/a.txt <- a.txt", "create editor dir/b.txt", "write editor dir/b.txt")
	// A size set is a truncating burst (reported after --write-quiet).
	if err := v.Setattr("dir/b.txt", nfsc.Sattr3{Size: nfsc.SetSize{SetIt: true, Size: 3}}); err != nil {
		t.Fatal(err)
	}
	if got := f.expect("truncate editor dir/b.txt"); got[0].Size != 3 {
		t.Errorf("truncate: %+v, want size 3", got[0])
	}
	// Another app's WRITE to the same (shared, cached) open file is its own.
	ov := d.MountNFS(t, "/@reviewer", 0)
	of, err := ov.OpenFile("dir/b.txt", 0o644)
	if err != nil {
		t.Fatal(err)
	}
	of.Write([]byte("reviewed"))
	of.Close()
	f.expect("write reviewer dir/b.txt")

	// The socket: a tag, attributed to the app registered for the caller's uid.
	if _, err := d.Client.Tag(ctx, client.TagRequest{Path: "dir/a.txt", Task: "greeting"}); err != nil {
		t.Fatal(err)
	}
	f.expect("tag tagger dir/a.txt")
	// And a retag through the mount's tags file, attributed to the mount's app.
	if err := write9PWhole(root9, ".semfs/tags/dir/a.txt", []byte(`{"task":"greeting, revised"}`)); err != nil {
		t.Fatal(err)
	}
	f.expect("tag notes dir/a.txt")
	// Over NFS too: one open tags file serves every caller, and the write
	// is its WRITE's caller's act.
	if err := nfsWriteWhole(v, ".semfs/tags/dir/a.txt", []byte(`{"task":"greeting, revised again"}`)); err != nil {
		t.Fatal(err)
	}
	f.expect("tag editor dir/a.txt")

	// A host process: a new file, then a removal.
	if err := os.WriteFile(filepath.Join(d.Data, "dir", "host.txt"), []byte("from the host"), 0o644); err != nil {
		t.Fatal(err)
	}
	got := f.expect("create host dir/host.txt")
	if got[0].Size != int64(len("from the host")) || got[0].Type != "file" {
		t.Errorf("host create: %+v", got[0])
	}
	if err := os.Remove(filepath.Join(d.Data, "dir", "host.txt")); err != nil {
		t.Fatal(err)
	}
	f.expect("remove host dir/host.txt")

	// 9P again: a link and a removal.
	_, dir9, err := root9.Walk([]string{"dir"})
	if err != nil {
		t.Fatal(err)
	}
	_, b9, err := dir9.Walk([]string{"b.txt"})
	if err != nil {
		t.Fatal(err)
	}
	if err := dir9.Link(b9, "b-link.txt"); err != nil {
		t.Fatal(err)
	}
	b9.Close()
	if _, err := dir9.Symlink("a.txt", "a-link", p9.NoUID, p9.NoGID); err != nil {
		t.Fatal(err)
	}
	if err := dir9.UnlinkAt("b.txt", 0); err != nil {
		t.Fatal(err)
	}
	dir9.Close()
	// A hard link's creator is the file's (dir/b.txt was the editor's).
	f.expect("link editor dir/b-link.txt", "symlink notes dir/a-link", "remove notes dir/b.txt")

	// .semfs/changes: the same events, newest last, through both protocols.
	want := []string{"create notes a.txt", "write notes a.txt", "setattr notes a.txt", "mkdir editor dir",
		"rename editor dir/a.txt <- a.txt", "create editor dir/b.txt", "write editor dir/b.txt", "truncate editor dir/b.txt", "write reviewer dir/b.txt", "tag tagger dir/a.txt", "tag notes dir/a.txt", "tag editor dir/a.txt",
		"create host dir/host.txt", "remove host dir/host.txt", "link editor dir/b-link.txt", "symlink notes dir/a-link", "remove notes dir/b.txt"}
	for name, text := range map[string][]byte{"nfs": nfsRead(t, v, ".semfs/changes"), "9p": read9P(t, root9, ".semfs/changes")} {
		var lines []string
		sc := bufio.NewScanner(strings.NewReader(string(text)))
		for sc.Scan() {
			var c client.Change
			if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
				t.Fatalf("%s: .semfs/changes line %q: %v", name, sc.Text(), err)
			}
			lines = append(lines, line(c))
		}
		if strings.Join(lines, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s: .semfs/changes:\n  %s\nwant:\n  %s", name, strings.Join(lines, "\n  "), strings.Join(want, "\n  "))
		}
	}

	// The CLI prints the same, resumable from the cursor it prints.
	out, errOut, code := d.Run("changes", "--since", f.cursor)
	if code != 0 || out != "" || !strings.Contains(errOut, "cursor "+f.cursor) {
		t.Fatalf("semfs changes at the head: %d %q %q", code, out, errOut)
	}
	if _, err := v.Mkdir("dir/sub", 0o755); err != nil {
		t.Fatal(err)
	}
	out, errOut, code = d.Run("changes", "--since", f.cursor, "dir/**")
	if wantOut := fmt.Sprintf("%d mkdir editor dir/sub\n", f.last+1); code != 0 || out != wantOut {
		t.Fatalf("semfs changes: %d %q (want %q) %q", code, out, wantOut, errOut)
	}
	// A glob that matches nothing skips the change but moves the cursor past it.
	out, errOut, code = d.Run("changes", "--since", f.cursor, "--json", "elsewhere/*")
	var resp client.ChangesResponse
	if code != 0 || json.Unmarshal([]byte(out), &resp) != nil || len(resp.Changes) != 0 || resp.Cursor == f.cursor {
		t.Fatalf("semfs changes --json elsewhere/*: %d %q %q", code, out, errOut)
	}
}

// A long poll parks until a change wakes it: it answers with the change
// (a poll that was not woken would answer empty, at its timeout), within a
// second of the change (the bound on the wait for an event).
func TestChangesLongPollWakes(t *testing.T) {
	d := semfstest.Start(t, semfstest.Options{ModelDir: "off", NFS: "off"})
	f := newFeedReader(t, d)
	type answer struct {
		r   client.ChangesResponse
		err error
		at  time.Time
	}
	done := make(chan answer, 1)
	go func() {
		r, err := d.Client.ChangesOnce(context.Background(), client.ChangesRequest{Since: f.cursor, Timeout: 5 * time.Minute})
		done <- answer{r, err, time.Now()}
	}()
	root9 := d.Attach9P(t, "@waker", 0)
	create9P(t, root9, "wake.txt", nil)
	made := time.Now()
	a := <-done
	if a.err != nil || a.r.Reset || len(a.r.Changes) != 1 || line(a.r.Changes[0]) != "create waker wake.txt" {
		t.Fatalf("the long poll answered %+v %v", a.r, a.err)
	}
	if wait := a.at.Sub(made); wait > time.Second {
		t.Errorf("the long poll answered %v after the create returned, want within 1 s", wait)
	}
	// With nothing new, a poll answers empty with the same cursor.
	r, err := d.Client.ChangesOnce(d.Context(), client.ChangesRequest{Since: a.r.Cursor, Timeout: time.Millisecond})
	if err != nil || len(r.Changes) != 0 || r.Reset || r.Cursor != a.r.Cursor {
		t.Fatalf("an empty poll: %+v %v", r, err)
	}

	// Server-sent events: the same change, id = the cursor after it, and
	// Last-Event-ID resumes after it.
	ev := readSSE(t, d, f.cursor, "")
	if ev.id != a.r.Cursor || !strings.Contains(ev.data, `"path":"wake.txt"`) {
		t.Fatalf("SSE: %+v, want id %s", ev, a.r.Cursor)
	}
	create9P(t, root9, "second.txt", nil)
	ev = readSSE(t, d, "", ev.id)
	if !strings.Contains(ev.data, `"path":"second.txt"`) {
		t.Fatalf("SSE after Last-Event-ID: %+v", ev)
	}

	// Bad requests change nothing and say why.
	for _, q := range []string{"since=nonsense", "limit=0", "limit=x", "timeout=-1s", "paths=%5B"} {
		body, err := d.Client.Get(d.Context(), "/v1/changes?"+q)
		var ae *client.APIError
		if err == nil {
			body.Close()
		}
		if !errors.As(err, &ae) || ae.Status != http.StatusBadRequest {
			t.Errorf("%s: %v, want 400", q, err)
		}
	}
}

type sseEvent struct{ id, event, data string }

// readSSE opens the stream (since, or Last-Event-ID) and returns its first event.
func readSSE(t *testing.T, d *semfstest.Daemon, since, lastID string) sseEvent {
	t.Helper()
	tr := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var dl net.Dialer
		return dl.DialContext(ctx, "unix", d.Socket)
	}}
	defer tr.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	u := "http://semfs/v1/changes"
	if since != "" {
		u += "?since=" + url.QueryEscape(since)
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	req.Header.Set("Accept", "text/event-stream")
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q", ct)
	}
	sc := bufio.NewScanner(resp.Body)
	var ev sseEvent
	for sc.Scan() {
		l := sc.Text()
		switch {
		case l == "" && ev.data != "":
			return ev
		case strings.HasPrefix(l, "id: "):
			ev.id = l[4:]
		case strings.HasPrefix(l, "event: "):
			ev.event = l[7:]
		case strings.HasPrefix(l, "data: "):
			ev.data = l[6:]
		}
	}
	t.Fatalf("the stream ended without an event: %v", sc.Err())
	return ev
}

// 10,000 creates read in pages of 100 lose none and repeat none.
func TestChangesTenThousandCreatesInPages(t *testing.T) {
	if testing.Short() {
		t.Skip("10,000 creates")
	}
	d := semfstest.Start(t, semfstest.Options{ModelDir: "off", NineP: "off"})
	f := newFeedReader(t, d)
	v := d.MountNFS(t, "/@bulk", 0)
	const n = 10000
	for i := 0; i < n; i++ {
		if _, err := v.Create(fmt.Sprintf("f%05d", i), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	seen := 0
	for seen < n {
		r, err := d.Client.ChangesOnce(d.Context(), client.ChangesRequest{Since: f.cursor, Limit: 100, Timeout: 10 * time.Second})
		if err != nil || r.Reset {
			t.Fatalf("page at %d: %+v %v", seen, r.Reset, err)
		}
		if len(r.Changes) > 100 {
			t.Fatalf("a page of %d", len(r.Changes))
		}
		if len(r.Changes) == 0 {
			t.Fatalf("no more changes after %d of %d\n%s", seen, n, d.Log())
		}
		for _, c := range r.Changes {
			if f.last != 0 && c.Rev != f.last+1 {
				t.Fatalf("rev %d after %d", c.Rev, f.last)
			}
			f.last = c.Rev
			if want := fmt.Sprintf("create bulk f%05d", seen); line(c) != want {
				t.Fatalf("change %d: %q, want %q", seen, line(c), want)
			}
			seen++
		}
		f.cursor = r.Cursor
	}
	if extra := f.read(0); len(extra) != 0 {
		t.Fatalf("%d changes beyond the creates: %+v", len(extra), extra)
	}
	// Nor did the watcher read the daemon's own creates back as host
	// changes: each had been followed under the namespace lock, and on a
	// loaded CI machine a create then waited past the client's timeout.
	h, err := d.Client.Health(d.Context())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(h.Watch, "; 0 batches") {
		t.Errorf("watcher: %s; the daemon's own creates were followed as host changes:\n%s",
			h.Watch, strings.Join(d.LogLines("followed changes", "level=WARN", "level=ERROR"), "\n"))
	}
}

// A history that overflowed its bound answers reset with a fresh cursor;
// a cursor still inside it reads exactly.
func TestChangesOverflowAnswersReset(t *testing.T) {
	d := semfstest.Start(t, semfstest.Options{ModelDir: "off", NFS: "off", Args: []string{"--changes-keep", "50"}})
	f := newFeedReader(t, d)
	root9 := d.Attach9P(t, "@many", 0)
	var inside *feedReader
	for i := 0; i < 60; i++ {
		create9P(t, root9, fmt.Sprintf("g%02d", i), nil)
		if i == 19 { // a cursor after g19: the bound keeps g20 on
			inside = newFeedReader(t, d)
			inside.t = t
		}
	}
	// A cursor inside the kept history continues exactly.
	var rest []string
	for i := 20; i < 60; i++ {
		rest = append(rest, fmt.Sprintf("create many g%02d", i))
	}
	inside.expect(rest...)
	r, err := d.Client.ChangesOnce(d.Context(), client.ChangesRequest{Since: f.cursor})
	if err != nil || !r.Reset || len(r.Changes) != 0 {
		t.Fatalf("after overflow: %+v %v", r, err)
	}
	// The fresh cursor is the head: nothing after it, no reset.
	fresh, err := d.Client.ChangesOnce(d.Context(), client.ChangesRequest{Since: r.Cursor})
	if err != nil || fresh.Reset || len(fresh.Changes) != 0 {
		t.Fatalf("from the fresh cursor: %+v %v", fresh, err)
	}
	h, err := d.Client.Health(d.Context())
	if err != nil || h.Changes == nil || h.Changes.Events != 50 || h.Changes.Keep != 50 {
		t.Fatalf("health: %+v %v", h.Changes, err)
	}
	out, _, code := d.Run("changes", "--since", f.cursor)
	if code != 6 || out != "" {
		t.Fatalf("semfs changes from an overflowed cursor: exit %d, %q", code, out)
	}

	// The Go client's loop hands the reset to its handler with the fresh
	// cursor, then goes on from it: the next change reaches onChanges.
	var resets []string
	var got []string
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	next := make(chan struct{})
	done := make(chan error, 1)
	var last string
	go func() {
		var err error
		last, err = d.Client.Changes(ctx, client.ChangesRequest{Since: f.cursor, Timeout: time.Minute},
			func(cs []client.Change, cursor string) error {
				for _, c := range cs {
					got = append(got, line(c))
				}
				return client.ErrStop
			},
			func(cursor string) error {
				resets = append(resets, cursor)
				close(next)
				return nil
			})
		done <- err
	}()
	<-next
	create9P(t, root9, "after-reset", nil)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if len(resets) != 1 || resets[0] != r.Cursor || strings.Join(got, ",") != "create many after-reset" || last == r.Cursor {
		t.Fatalf("Changes: resets %v (want [%s]), changes %v, last cursor %s", resets, r.Cursor, got, last)
	}
	// Without a reset handler a reset is an error.
	if _, err := d.Client.Changes(ctx, client.ChangesRequest{Since: f.cursor}, func([]client.Change, string) error { return nil }, nil); err == nil {
		t.Fatal("Changes without a reset handler took a reset quietly")
	}
}

// A clean restart continues the cursor exactly; after SIGKILL between a
// change and its reading the cursor resets (never a gap); a rebuilt index
// resets too.
func TestChangesAcrossRestartsAndKill(t *testing.T) {
	d := semfstest.Start(t, semfstest.Options{ModelDir: "off", NFS: "off"})
	f := newFeedReader(t, d)
	root9 := d.Attach9P(t, "@keeper", 0)
	create9P(t, root9, "before.txt", nil)
	f.expect("create keeper before.txt")

	d.Restart()
	root9 = d.Attach9P(t, "@keeper", 0)
	create9P(t, root9, "after-restart.txt", nil)
	f.expect("create keeper after-restart.txt")

	// SIGKILL right after a change the reader has not read: recording runs
	// after the commit, so the log cannot prove it holds that change, and
	// the old cursor answers reset (never a gap); the fresh cursor goes on.
	create9P(t, root9, "unread.txt", nil)
	d.Kill()
	d.Restart()
	r, err := d.Client.ChangesOnce(d.Context(), client.ChangesRequest{Since: f.cursor})
	if err != nil || !r.Reset || len(r.Changes) != 0 || r.Cursor == f.cursor {
		t.Fatalf("after SIGKILL: %+v %v", r, err)
	}
	h, err := d.Client.Health(d.Context())
	if err != nil || h.Changes == nil || !strings.Contains(h.Changes.Fresh, "SIGKILL") {
		t.Fatalf("health after SIGKILL: %+v %v", h.Changes, err)
	}
	f.cursor, f.last = r.Cursor, 0
	root9 = d.Attach9P(t, "@keeper", 0)
	create9P(t, root9, "after-kill.txt", nil)
	f.expect("create keeper after-kill.txt")

	// A rebuilt index starts a new history: the old cursor answers reset.
	d.RestartWith("--rebuild-index")
	r, err = d.Client.ChangesOnce(d.Context(), client.ChangesRequest{Since: f.cursor})
	if err != nil || !r.Reset || r.Cursor == f.cursor {
		t.Fatalf("after --rebuild-index: %+v %v", r, err)
	}
}

// semfs changes --follow prints changes as they happen.
func TestChangesFollowCLI(t *testing.T) {
	d := semfstest.Start(t, semfstest.Options{ModelDir: "off", NFS: "off"})
	f := newFeedReader(t, d)
	cmd := exec.Command(semfstest.Binary(t), "changes", "--follow", "--since", f.cursor, "--socket", d.Socket, "watched/**")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	root9 := d.Attach9P(t, "@follower", 0)
	create9P(t, root9, "ignored.txt", nil)
	_, dir, err := root9.Walk(nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dir.Mkdir("watched", 0o755, p9.NoUID, p9.NoGID); err != nil {
		t.Fatal(err)
	}
	dir.Close()
	_, w9, err := root9.Walk([]string{"watched"})
	if err != nil {
		t.Fatal(err)
	}
	create9P(t, w9, "x.txt", nil)
	w9.Close()
	// "watched/**" matches the directory itself too (doublestar's ** is zero
	// or more segments); ignored.txt (rev 1) is left out.
	sc := bufio.NewScanner(stdout)
	for _, want := range []string{fmt.Sprintf("%d mkdir follower watched", f.last+2), fmt.Sprintf("%d create follower watched/x.txt", f.last+3)} {
		if !sc.Scan() {
			t.Fatalf("semfs changes --follow stopped before %q: %v", want, sc.Err())
		}
		if got := sc.Text(); got != want {
			t.Fatalf("semfs changes --follow printed %q, want %q", got, want)
		}
	}
}

// In root mode a caller sees only changes below directories it could
// search: .semfs/changes read over NFS as uid 4242 leaves out a file in a
// 0700 directory of root's.
func TestChangesPerCallerView(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("root mode: the daemon must run as root")
	}
	d := semfstest.Start(t, semfstest.Options{ModelDir: "off", NineP: "off"})
	rootNFS := d.MountNFS(t, "/", 0)
	if _, err := rootNFS.Mkdir("private", 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := rootNFS.Mkdir("public", 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"private/secret.txt", "public/open.txt"} {
		if _, err := rootNFS.Create(p, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := rootNFS.Rename("public/open.txt", "private/moved.txt"); err != nil {
		t.Fatal(err)
	}
	paths := func(v *nfsc.Target) []string {
		var out []string
		sc := bufio.NewScanner(strings.NewReader(string(nfsRead(t, v, ".semfs/changes"))))
		for sc.Scan() {
			var c client.Change
			if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
				t.Fatal(err)
			}
			out = append(out, c.Op+" "+c.Path)
		}
		return out
	}
	all := strings.Join(paths(rootNFS), ", ")
	if want := "mkdir private, mkdir public, create private/secret.txt, create public/open.txt, rename private/moved.txt"; all != want {
		t.Fatalf("root sees %s, want %s", all, want)
	}
	other := strings.Join(paths(d.MountNFS(t, "/", 4242)), ", ")
	// The rename out of its view is a remove.
	if want := "mkdir private, mkdir public, create public/open.txt, remove public/open.txt"; other != want {
		t.Fatalf("uid 4242 sees %s, want %s", other, want)
	}
}
