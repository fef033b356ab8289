package ninep_test

import (
	"testing"

	"github.com/hugelgupf/p9/linux"
	"github.com/hugelgupf/p9/p9"
)

// TestAnswersAsLinux: the requests p9's handlers would refuse on their own
// (EINVAL, without asking a file of ours) or take for a no-op get the answers
// Linux's system calls and diod give (the differential suite found each
// against diod): ENOTDIR for a walk through a file and for making, linking,
// renaming or removing in a file; ENOENT for a rename of a missing
// name onto itself and for a symlink with an empty target.
func TestAnswersAsLinux(t *testing.T) {
	e := newEnv(t)
	_, root := dial(t, "tcp", e.tcp, "/", 0, 64<<10)
	if _, err := root.Mkdir("d", 0o755, p9.NoUID, p9.NoGID); err != nil {
		t.Fatal(err)
	}
	d := walk(t, root, "d")
	f, _, _, err := walk(t, d).Create("file", p9.ReadWrite, 0o644, p9.NoUID, p9.NoGID)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()

	_, _, err = root.Walk([]string{"d", "file", "x"})
	wantErrno(t, "walk through a file", err, linux.ENOTDIR)
	_, _, err = walk(t, d, "file").Walk([]string{"x"})
	wantErrno(t, "walk from a file", err, linux.ENOTDIR)

	file := walk(t, d, "file")
	_, _, _, err = walk(t, d, "file").Create("x", p9.ReadWrite, 0o644, p9.NoUID, p9.NoGID)
	wantErrno(t, "create in a file", err, linux.ENOTDIR)
	_, err = file.Mkdir("x", 0o755, p9.NoUID, p9.NoGID)
	wantErrno(t, "mkdir in a file", err, linux.ENOTDIR)
	_, err = file.Symlink("t", "x", p9.NoUID, p9.NoGID)
	wantErrno(t, "symlink in a file", err, linux.ENOTDIR)
	_, err = file.Mknod("x", p9.ModeNamedPipe|0o644, 0, 0, p9.NoUID, p9.NoGID)
	wantErrno(t, "mknod in a file", err, linux.ENOTDIR)
	wantErrno(t, "link in a file", file.Link(walk(t, d, "file"), "x"), linux.ENOTDIR)
	wantErrno(t, "unlink in a file", file.UnlinkAt("x", 0), linux.ENOTDIR)
	wantErrno(t, "rename into a file", d.RenameAt("file", file, "x"), linux.ENOTDIR)
	wantErrno(t, "rename out of a file", file.RenameAt("x", d, "y"), linux.ENOTDIR)

	wantErrno(t, "rename of a missing name onto itself", d.RenameAt("missing", d, "missing"), linux.ENOENT)
	if err := d.RenameAt("file", walk(t, root, "d"), "file"); err != nil {
		t.Errorf("rename of a file onto itself: %v, want OK (rename(2) does nothing)", err)
	}
	_, err = d.Symlink("", "empty", p9.NoUID, p9.NoGID)
	wantErrno(t, "symlink with an empty target", err, linux.ENOENT)
	_, err = walk(t, d, "file").Symlink("", "empty", p9.NoUID, p9.NoGID)
	wantErrno(t, "symlink with an empty target in a file", err, linux.ENOENT) // the target first, as symlink(2)
	if _, _, err := root.Walk([]string{"d", "empty"}); err == nil {
		t.Error("a refused symlink was made")
	}
}
