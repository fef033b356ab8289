package ninep_test

import (
	"testing"

	"github.com/hugelgupf/p9/p9"
	"github.com/semfs/semfs/server"
)

// TestRenameWhileOpenForWrite: a file renamed while a client holds it open for
// writing gets its updatedAt under the new name when the fid is clunked.
//
// The core moves open server.File values on FS.Rename, so later writes and the
// clunk's flush report the new name.
func TestRenameWhileOpenForWrite(t *testing.T) {
	e := newEnv(t)
	_, root := dial(t, "tcp", e.tcp, "@notes", 0, 64<<10)
	d := walk(t, root)
	f, _, _, err := d.Create("draft", p9.WriteOnly, 0o644, p9.NoUID, p9.NoGID)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteAt([]byte("v1"), 0)
	if err := root.RenameAt("draft", root, "final"); err != nil {
		t.Fatal(err)
	}
	f.WriteAt([]byte("v2"), 2)
	f.Close()
	e.rec.find(t, server.ChangeWrite, "final")
	for _, c := range e.rec.all() {
		if c.Op == server.ChangeWrite && c.Path == "draft" {
			t.Errorf("ChangeWrite for the old name after the rename: %+v", c)
		}
	}
}
