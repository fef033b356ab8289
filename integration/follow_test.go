package integration_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/semfs/semfs/client"
	"github.com/semfs/semfs/integration/semfstest"
)

// waitIndexed waits until the control socket answers for p as want says
// (present or gone). docs/backing-directory.md promises a delay of about a
// second at most; semfstest.WaitBound is only a failure bound for a loaded
// machine.
func waitIndexed(t *testing.T, d *semfstest.Daemon, p string, present bool) client.Record {
	t.Helper()
	var rec client.Record
	d.WaitFor(t, fmt.Sprintf("%s to be indexed (present=%v)", p, present), func() error {
		var err error
		rec, err = d.Client.File(d.Context(), p)
		var ae *client.APIError
		switch {
		case present && err == nil:
			return nil
		case !present && errors.As(err, &ae) && ae.Code == client.CodeNotFound:
			return nil
		case err != nil && !errors.As(err, &ae):
			t.Fatalf("GET %s: %v", p, err)
		}
		return fmt.Errorf("GET %s: %+v %v", p, rec, err)
	})
	return rec
}

// The running daemon follows what host processes do in the backing directory,
// without a restart: a new file is found by a path query, a renamed directory
// keeps its files' tags, a removed file leaves the index; and a file created
// through NFS keeps the creator the change stream gave it.
func TestIndexFollowsHostChanges(t *testing.T) {
	d := semfstest.Start(t, semfstest.Options{})
	ctx := d.Context()
	host := func(p string) string { return filepath.Join(d.Data, filepath.FromSlash(p)) }

	// A host process writes a new file into the backing directory.
	writeFiles(t, d.Data, map[string]string{"reports/q3-revenue-summary.txt": "revenue"})
	if rec := waitIndexed(t, d, "reports/q3-revenue-summary.txt", true); rec.CreatedBy != "" {
		t.Fatalf("host-created file: %+v, want a record with no creator", rec)
	}
	res, err := d.Client.Query(ctx, client.QueryRequest{Text: "q3-revenue-summary"})
	if err != nil || !slices.Contains(paths(res), "reports/q3-revenue-summary.txt") {
		t.Fatalf("path query: %v %v", paths(res), err)
	}

	// Tagged, then its directory renamed by the host: the tags follow.
	if _, err := d.Client.Tag(ctx, client.TagRequest{Path: "reports/q3-revenue-summary.txt", Task: "quarterly numbers", RelatedApps: []string{"sheet"}}); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(host("archive"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(host("reports"), host("archive/2026")); err != nil {
		t.Fatal(err)
	}
	rec := waitIndexed(t, d, "archive/2026/q3-revenue-summary.txt", true)
	if rec.Task != "quarterly numbers" || !slices.Equal(rec.RelatedApps, []string{"sheet"}) {
		t.Fatalf("after the host's rename: %+v, want the tags kept", rec)
	}
	// One batch moved the record: the old path is gone with it.
	if _, err := d.Client.File(ctx, "reports/q3-revenue-summary.txt"); err == nil {
		t.Errorf("old path still indexed after the rename")
	}

	// A file created through NFS by an app: the watcher sees it too and must
	// not take its creator away.
	v := d.MountNFS(t, "/@writer", 0)
	f, err := v.OpenFile("from-nfs.txt", 0o644)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("x"))
	f.Close()
	// A name the core would never make (not UTF-8) in the same batch as a
	// good one: the good one is followed whatever becomes of the other.
	if err := os.WriteFile(host("bad\xff.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(host("after-bad.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	waitIndexed(t, d, "after-bad.txt", true)

	// Removed by the host: the record goes. The watcher handles events in
	// order, so once this is seen, so were the NFS file's.
	if err := os.Remove(host("archive/2026/q3-revenue-summary.txt")); err != nil {
		t.Fatal(err)
	}
	waitIndexed(t, d, "archive/2026/q3-revenue-summary.txt", false)
	if rec, err := d.Client.File(ctx, "from-nfs.txt"); err != nil || rec.CreatedBy != "writer" {
		t.Errorf("NFS-created file: %+v %v, want createdBy writer", rec, err)
	}

	// Moved out of the backing directory and back in under another name: the
	// record went with the first move, and the file's durable record (its
	// user.semfs attribute written when NFS created it, or the journal entry of
	// its identity where the file system has no user attributes) gives its
	// creator back.
	outside := filepath.Join(filepath.Dir(d.Data), "outside.txt")
	if err := os.Rename(host("from-nfs.txt"), outside); err != nil {
		t.Fatal(err)
	}
	waitIndexed(t, d, "from-nfs.txt", false)
	if err := os.Rename(outside, host("back-in.txt")); err != nil {
		t.Fatal(err)
	}
	if rec := waitIndexed(t, d, "back-in.txt", true); rec.CreatedBy != "writer" {
		t.Errorf("moved back in: %+v, want createdBy writer from its user.semfs attribute", rec)
	}
	if h, err := d.Client.Health(ctx); err != nil || !strings.HasPrefix(h.Watch, "inotify, ") || strings.Contains(h.Watch, " 0 batches") {
		t.Errorf("health's watch line: %q %v, want inotify with batches", h.Watch, err)
	}
	if !strings.Contains(d.Log(), "index followed changes made in the backing directory") {
		t.Errorf("no batch logged")
	}
}
