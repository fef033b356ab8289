package integration_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/semfs/semfs/client"
	"github.com/semfs/semfs/integration/semfstest"
)

// The watcher takes IN_ATTRIB for a host's chmod, but not the ones the
// daemon's own tags make (each rewrites the file's durable record, an
// extended attribute): a tag costs no look at the backing directory. Its
// batches (semfs status) grow by the host's changes only.
func TestChangesTagsAreNotFollowed(t *testing.T) {
	d := semfstest.Start(t, semfstest.Options{ModelDir: "off", NFS: "off", NineP: "off"})
	f := newFeedReader(t, d)
	batches := func() int {
		h, err := d.Client.Health(d.Context())
		if err != nil {
			t.Fatal(err)
		}
		m := regexp.MustCompile(`(\d+) batches`).FindStringSubmatch(h.Watch)
		if m == nil {
			t.Fatalf("watch state %q", h.Watch)
		}
		n, _ := strconv.Atoi(m[1])
		return n
	}
	if err := os.WriteFile(filepath.Join(d.Data, "t.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	f.expect("create host t.txt")
	before := batches()
	for i := 0; i < 5; i++ {
		if _, err := d.Client.Tag(d.Context(), client.TagRequest{Path: "t.txt", Task: fmt.Sprint("task ", i)}); err != nil {
			t.Fatal(err)
		}
		// More than the watcher's quiet (50 ms) apart, so that each tag, if
		// it were followed, would be a batch of its own: pacing, not a wait.
		time.Sleep(150 * time.Millisecond)
	}
	if err := os.WriteFile(filepath.Join(d.Data, "marker"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	f.expect("tag  t.txt", "tag  t.txt", "tag  t.txt", "tag  t.txt", "tag  t.txt", "create host marker")
	if n := batches() - before; n != 1 {
		t.Errorf("%d batches for five tags and a host create, want 1", n)
	}
}
