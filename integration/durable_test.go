package integration_test

import (
	"crypto/rand"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hugelgupf/p9/p9"
	"github.com/semfs/semfs/client"
	"github.com/semfs/semfs/embed"
	"github.com/semfs/semfs/integration/semfstest"
)

// tagged20 creates 20 files through the real doors (NFS as "writer", 9P as
// "notes", among them a symlink, which cannot carry an extended attribute and
// so keeps its record in the journal), tags them all (one with a client vector),
// and returns the records the daemon answered with.
func tagged20(t *testing.T, d *semfstest.Daemon) map[string]client.Record {
	t.Helper()
	ctx := d.Context()
	v := d.MountNFS(t, "/@writer", 0)
	root9 := d.Attach9P(t, "@notes", 0)
	var reqs []client.TagRequest
	for i := 0; i < 20; i++ {
		p := fmt.Sprintf("f%02d.txt", i)
		switch {
		case i == 19:
			p = "link-to-f00"
			if _, err := root9.Symlink("f00.txt", p, p9.NoUID, p9.NoGID); err != nil {
				t.Fatalf("9P symlink: %v", err)
			}
		case i%2 == 0:
			f, err := v.OpenFile(p, 0o644)
			if err != nil {
				t.Fatal(err)
			}
			f.Write([]byte("body " + p))
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
		default:
			create9P(t, root9, p, []byte("body "+p))
		}
		r := client.TagRequest{Path: p, Task: fmt.Sprintf("task number %d", i), RelatedApps: []string{fmt.Sprintf("app%d", i), "shared"}}
		if i == 3 {
			vec := make([]float32, embed.MiniLM.Dims)
			for j := range vec {
				vec[j] = float32(j%7) + 1
			}
			r.Embedding = &client.Vector{Model: embed.MiniLM.Name, Values: vec}
		}
		reqs = append(reqs, r)
	}
	recs, err := d.Client.TagMany(ctx, reqs)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]client.Record{}
	for _, r := range recs {
		if r.CreatedBy == "" {
			t.Fatalf("%s: no creator right after the create: %+v", r.Path, r)
		}
		want[r.Path] = r
	}
	return want
}

// checkRecords asserts that every tag, creator and creation time is back, and
// that the client vector still ranks its file first.
func checkRecords(t *testing.T, d *semfstest.Daemon, want map[string]client.Record) {
	t.Helper()
	ctx := d.Context()
	for p, w := range want {
		got, err := d.Client.File(ctx, p)
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		if got.CreatedBy != w.CreatedBy || got.Task != w.Task || !reflect.DeepEqual(got.RelatedApps, w.RelatedApps) || !got.CreatedAt.Equal(w.CreatedAt) {
			t.Errorf("%s after restart:\n got  %+v\n want %+v", p, got, w)
		}
	}
	vec := make([]float32, embed.MiniLM.Dims)
	for j := range vec {
		vec[j] = float32(j%7) + 1
	}
	res, err := d.Client.Query(ctx, client.QueryRequest{Embedding: &client.Vector{Model: embed.MiniLM.Name, Values: vec}, Limit: 1})
	if err != nil || len(res) != 1 || res[0].Path != "f03.txt" {
		t.Errorf("query by the client vector of f03.txt = %+v, %v", res, err)
	}
}

