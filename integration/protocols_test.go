package integration_test

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hugelgupf/p9/p9"

	"github.com/semfs/semfs/client"
	"github.com/semfs/semfs/integration/semfstest"
)

// create9P creates name in dir over 9P and writes data in one Twrite.
func create9P(t *testing.T, dir p9.File, name string, data []byte) {
	t.Helper()
	if err := tryCreate9P(dir, name, data); err != nil {
		t.Fatal(err)
	}
}

func tryCreate9P(dir p9.File, name string, data []byte) error {
	_, d, err := dir.Walk(nil)
	if err != nil {
		return err
	}
	defer d.Close()
	f, _, _, err := d.Create(name, p9.WriteOnly, 0o644, p9.NoUID, p9.NoGID)
	if err != nil {
		return fmt.Errorf("9P create %s: %w", name, err)
	}
	defer f.Close()
	if len(data) > 0 {
		if n, err := f.WriteAt(data, 0); err != nil || n != len(data) {
			return fmt.Errorf("9P write %s: %d %v", name, n, err)
		}
	}
	return nil
}

func TestCrossProtocolCreate9PReadRenameNFSQuerySocket(t *testing.T) {
	d := semfstest.Start(t, semfstest.Options{ModelDir: "off"})
	ctx := d.Context()
	root9 := d.Attach9P(t, "@notes", 0)
	payload := bytes.Repeat([]byte("written over 9P\n"), 4096)
	create9P(t, root9, "handoff.txt", payload)

	v := d.MountNFS(t, "/@editor", 0)
	f, err := v.Open("handoff.txt")
	if err != nil {
		t.Fatalf("NFS open of a file 9P just wrote: %v", err)
	}
	got, err := io.ReadAll(f)
	f.Close()
	if err != nil || !bytes.Equal(got, payload) {
		t.Fatalf("NFS read %d bytes (%v), want the %d 9P wrote", len(got), err, len(payload))
	}
	if _, err := v.Mkdir("inbox", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := v.Rename("handoff.txt", "inbox/handoff.txt"); err != nil {
		t.Fatalf("NFS rename: %v", err)
	}
	if _, err := d.Client.Tag(ctx, client.TagRequest{Path: "inbox/handoff.txt", Task: "review the handoff", RelatedApps: []string{"editor"}}); err != nil {
		t.Fatal(err)
	}
	res, err := d.Client.Query(ctx, client.QueryRequest{Text: "notes"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || res[0].Path != "inbox/handoff.txt" || res[0].CreatedBy != "notes" || res[0].Task != "review the handoff" {
		t.Fatalf("query notes = %+v", res)
	}
	// The editor only renamed it: created_by stays with the app that created it.
	if rec, err := d.Client.File(ctx, "handoff.txt"); err == nil {
		t.Fatalf("the old path still has a record: %+v", rec)
	}
	// And what NFS wrote, 9P reads at once.
	nf, err := v.OpenFile("inbox/from-nfs.txt", 0o644)
	if err != nil {
		t.Fatal(err)
	}
	nf.Write([]byte("from nfs"))
	if err := nf.Close(); err != nil {
		t.Fatal(err)
	}
	_, rf, err := root9.Walk([]string{"inbox", "from-nfs.txt"})
	if err != nil {
		t.Fatalf("9P walk to a file NFS wrote: %v", err)
	}
	defer rf.Close()
	if _, _, err := rf.Open(p9.ReadOnly); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	n, _ := rf.ReadAt(buf, 0)
	if string(buf[:n]) != "from nfs" {
		t.Fatalf("9P read %q", buf[:n])
	}
	res, _ = d.Client.Query(ctx, client.QueryRequest{Text: "editor"})
	found := false
	for _, r := range res {
		found = found || (r.Path == "inbox/from-nfs.txt" && r.CreatedBy == "editor")
	}
	if !found {
		t.Fatalf("query editor = %+v", res)
	}
}

func TestAttributionByRegisteredUID(t *testing.T) {
	d := semfstest.Start(t, semfstest.Options{ModelDir: "off"})
	ctx := d.Context()
	me := uint32(os.Getuid())
	reg, err := d.Client.Register(ctx, "agent")
	if err != nil || reg.UID != me {
		t.Fatalf("register: %+v %v", reg, err)
	}
	// NFS mount of "/" (no app in the mount) as the registered uid and as
	// another uid.
	v := d.MountNFS(t, "/", me)
	f, err := v.OpenFile("by-uid-nfs.txt", 0o644)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("x"))
	f.Close()
	other := d.MountNFS(t, "/", me+4242)
	f, err = other.OpenFile("by-other-nfs.txt", 0o644)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("x"))
	f.Close()
	// 9P attach with an empty aname, n_uname = the registered uid, and another.
	create9P(t, d.Attach9P(t, "", me), "by-uid-9p.txt", []byte("x"))
	create9P(t, d.Attach9P(t, "", me+4242), "by-other-9p.txt", []byte("x"))
	// A mount's app wins over the uid.
	create9P(t, d.Attach9P(t, "@notes", me), "by-mount-9p.txt", []byte("x"))

	want := map[string]string{
		"by-uid-nfs.txt": "agent", "by-other-nfs.txt": "",
		"by-uid-9p.txt": "agent", "by-other-9p.txt": "",
		"by-mount-9p.txt": "notes",
	}
	for p, app := range want {
		rec, err := d.Client.File(ctx, p)
		if err != nil || rec.CreatedBy != app {
			t.Errorf("%s: createdBy %q (%v), want %q", p, rec.CreatedBy, err, app)
		}
	}
	// The registration survives a restart.
	d.Restart()
	ctx = d.Context()
	create9P(t, d.Attach9P(t, "", me), "after-restart.txt", []byte("x"))
	if rec, err := d.Client.File(ctx, "after-restart.txt"); err != nil || rec.CreatedBy != "agent" {
		// Diagnosis of a failure only: a second look tells a record that
		// came late from one never made; the test expects it at once, as
		// it does for the creates above.
		time.Sleep(time.Second)
		rec2, err2 := d.Client.File(ctx, "after-restart.txt")
		_, serr := os.Stat(filepath.Join(d.Data, "after-restart.txt"))
		t.Fatalf("after restart: %+v %v\n1s later: %+v %v; on disk: %v\n%s", rec, err, rec2, err2, serr, d.Log())
	}
}

// TestSnapshotUnderConcurrentWrites writes whole files over 9P while a snapshot
// is taken; each restored file is either absent, empty (created, not yet
// written) or whole: never a torn write.
func TestSnapshotUnderConcurrentWrites(t *testing.T) {
	d := semfstest.Start(t, semfstest.Options{ModelDir: "off"})
	root := d.Attach9P(t, "@writer", 0)
	body := func(i int) []byte { return bytes.Repeat([]byte(fmt.Sprintf("%06d", i)), 80_000) } // 480 KB
	for i := 0; i < 20; i++ {
		create9P(t, root, fmt.Sprintf("pre-%03d", i), body(i))
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wrote := 0
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if err := tryCreate9P(root, fmt.Sprintf("live-%03d", i), body(i)); err != nil {
				t.Error(err)
				return
			}
			wrote++
		}
	}()
	archive := filepath.Join(t.TempDir(), "snap.tar")
	out, errOut, code := d.Run("snapshot", archive)
	close(stop)
	wg.Wait()
	if code != 0 {
		t.Fatalf("snapshot: %d %s %s", code, out, errOut)
	}
	base := t.TempDir()
	rd, ri := filepath.Join(base, "data"), filepath.Join(base, "index")
	if out, errOut, code := d.Run("restore", archive, "--data", rd, "--index", ri); code != 0 {
		t.Fatalf("restore: %d %s %s", code, out, errOut)
	}
	ents, err := os.ReadDir(rd)
	if err != nil {
		t.Fatal(err)
	}
	live := 0
	for _, e := range ents {
		b, _ := os.ReadFile(filepath.Join(rd, e.Name()))
		var i int
		fmt.Sscanf(e.Name()[strings.Index(e.Name(), "-")+1:], "%d", &i)
		if len(b) != 0 && !bytes.Equal(b, body(i)) {
			t.Fatalf("%s is torn in the snapshot: %d bytes", e.Name(), len(b))
		}
		if strings.HasPrefix(e.Name(), "live-") {
			live++
		}
	}
	t.Logf("%d files written during the test, %d of them in the snapshot", wrote, live)
	r := semfstest.Start(t, semfstest.Options{Data: rd, Index: ri, ModelDir: "off"})
	res, err := r.Client.Query(r.Context(), client.QueryRequest{Text: "writer"})
	if err != nil || len(res) != len(ents) {
		t.Fatalf("restored daemon finds %d files by creator, want %d (%v)", len(res), len(ents), err)
	}
}

