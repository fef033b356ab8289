package integration

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/semfs/semfs/client"
	"github.com/semfs/semfs/integration/semfstest"
)

// TestClientWritesDuringBackgroundReconcile restarts the daemon on an index
// and backing directory of 30,000 files, where the start-up reconcile runs in
// the background, and at once (while the daemon still walks the tree) queries,
// tags a file, renames a tagged file over 9P and removes another over NFS,
// then creates and renames files across the tree until the reconcile is done. The query must answer from the index as it was saved;
// after the reconcile every client write must still be in the index as the
// client left it (attribution, tags, the rename, the removal), and the change
// made behind the daemon's back while it was down must have been found.
func TestClientWritesDuringBackgroundReconcile(t *testing.T) {
	base := t.TempDir()
	data := filepath.Join(base, "data")
	const n = 30_000
	for i := 0; i < n; i++ {
		dir := filepath.Join(data, fmt.Sprintf("d%02d", i%30))
		if i < 30 {
			if err := os.MkdirAll(dir, 0o777); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%05d.txt", i)), nil, 0o666); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(data, 0o777); err != nil {
		t.Fatal(err)
	}
	d := semfstest.Start(t, semfstest.Options{Data: data, ModelDir: "off", NoWaitReconcile: true})
	d.WaitReconciled()
	ctx := d.Context()
	for _, r := range []client.TagRequest{
		{Path: "d00/f00000.txt", Task: "quarterly budget", RelatedApps: []string{"sheet"}},
		{Path: "d01/f00001.txt", Task: "holiday photos"},
	} {
		if _, err := d.Client.Tag(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	d.Stop()
	// Behind the daemon's back while it is down.
	if err := os.WriteFile(filepath.Join(data, "d05", "host-made.txt"), []byte("x"), 0o666); err != nil {
		t.Fatal(err)
	}

	d.Restart()
	root9 := d.Attach9P(t, "@notes", 0)
	v := d.MountNFS(t, "/@writer", 0)
	res, err := d.Client.Query(ctx, client.QueryRequest{Text: "quarterly budget", Limit: 5})
	if err != nil || len(res) == 0 || res[0].Task != "quarterly budget" {
		t.Errorf("query while reconciling = %+v, %v", res, err)
	}
	if _, err := d.Client.Tag(ctx, client.TagRequest{Path: "d02/f00002.txt", Task: "tagged meanwhile"}); err != nil {
		t.Fatal(err)
	}
	_, dir0, err := root9.Walk([]string{"d00"})
	if err != nil {
		t.Fatal(err)
	}
	defer dir0.Close()
	if err := dir0.RenameAt("f00000.txt", root9, "budget.txt"); err != nil {
		t.Fatalf("9P rename: %v", err)
	}
	if err := v.Remove("d01/f00001.txt"); err != nil {
		t.Fatalf("NFS remove: %v", err)
	}
	// Creates over NFS and renames over 9P across every directory, for as
	// long as the reconcile runs: some land in directories the walk has
	// already listed, before the reconcile commits (the race the guard
	// closes; without it those records are lost or renamed back).
	var created, renamedFrom, renamedTo []string
	for i := 0; ; i++ {
		h, err := d.Client.Health(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(h.LastReconcile, "in progress") {
			break
		}
		dir := fmt.Sprintf("d%02d", i%30)
		p := fmt.Sprintf("%s/new-%d.txt", dir, i)
		f, err := v.OpenFile(p, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		created = append(created, p)
		if i%3 == 0 && i/3 < n/30 {
			from := fmt.Sprintf("f%05d.txt", 30*(10+i/3)+i%30) // untouched so far
			to := fmt.Sprintf("moved-%d.txt", i)
			_, df, err := root9.Walk([]string{dir})
			if err != nil {
				t.Fatal(err)
			}
			err = df.RenameAt(from, df, to)
			df.Close()
			if err != nil {
				t.Fatalf("9P rename %s/%s: %v", dir, from, err)
			}
			renamedFrom, renamedTo = append(renamedFrom, dir+"/"+from), append(renamedTo, dir+"/"+to)
		}
	}
	if len(created) == 0 {
		t.Log("the reconcile had finished before the first create; the client writes were checked all the same")
	}
	t.Logf("%d creates, %d renames during the reconcile", len(created), len(renamedFrom))

	check := func(p string, ok func(client.Record) bool) {
		t.Helper()
		r, err := d.Client.File(ctx, p)
		if err != nil || !ok(r) {
			t.Errorf("%s: %+v %v", p, r, err)
		}
	}
	gone := func(p string) {
		t.Helper()
		var ae *client.APIError
		if r, err := d.Client.File(ctx, p); !errors.As(err, &ae) || ae.Code != client.CodeNotFound {
			t.Errorf("%s still has a record after the client moved or removed it: %+v %v", p, r, err)
		}
	}
	for _, p := range created {
		check(p, func(r client.Record) bool { return r.CreatedBy == "writer" })
	}
	for i := range renamedFrom {
		gone(renamedFrom[i])
		check(renamedTo[i], func(r client.Record) bool { return true })
	}
	check("budget.txt", func(r client.Record) bool { return r.Task == "quarterly budget" })
	check("d02/f00002.txt", func(r client.Record) bool { return r.Task == "tagged meanwhile" })
	check("d05/host-made.txt", func(r client.Record) bool { return r.CreatedBy == "" })
	gone("d00/f00000.txt")
	gone("d01/f00001.txt")
	// And the next start agrees (what was written is what is on disk).
	d.Restart()
	d.WaitReconciled()
	for _, p := range created {
		check(p, func(r client.Record) bool { return r.CreatedBy == "writer" })
	}
	check("budget.txt", func(r client.Record) bool { return r.Task == "quarterly budget" })
}