// TestTagsSurviveIndexDamage damages one index file (or the whole index
// directory, or the journal) with the daemon stopped, restarts it, and checks
// that all 20 tags and creators are back and that the log says what was
// recovered, and from where.
func TestTagsSurviveIndexDamage(t *testing.T) {
	records := func(d *semfstest.Daemon) string { return filepath.Join(d.Index, "records.db") }
	cases := []struct {
		name    string
		damage  func(t *testing.T, d *semfstest.Daemon)
		logs    []string   // each must appear in the restart's log
		anyOf   [][]string // and all of one of these sets
		noWarn  bool       // the index lost nothing: no recovery warning
		journal bool       // the journal was damaged: records saved again from the index
	}{
		{name: "records.db deleted", damage: func(t *testing.T, d *semfstest.Daemon) { must(t, os.Remove(records(d))) },
			logs: []string{"records.db missing", "index recovered from the backing files' durable records", "tags=20", "creators=20", "tagsFromJournal=1"}},
		{name: "records.db emptied", damage: func(t *testing.T, d *semfstest.Daemon) { must(t, os.Truncate(records(d), 0)) },
			logs: []string{"records.db empty", "index recovered from the backing files' durable records", "tags=20"}},
		{name: "records.db cut in half", damage: func(t *testing.T, d *semfstest.Daemon) {
			fi, err := os.Stat(records(d))
			must(t, err)
			must(t, os.Truncate(records(d), fi.Size()/2))
		}, anyOf: [][]string{
			// Which door notices depends on where the cut falls: Bleve is fed
			// in batches, so it may not yet hold a generation the cut took
			// away. Then the tags the cut lost are newer in the files' xattrs
			// than in records.db, and the start completes them from there.
			{"index recovered from the backing files' durable records", "records.db behind Bleve"},
			{"index completed from durable records"},
		}},
		{name: "records.db random bytes", damage: func(t *testing.T, d *semfstest.Daemon) {
			b := make([]byte, 4096)
			rand.Read(b)
			must(t, os.WriteFile(records(d), b, 0o600))
		}, logs: []string{"records.db unreadable", "moved aside to", "index recovered from the backing files' durable records", "tags=20", "creators=20"}},
		{name: "bleve deleted", damage: func(t *testing.T, d *semfstest.Daemon) { must(t, os.RemoveAll(filepath.Join(d.Index, "bleve"))) },
			logs: []string{"Bleve missing; rebuilding from buntdb"}, noWarn: true},
		{name: "index directory deleted", damage: func(t *testing.T, d *semfstest.Daemon) { must(t, os.RemoveAll(d.Index)) },
			logs: []string{"records.db missing with the whole index directory", "index recovered from the backing files' durable records", "tags=20", "creators=20", "tagsFromXattr=19", "tagsFromJournal=1"}},
		// Vectors have their own file: losing it loses no record, and the
		// client's vector comes back from its file's durable record.
		{name: "vectors.db deleted", damage: func(t *testing.T, d *semfstest.Daemon) { must(t, os.Remove(filepath.Join(d.Index, "vectors.db"))) },
			logs: []string{"0 tags, 1 vectors"}, noWarn: true},
		{name: "vectors.db random bytes", damage: func(t *testing.T, d *semfstest.Daemon) {
			must(t, os.WriteFile(filepath.Join(d.Index, "vectors.db"), []byte("not a buntdb log\r\n"), 0o600))
		}, logs: []string{"vectors.db unreadable; moved aside", "0 tags, 1 vectors"}, noWarn: true},
		{name: "journal deleted", damage: func(t *testing.T, d *semfstest.Daemon) { must(t, os.Remove(d.Index+".journal")) },
			logs: []string{"saved durable records of files the index alone described", "saved=1"}, noWarn: true, journal: true},
		{name: "registry and NFS handle map deleted", damage: func(t *testing.T, d *semfstest.Daemon) {
			// Both are other state than tags: the registry (uid -> app) is
			// re-registered by apps, and the handle map is a cache.
			matches, _ := filepath.Glob(filepath.Join(d.Index, "*"))
			for _, m := range matches {
				if b := filepath.Base(m); b != "records.db" && b != "vectors.db" && b != "bleve" && b != "lock" {
					must(t, os.RemoveAll(m))
				}
			}
		}, noWarn: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := semfstest.Start(t, semfstest.Options{ModelDir: "off"})
			want := tagged20(t, d)
			d.Stop()
			c.damage(t, d)
			d.Restart()
			checkRecords(t, d, want)
			log := d.Log() // this start's only: each start has its own
			for _, s := range c.logs {
				if !strings.Contains(log, s) {
					t.Errorf("the restart's log does not say %q:\n%s", s, log)
				}
			}
			if len(c.anyOf) > 0 {
				found := false
				for _, set := range c.anyOf {
					all := true
					for _, s := range set {
						all = all && strings.Contains(log, s)
					}
					found = found || all
				}
				if !found {
					t.Errorf("the restart's log says none of %q:\n%s", c.anyOf, log)
				}
			}
			if c.noWarn && strings.Contains(log, "index recovered from") {
				t.Errorf("a recovery reported where the index lost nothing:\n%s", log)
			}
			if c.journal {
				// And the journal is whole again: lose the index now, and
				// everything still comes back.
				d.Stop()
				must(t, os.RemoveAll(d.Index))
				d.Restart()
				checkRecords(t, d, want)
			}
		})
	}
}

