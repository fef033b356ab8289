package ninep_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/hugelgupf/p9/linux"
	"github.com/hugelgupf/p9/p9"
)

// TestFidFollowsItsFile: connection A walks d/f; then d is renamed away and a
// new d/f made, by a host process (the backing directory is shared) or by
// another 9P connection B. A's fid must never answer with the other file's
// data or attributes: after the host's rename its Tgetattr, Tlopen, Tsetattr,
// Treadlink and Tread of a fresh open answer ESTALE; after B's rename (which
// p9 tells every fid of the server about) it keeps following its own file; a
// fid A opened before either keeps reading its own file, as a local open file
// does. Both with the shim's fast path and with p9 answering everything.
func TestFidFollowsItsFile(t *testing.T) {
	for _, tc := range []struct {
		name   string
		noFast bool
	}{{"fast path", false}, {"p9 only", true}} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			addr := e.tcp
			if tc.noFast {
				_, addr = p9Only(t, e)
			}
			host := func(t *testing.T, dir string) {
				t.Helper()
				if err := os.Rename(filepath.Join(e.export, dir), filepath.Join(e.export, dir+"-old")); err != nil {
					t.Fatal(err)
				}
				if err := os.Mkdir(filepath.Join(e.export, dir), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(e.export, dir, "f"), []byte("THE OTHER FILE"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			for _, dir := range []string{"d", "e"} {
				if err := os.Mkdir(filepath.Join(e.export, dir), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(e.export, dir, "f"), []byte("own file"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			_, a := dial(t, "tcp", addr, "/", 0, 64<<10)
			_, b := dial(t, "tcp", addr, "/", 0, 64<<10)

			// Replaced by a host process: ESTALE.
			walked := walk(t, a, "d", "f")
			dirFid := walk(t, a, "d")
			clone := walk(t, walked)
			opened := walk(t, a, "d", "f")
			if _, _, err := opened.Open(p9.ReadOnly); err != nil {
				t.Fatal(err)
			}
			_, _, before, err := walked.GetAttr(p9.AttrMaskAll)
			if err != nil {
				t.Fatal(err)
			}
			host(t, "d")
			stale := func(what string, err error) {
				t.Helper()
				if !errors.Is(err, linux.ESTALE) {
					t.Errorf("%s of a fid whose file was replaced: %v, want ESTALE", what, err)
				}
			}
			_, _, _, err = walked.GetAttr(p9.AttrMaskAll)
			stale("Tgetattr", err)
			_, _, _, err = clone.GetAttr(p9.AttrMaskAll)
			stale("Tgetattr of a clone", err)
			_, _, err = walked.Open(p9.ReadOnly)
			stale("Tlopen", err)
			stale("Tsetattr", walked.SetAttr(p9.SetAttrMask{Permissions: true}, p9.SetAttr{Permissions: 0o600}))
			_, _, err = dirFid.Walk([]string{"f"})
			stale("Twalk from a directory fid", err)
			c2 := walk(t, clone)
			_, _, err = c2.Open(p9.ReadWrite)
			stale("Tlopen of a clone for writing", err)
			buf := make([]byte, 64)
			n, err := opened.ReadAt(buf, 0)
			if err != nil || string(buf[:n]) != "own file" {
				t.Errorf("Tread of a fid opened before: %q, %v", buf[:n], err)
			}
			_, _, got, err := opened.GetAttr(p9.AttrMaskAll)
			if err != nil || got.Size != before.Size {
				t.Errorf("Tgetattr of a fid opened before: %+v, %v", got, err)
			}
			if b, err := os.ReadFile(filepath.Join(e.export, "d", "f")); err != nil || string(b) != "THE OTHER FILE" {
				t.Errorf("the other file changed: %q, %v", b, err)
			}
			if st, err := os.Stat(filepath.Join(e.export, "d-old", "f")); err != nil || st.Mode().Perm() != 0o644 {
				t.Errorf("the fid's own file: %v, %v", st, err)
			}

			// Renamed by another 9P connection: p9 moves the fid along.
			walked = walk(t, a, "e", "f")
			if err := b.RenameAt("e", b, "e-moved"); err != nil {
				t.Fatal(err)
			}
			if _, err := b.Mkdir("e", 0o755, p9.NoUID, p9.NoGID); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(e.export, "e", "f"), []byte("THE OTHER FILE"), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, _, err := walked.Open(p9.ReadOnly); err != nil && !errors.Is(err, linux.ESTALE) {
				t.Fatalf("Tlopen after another connection's rename: %v", err)
			} else if err == nil {
				n, err := walked.ReadAt(buf, 0)
				if string(buf[:n]) != "own file" {
					t.Errorf("Tread after another connection's rename: %q, %v", buf[:n], err)
				}
			}
		})
	}
}
