package integration_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

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
