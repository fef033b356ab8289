package server_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/semfs/semfs/server"
)

// TestInlineCallsMatchTheirTwins: LstatInline and File.StatInline, which make
// their system calls raw, answer exactly what Lstat and File.Stat do, and keep
// the same containment: symlinks on the way are refused, never followed.
func TestInlineCallsMatchTheirTwins(t *testing.T) {
	f := newFixture(t)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(f.dir, "a"), []byte("data"), 0o640))
	must(os.MkdirAll(filepath.Join(f.dir, "d", "e"), 0o755))
	must(os.WriteFile(filepath.Join(f.dir, "d", "e", "b"), []byte("deeper"), 0o600))
	must(os.Symlink(f.outside, filepath.Join(f.dir, "out")))
	must(os.Symlink("d", filepath.Join(f.dir, "sd")))
	must(os.Symlink("..", filepath.Join(f.dir, "d", "up")))
	ctx := as("t")
	for _, p := range []string{"", "a", "d", "d/e", "d/e/b", "out", "sd", "d/up",
		"out/secret", "sd/e", "sd/e/b", "d/up/a", "missing", "d/missing", "a/x"} {
		want, werr := f.fs.Lstat(ctx, p)
		got, gerr := f.fs.LstatInline(ctx, p)
		if (werr == nil) != (gerr == nil) {
			t.Errorf("%q: LstatInline error %v, Lstat %v", p, gerr, werr)
			continue
		}
		if werr != nil {
			if server.KindOf(werr) != server.KindOf(gerr) || werr.Error() != gerr.Error() {
				t.Errorf("%q: LstatInline says %q, Lstat %q", p, gerr, werr)
			}
			continue
		}
		if got != want {
			t.Errorf("%q: LstatInline %+v, Lstat %+v", p, got, want)
		}
	}
	fl, err := f.fs.Open(ctx, "d/e/b", os.O_RDONLY)
	must(err)
	defer fl.Close()
	want, werr := fl.Stat()
	got, gerr := fl.StatInline()
	if werr != nil || gerr != nil || got != want {
		t.Fatalf("StatInline %+v %v, Stat %+v %v", got, gerr, want, werr)
	}
	f.checkOutside(t)
}
