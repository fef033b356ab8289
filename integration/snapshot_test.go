package integration_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/semfs/semfs/client"
	"github.com/semfs/semfs/integration/semfstest"
)

func TestSnapshotRestoreAnswersAsBefore(t *testing.T) {
	base := t.TempDir()
	data := filepath.Join(base, "data")
	files := map[string]string{}
	for i := 0; i < 40; i++ {
		files[fmt.Sprintf("proj%d/notes/file-%02d.md", i%4, i)] = strings.Repeat("content ", i+1)
	}
	writeFiles(t, data, files)
	if err := os.Symlink("proj0/notes/file-00.md", filepath.Join(data, "latest")); err != nil {
		t.Fatal(err)
	}
	d := semfstest.Start(t, semfstest.Options{Data: data, ModelDir: "off"})
	ctx := d.Context()
	for i := 0; i < 40; i += 3 {
		p := fmt.Sprintf("proj%d/notes/file-%02d.md", i%4, i)
		if _, err := d.Client.Tag(ctx, client.TagRequest{Path: p, Task: fmt.Sprintf("task %d about deploys", i), RelatedApps: []string{"ci", fmt.Sprintf("app%d", i%5)}}); err != nil {
			t.Fatal(err)
		}
	}
	queries := []string{"deploys", "proj2", "app3 notes", "file-1"}
	before := map[string][]string{}
	for _, q := range queries {
		res, err := d.Client.Query(ctx, client.QueryRequest{Text: q})
		if err != nil {
			t.Fatal(err)
		}
		before[q] = resultLines(res)
	}

	// Tags keep changing while the snapshot is taken; the archive must still be
	// a consistent, restorable whole.
	archive := filepath.Join(base, "snap.tar")
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			d.Client.Tag(ctx, client.TagRequest{Path: "proj1/notes/file-01.md", Task: fmt.Sprintf("churn %d", i)})
		}
	}()
	out, errOut, code := d.Run("snapshot", archive)
	close(stop)
	wg.Wait()
	if code != 0 {
		t.Fatalf("semfs snapshot: %d\n%s%s", code, out, errOut)
	}

	restoreData, restoreIndex := filepath.Join(base, "r-data"), filepath.Join(base, "r-index")
	cmdOut, cmdErr, code := d.Run("restore", archive, "--data", restoreData, "--index", restoreIndex)
	if code != 0 {
		t.Fatalf("semfs restore: %d\n%s%s", code, cmdOut, cmdErr)
	}
	if _, _, code := d.Run("restore", archive, "--data", restoreData, "--index", restoreIndex); code == 0 {
		t.Fatal("restore into a non-empty location succeeded")
	}
	for p, body := range files {
		b, err := os.ReadFile(filepath.Join(restoreData, p))
		if err != nil || string(b) != body {
			t.Fatalf("restored %s: %q %v", p, b, err)
		}
	}
	if target, err := os.Readlink(filepath.Join(restoreData, "latest")); err != nil || target != "proj0/notes/file-00.md" {
		t.Fatalf("restored symlink: %q %v", target, err)
	}
	r := semfstest.Start(t, semfstest.Options{Data: restoreData, Index: restoreIndex, ModelDir: "off"})
	rctx := r.Context()
	// The churned record holds one whole value the daemon had at some moment.
	got, err := r.Client.File(rctx, "proj1/notes/file-01.md")
	if err != nil || (got.Task != "" && !strings.HasPrefix(got.Task, "churn ")) {
		t.Fatalf("restored churned record: %+v %v", got, err)
	}
	// Put the churned file's tag to one value on both daemons, then every answer
	// must be the same.
	if _, err := r.Client.Tag(rctx, client.TagRequest{Path: "proj1/notes/file-01.md", Task: ""}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Client.Tag(ctx, client.TagRequest{Path: "proj1/notes/file-01.md", Task: ""}); err != nil {
		t.Fatal(err)
	}
	for _, q := range queries {
		res, err := r.Client.Query(rctx, client.QueryRequest{Text: q})
		if err != nil {
			t.Fatal(err)
		}
		want := before[q]
		orig, _ := d.Client.Query(ctx, client.QueryRequest{Text: q})
		if q != "file-1" { // "file-1" matches the churned file, compared below instead
			if fmt.Sprint(resultLines(res)) != fmt.Sprint(want) {
				t.Fatalf("query %q after restore:\n got %v\nwant %v", q, resultLines(res), want)
			}
		}
		if fmt.Sprint(resultLines(res)) != fmt.Sprint(resultLines(orig)) {
			t.Fatalf("query %q: restored daemon answers\n %v\nthe original answers\n %v", q, resultLines(res), resultLines(orig))
		}
	}
}

// resultLines renders results with everything a client sees.
func resultLines(res []client.Result) []string {
	out := make([]string, len(res))
	for i, r := range res {
		out[i] = fmt.Sprintf("%s|%s|%s|%v|%.6f|%d", r.Path, r.CreatedBy, r.Task, r.RelatedApps, r.Score, r.CreatedAt.UnixNano())
	}
	return out
}
