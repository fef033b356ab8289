package integration_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/hugelgupf/p9/p9"
	"github.com/semfs/semfs/integration/semfstest"
	nfsc "github.com/willscott/go-nfs-client/nfs"
)

// The host changes the feed once told wrong, each made by the coreutils a
// user would run beside a client's own change: a directory's chmod; a chmod
// right after a client made the file (in the watcher's burst of that
// create); touch of an existing file, the same setattr whichever door it
// came through (NFS's SETATTR of times, 9P's Tsetattr, the host's touch);
// and a file a client wrote, then a host truncated (a truncate, not a
// write, though the index had no size of the client's write).
func TestChangesHostCasesOnceEach(t *testing.T) {
	d := semfstest.Start(t, semfstest.Options{ModelDir: "off", Args: []string{"--write-quiet", "50ms"}})
	f := newFeedReader(t, d)
	sh := func(script string) {
		t.Helper()
		cmd := exec.Command("sh", "-ec", script)
		cmd.Dir = d.Data
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", script, err, out)
		}
	}
	v := d.MountNFS(t, "/@editor", 0)
	root9 := d.Attach9P(t, "@notes", 0)

	// A directory's mode, changed by a host process: setattr, as a
	// client's chmod of a directory is.
	sh("mkdir hc")
	f.expect("mkdir host hc")
	sh("chmod 700 hc")
	if got := f.expect("setattr host hc"); got[0].Type != "dir" {
		t.Errorf("chmod of a directory: %+v, want type dir", got[0])
	}
	if err := v.Setattr("hc", nfsc.Sattr3{Mode: nfsc.SetMode{SetIt: true, Mode: 0o755}}); err != nil {
		t.Fatal(err)
	}
	f.expect("setattr editor hc")

	// A client's create and a host's chmod of it in one burst of the
	// watcher: both, in that order. Over NFS, which has no close: the
	// host's IN_ATTRIB comes right after the create's own (its durable
	// record), and the kernel merges the two.
	if _, err := v.Create("hc/made.txt", 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(d.Data, "hc", "made.txt"), 0o600); err != nil {
		t.Fatal(err)
	}
	f.expect("create editor hc/made.txt", "setattr host hc/made.txt")

	// touch of an existing file: a setattr through every door, no write.
	sh("printf abc > hc/t.txt")
	f.expect("create host hc/t.txt")
	sh("touch hc/t.txt")
	if got := f.expect("setattr host hc/t.txt"); got[0].Size != 3 {
		t.Errorf("host touch: %+v, want size 3", got[0])
	}
	if err := v.Setattr("hc/t.txt", nfsc.Sattr3{Atime: nfsc.SetTime{SetIt: nfsc.SetToServerTime},
		Mtime: nfsc.SetTime{SetIt: nfsc.SetToServerTime}}); err != nil {
		t.Fatal(err)
	}
	f.expect("setattr editor hc/t.txt")
	_, t9, err := root9.Walk([]string{"hc", "t.txt"})
	if err != nil {
		t.Fatal(err)
	}
	if err := t9.SetAttr(p9.SetAttrMask{ATime: true, MTime: true}, p9.SetAttr{}); err != nil {
		t.Fatal(err)
	}
	t9.Close()
	f.expect("setattr notes hc/t.txt")
	// The host's next change of it is its own, not the client's touch read back.
	sh("echo more >> hc/t.txt")
	f.expect("write host hc/t.txt")

	// Written through NFS, then truncated by a host process.
	w, err := v.OpenFile("hc/w.txt", 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("written through nfs")); err != nil {
		t.Fatal(err)
	}
	w.Close()
	f.expect("create editor hc/w.txt", "write editor hc/w.txt")
	sh("truncate -s 4 hc/w.txt")
	if got := f.expect("truncate host hc/w.txt"); got[0].Size != 4 {
		t.Errorf("host truncate: %+v, want size 4", got[0])
	}
}