// TestUnrecoverableIndexLossRefusesToStart: the whole index directory and the
// journal beside it are lost. The symlink's record lived in those two only, so
// the daemon refuses to start, naming the damage and the ways out; with
// --rebuild-index it starts from the backing files alone and recovers every
// record they carry.
func TestUnrecoverableIndexLossRefusesToStart(t *testing.T) {
	d := semfstest.Start(t, semfstest.Options{ModelDir: "off"})
	want := tagged20(t, d)
	d.Stop()
	must(t, os.RemoveAll(d.Index))
	must(t, os.Remove(d.Index+".journal"))

	// Twice: the first refused start must not leave a sound-looking index
	// (and journal) behind for the second to start on.
	for attempt := 1; attempt <= 2; attempt++ {
		cmd := exec.Command(semfstest.Binary(t), "serve", "--data", d.Data, "--index", d.Index, "--socket", d.Socket,
			"--nfs", "127.0.0.1:0", "--9p", "off", "--model-dir", "off")
		out, err := runWithTimeout(cmd, time.Minute)
		if err == nil {
			t.Fatalf("start %d: semfs started after losing the index and the journal:\n%s", attempt, out)
		}
		for _, s := range []string{"semfs could not start", "is damaged", "records.db missing with the whole index directory", "did not exist", "semfs restore", "--rebuild-index"} {
			if !strings.Contains(out, s) {
				t.Errorf("start %d: the refusal does not say %q:\n%s", attempt, s, out)
			}
		}
	}

	d.RestartWith("--rebuild-index")
	log := d.Log()
	if !strings.Contains(log, "--rebuild-index: starting from the backing files alone") || !strings.Contains(log, "tags=19") {
		t.Errorf("the rebuild's log does not say what it recovered:\n%s", log)
	}
	delete(want, "link-to-f00") // in the index and the journal only: both lost
	checkRecords(t, d, want)
}

// TestCreatedByDurableBeforeAcknowledged creates files over 9P and NFS and
// kills the daemon (SIGKILL) as soon as the last create is acknowledged, before
// the batched change stream can bring them all to the index. After the restart
// every acknowledged file has its creator.
func TestCreatedByDurableBeforeAcknowledged(t *testing.T) {
	for round := 0; round < 3; round++ {
		d := semfstest.Start(t, semfstest.Options{ModelDir: "off"})
		root9 := d.Attach9P(t, "@notes", 0)
		v := d.MountNFS(t, "/@writer", 0)
		want := map[string]string{}
		_, dir, err := root9.Walk(nil)
		must(t, err)
		for i := 0; i < 300; i++ {
			p := fmt.Sprintf("r%d-9p-%03d", round, i)
			// Tlcreate is the acknowledgement; the file stays open (no clunk),
			// as a client killed with the daemon would leave it.
			_, dd, err := dir.Walk(nil)
			must(t, err)
			if _, _, _, err := dd.Create(p, p9.ReadWrite, 0o644, p9.NoUID, p9.NoGID); err != nil {
				t.Fatal(err)
			}
			want[p] = "notes"
			if i%3 == 0 {
				q := fmt.Sprintf("r%d-nfs-%03d", round, i)
				if _, err := v.Create(q, 0o644); err != nil {
					t.Fatal(err)
				}
				want[q] = "writer"
			}
		}
		d.Kill()
		d.Restart()
		t.Logf("round %d: restart log: %s", round, lineWith(d.Log(), "durable records"))
		ctx := d.Context()
		missing := 0
		for p, app := range want {
			rec, err := d.Client.File(ctx, p)
			if err != nil || rec.CreatedBy != app {
				missing++
				if missing <= 5 {
					t.Errorf("%s: createdBy %q (%v), want %q", p, rec.CreatedBy, err, app)
				}
			}
		}
		if missing > 0 {
			t.Fatalf("round %d: %d of %d acknowledged files lost their creator", round, missing, len(want))
		}
		d.Stop()
	}
}

func lineWith(log, s string) string {
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, s) {
			return l
		}
	}
	return "(none)"
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func runWithTimeout(cmd *exec.Cmd, d time.Duration) (string, error) {
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return "", err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return out.String(), err
	case <-time.After(d):
		cmd.Process.Kill()
		<-done
		return out.String(), fmt.Errorf("still running after %s", d)
	}
}
