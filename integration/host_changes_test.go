package integration_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hugelgupf/p9/p9"

	"github.com/semfs/semfs/client"
	"github.com/semfs/semfs/integration/semfstest"
)

// TestGrepSeesHostChangesAtOnce: a grep that begins after a host process
// changed the backing directory answers as GNU grep -rn over it then does,
// with no wait between the change and the grep: new files (also in a new
// directory), overwrites, renames and removals, made directly in the backing
// directory (the watcher's quiet period would otherwise hold them back, and
// the answer would be the index's of before). Each round's word is new, so an
// answer from before the change is wrong.
func TestGrepSeesHostChangesAtOnce(t *testing.T) {
	gnu := requireGNUGrep(t)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 33))
	data := filepath.Join(t.TempDir(), "data")
	if err := os.MkdirAll(filepath.Join(data, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	d := semfstest.Start(t, semfstest.Options{Data: data, ModelDir: "off"})
	var live []string // files the host made, still there
	for i := range 80 {
		word := fmt.Sprintf("quokka%dx%d", i, r.IntN(1e6))
		body := []byte("first line\n" + word + " marsupial\n")
		var changed string
		switch k := i % 5; {
		case k <= 1 || len(live) == 0: // a new file, now and then in a new directory
			p := fmt.Sprintf("d/f%d.txt", i)
			if k == 1 {
				p = fmt.Sprintf("n%d/deep/f.txt", i)
			}
			if err := os.MkdirAll(filepath.Join(data, filepath.Dir(p)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(data, p), body, 0o644); err != nil {
				t.Fatal(err)
			}
			live = append(live, p)
			changed = "new " + p
		case k == 2: // an overwrite: the word of its last round is gone
			p := live[r.IntN(len(live))]
			if err := os.WriteFile(filepath.Join(data, p), body, 0o644); err != nil {
				t.Fatal(err)
			}
			changed = "overwrite " + p
		case k == 3: // a rename: found at the new name only
			j := r.IntN(len(live))
			from, to := live[j], fmt.Sprintf("d/renamed%d.txt", i)
			if err := os.Rename(filepath.Join(data, from), filepath.Join(data, to)); err != nil {
				t.Fatal(err)
			}
			live[j] = to
			changed = "rename " + from + " to " + to
			word = "marsupial"
		case k == 4: // a removal
			j := r.IntN(len(live))
			if err := os.Remove(filepath.Join(data, live[j])); err != nil {
				t.Fatal(err)
			}
			changed = "remove " + live[j]
			live = append(live[:j], live[j+1:]...)
			word = "marsupial"
		}
		want := gnuGrep(t, gnu, data, []string{"-F"}, word)
		got := apiGrep(t, d.Client, client.GrepRequest{Pattern: word, Fixed: true})
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("round %d, after %s: grep %q answers %v, GNU grep -rn %v", i, changed, word, got, want)
		}
	}
}

// TestAnswersSeeHostChangesAtOnce: every control request reflects what host
// processes did in the backing directory before it, as it reflects what was
// done through NFS and 9P: a file a host process just made has its record
// (and can be tagged and found by name), one it renamed is at its new name
// only, one it removed is gone, with no wait between the change and the
// request.
func TestAnswersSeeHostChangesAtOnce(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	if err := os.MkdirAll(filepath.Join(data, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	d := semfstest.Start(t, semfstest.Options{Data: data, ModelDir: "off"})
	ctx := context.Background()
	c := d.Client
	missing := func(p, after string) {
		t.Helper()
		rec, err := c.File(ctx, p)
		var ae *client.APIError
		if !errors.As(err, &ae) || ae.Status != 404 {
			t.Fatalf("after %s: the record of %s: %+v, %v; want 404", after, p, rec, err)
		}
	}
	for i := range 40 {
		name := fmt.Sprintf("wombat%d", i)
		p := "d/" + name + ".txt"
		if err := os.WriteFile(filepath.Join(data, p), []byte("burrow\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if rec, err := c.File(ctx, p); err != nil || rec.Path != p {
			t.Fatalf("round %d, a host process made %s: its record %+v, %v", i, p, rec, err)
		}
		res, err := c.Query(ctx, client.QueryRequest{Text: name, Rank: client.RankSeed})
		if err != nil || len(res) == 0 || res[0].Path != p {
			t.Fatalf("round %d: query %q just after the host made %s: %+v, %v", i, name, p, res, err)
		}
		to := "d/" + name + "-moved.txt"
		if err := os.Rename(filepath.Join(data, p), filepath.Join(data, to)); err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			if _, err := c.Tag(ctx, client.TagRequest{Path: to, Task: "moved by the host"}); err != nil {
				t.Fatalf("round %d: tag %s just after the host renamed %s to it: %v", i, to, p, err)
			}
		} else if rec, err := c.File(ctx, to); err != nil || rec.Path != to {
			t.Fatalf("round %d: the record of %s just after the host renamed %s to it: %+v, %v", i, to, p, rec, err)
		}
		missing(p, "the host renamed it")
		if err := os.Remove(filepath.Join(data, to)); err != nil {
			t.Fatal(err)
		}
		missing(to, "the host removed it")
	}
}

// TestCreateInSemfsWhileHostChangesPend: a create in the .semfs tree, whose
// answer waits for the index to catch up with every change before it (the
// host's included, which the watcher may have to hand over first), is
// answered while host changes are pending: the wait is made before the core
// holds its namespace lock, which the watcher's hand-over takes (it was made
// under it, and such a create hung). Over 9P, whose Tlcreate always reaches
// the core's Create (an NFS client looks the name up first, and every name
// under query/ exists).
func TestCreateInSemfsWhileHostChangesPend(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	if err := os.MkdirAll(data, 0o755); err != nil {
		t.Fatal(err)
	}
	d := semfstest.Start(t, semfstest.Options{Data: data, ModelDir: "off"})
	root9 := d.Attach9P(t, "@notes", 0)
	_, q9, err := root9.Walk([]string{".semfs", "query"})
	if err != nil {
		t.Fatal(err)
	}
	within := func(what string, fn func() error) error {
		t.Helper()
		done := make(chan error, 1)
		go func() { done <- fn() }()
		select {
		case err := <-done:
			return err
		case <-time.After(20 * time.Second): // a failure bound
			t.Fatalf("%s: no answer within 20 s", what)
			return nil
		}
	}
	for i := range 20 {
		if err := os.WriteFile(filepath.Join(data, fmt.Sprintf("host%d.txt", i)), []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("budget %d", i)
		err := within("9P create in .semfs/query", func() error {
			f, _, _, err := q9.Create(name, p9.ReadWrite, 0o644, p9.NoUID, p9.NoGID)
			if err == nil {
				f.Close()
			}
			return err
		})
		if err == nil {
			t.Fatalf("round %d: 9P create of .semfs/query/%s succeeded; every name there is a query directory", i, name)
		}
	}
}