// TestTagsFollowRenamesThroughProtocolsAndRestart: tags and created_by move with
// a file and with a whole directory renamed over 9P or NFS, and stay after a
// restart.
func TestTagsFollowRenamesThroughProtocolsAndRestart(t *testing.T) {
	d := semfstest.Start(t, semfstest.Options{ModelDir: "off"})
	ctx := d.Context()
	root := d.Attach9P(t, "@notes", 0)
	_, dir, err := root.Walk(nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dir.Mkdir("proj", 0o755, p9.NoUID, p9.NoGID); err != nil {
		t.Fatal(err)
	}
	dir.Close()
	_, proj, err := root.Walk([]string{"proj"})
	if err != nil {
		t.Fatal(err)
	}
	create9P(t, proj, "plan.md", []byte("plan"))
	create9P(t, root, "todo.md", []byte("todo"))
	for p, task := range map[string]string{"proj/plan.md": "plan the launch", "todo.md": "weekly chores"} {
		if _, err := d.Client.Tag(ctx, client.TagRequest{Path: p, Task: task, RelatedApps: []string{"calendar"}}); err != nil {
			t.Fatal(err)
		}
	}
	// A file over 9P, a directory over NFS.
	if err := root.RenameAt("todo.md", root, "done.md"); err != nil {
		t.Fatalf("9P renameat: %v", err)
	}
	proj.Close()
	v := d.MountNFS(t, "/@editor", 0)
	if err := v.Rename("proj", "archive"); err != nil {
		t.Fatalf("NFS rename of a directory: %v", err)
	}
	check := func() {
		t.Helper()
		for p, task := range map[string]string{"archive/plan.md": "plan the launch", "done.md": "weekly chores"} {
			rec, err := d.Client.File(ctx, p)
			if err != nil || rec.Task != task || rec.CreatedBy != "notes" || len(rec.RelatedApps) != 1 {
				t.Errorf("%s: %+v %v\n%s", p, rec, err, d.Log())
			}
		}
		for _, gone := range []string{"proj/plan.md", "todo.md"} {
			if _, err := d.Client.File(ctx, gone); err == nil {
				t.Errorf("%s still has a record", gone)
			}
		}
		res, err := d.Client.Query(ctx, client.QueryRequest{Text: "archive launch", Rank: client.RankSeed}) // seed: two points
		if err != nil || len(res) != 1 || res[0].Path != "archive/plan.md" || res[0].Score != 2 {
			t.Errorf("query archive launch: %+v %v", res, err)
		}
	}
	check()
	d.Restart()
	ctx = d.Context()
	check()
}
