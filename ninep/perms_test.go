package ninep_test

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/hugelgupf/p9/linux"
	"github.com/hugelgupf/p9/p9"
)

// permsTree lays out root-owned files a caller attached as uid 1000 must not
// reach, and that caller's own file:
//
//	secret     root 0600 "root only"
//	private/   root 0700, holding f (root 0644)
//	pub/       root 0755, holding f (root 0644 "public")
//	mine       1000:1000 0600 "mine"
func permsTree(t testing.TB, dir string) {
	t.Helper()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	file := func(p, data string, mode os.FileMode, uid int) {
		t.Helper()
		full := filepath.Join(dir, p)
		must(os.WriteFile(full, []byte(data), mode))
		must(os.Chmod(full, mode))
		must(os.Lchown(full, uid, uid))
	}
	must(os.Mkdir(filepath.Join(dir, "private"), 0o700))
	must(os.Mkdir(filepath.Join(dir, "pub"), 0o755))
	file("secret", "root only", 0o600, 0)
	file("private/f", "hidden", 0o644, 0)
	file("pub/f", "public", 0o644, 0)
	file("mine", "mine", 0o600, 1000)
}

// TestRootModeChecksCallers: a daemon running as root serves a caller attached
// with n_uname 1000 what the kernel would let uid 1000 do: opens, walks into a
// 0700 directory, creates, chown, chmod, size, times, rename and remove are
// refused on root's files, through the shim's own answers and through p9's
// alike; the caller's own file stays its own; an open fid keeps the access its
// open was granted; root may do everything. Nothing refused happens.
func TestRootModeChecksCallers(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("root mode needs a daemon running as root")
	}
	for _, fast := range []bool{true, false} {
		t.Run(map[bool]string{true: "shim", false: "p9"}[fast], func(t *testing.T) {
			e := newEnv(t)
			permsTree(t, e.export)
			addr := e.tcp
			if !fast {
				_, addr = p9Only(t, e)
			}
			_, u := dial(t, "tcp", addr, "/", 1000, 64<<10)

			open := func(names ...string) error {
				_, f, err := u.Walk(names)
				if err != nil {
					return err
				}
				defer f.Close()
				_, _, err = f.Open(p9.ReadOnly)
				return err
			}
			wantErrno(t, "open root's 0600 file", open("secret"), linux.EACCES)
			_, _, err := u.Walk([]string{"private", "f"})
			wantErrno(t, "walk into root's 0700 directory", err, linux.EACCES)
			wantErrno(t, "list root's 0700 directory", open("private"), linux.EACCES)

			pubf := walk(t, u, "pub", "f")
			if _, _, err := walk(t, pubf).Open(p9.ReadWrite); err == nil {
				t.Error("open root's 0644 file for writing: allowed")
			}
			pub := walk(t, u, "pub")
			if _, _, _, err := walk(t, pub).Create("x", p9.ReadWrite, 0o644, p9.NoUID, p9.NoGID); err == nil {
				t.Error("create in root's 0755 directory: allowed")
			}
			if _, err := walk(t, pub).Mkdir("d", 0o755, p9.NoUID, p9.NoGID); err == nil {
				t.Error("mkdir in root's 0755 directory: allowed")
			}
			for what, sa := range map[string]struct {
				valid p9.SetAttrMask
				attr  p9.SetAttr
			}{
				"chown root's file to the caller": {p9.SetAttrMask{UID: true}, p9.SetAttr{UID: 1000}},
				"chmod root's file":               {p9.SetAttrMask{Permissions: true}, p9.SetAttr{Permissions: 0o666}},
				"truncate root's file":            {p9.SetAttrMask{Size: true}, p9.SetAttr{Size: 0}},
				"touch root's file":               {p9.SetAttrMask{ATime: true, MTime: true}, p9.SetAttr{}},
			} {
				if err := pubf.SetAttr(sa.valid, sa.attr); err == nil {
					t.Errorf("%s: allowed", what)
				}
			}
			mine := walk(t, u, "mine")
			if err := mine.SetAttr(p9.SetAttrMask{UID: true}, p9.SetAttr{UID: 0}); err == nil {
				t.Error("chown own file to root: allowed")
			}
			if err := pub.RenameAt("f", pub, "g"); err == nil {
				t.Error("rename in root's 0755 directory: allowed")
			}
			if err := pub.UnlinkAt("f", 0); err == nil {
				t.Error("unlink in root's 0755 directory: allowed")
			}
			for p, mode := range map[string]uint32{"secret": 0o600, "pub/f": 0o644, "private/f": 0o644, "mine": 0o600} {
				var st syscall.Stat_t
				if err := syscall.Lstat(filepath.Join(e.export, p), &st); err != nil || st.Mode&0o7777 != mode ||
					(p == "mine") != (st.Uid == 1000) {
					t.Errorf("%s changed: uid %d mode %o (%v)", p, st.Uid, st.Mode&0o7777, err)
				}
			}
			for _, p := range []string{"pub/g", "pub/x", "pub/d"} {
				if _, err := os.Lstat(filepath.Join(e.export, p)); !os.IsNotExist(err) {
					t.Errorf("%s exists after a refused call: %v", p, err)
				}
			}
			if b, _ := os.ReadFile(filepath.Join(e.export, "pub", "f")); string(b) != "public" {
				t.Errorf("pub/f now holds %q", b)
			}

			// The caller's own file; an open fid keeps what its open was granted.
			if got := string(readAll(t, u, "mine")); got != "mine" {
				t.Errorf("read own file: %q", got)
			}
			of := walk(t, u, "mine")
			if _, _, err := of.Open(p9.ReadWrite); err != nil {
				t.Fatalf("open own file: %v", err)
			}
			if err := os.Chmod(filepath.Join(e.export, "mine"), 0); err != nil {
				t.Fatal(err)
			}
			if _, err := of.WriteAt([]byte("MINE"), 0); err != nil {
				t.Errorf("write through a fid opened before a chmod: %v", err)
			}
			of.Close()
			wantErrno(t, "open own file after chmod 0", open("mine"), linux.EACCES)
			create(t, u, "new", []byte("x"))
			var st syscall.Stat_t
			if err := syscall.Lstat(filepath.Join(e.export, "new"), &st); err != nil || st.Uid != 1000 {
				t.Errorf("new file owned by %d (%v), want 1000", st.Uid, err)
			}

			// Root may do everything.
			_, r := dial(t, "tcp", addr, "/", 0, 64<<10)
			if got := string(readAll(t, r, "secret")); got != "root only" {
				t.Errorf("root: read secret: %q", got)
			}
			if got := string(readAll(t, r, "private", "f")); got != "hidden" {
				t.Errorf("root: read private/f: %q", got)
			}
			create(t, walk(t, r, "pub"), "x", []byte("x"))
			if err := walk(t, r, "mine").SetAttr(p9.SetAttrMask{UID: true}, p9.SetAttr{UID: 0}); err != nil {
				t.Errorf("root: chown to root: %v", err)
			}
			if err := walk(t, r, "pub").UnlinkAt("f", 0); err != nil {
				t.Errorf("root: unlink pub/f: %v", err)
			}
		})
	}
}

// BenchmarkCallerChecks: what root mode's checks cost per request: the shim's
// hottest requests (Tgetattr; Twalk+Tgetattr+Tclunk as `ls -l` sends them) and
// a Twrite of 64 KiB, attached as root (not checked) and as uid 1000 (every
// core call switches the thread's credentials).
func BenchmarkCallerChecks(b *testing.B) {
	for _, uid := range []uint32{0, 1000} {
		b.Run(fmt.Sprintf("uid%d", uid), func(b *testing.B) {
			e := newEnv(b)
			_, root := dial(b, "tcp", e.tcp, "/", uid, 64<<10+24)
			c := walk(b, root)
			if _, err := c.Mkdir("c", 0o755, p9.NoUID, p9.NoGID); err != nil {
				b.Fatal(err)
			}
			c = walk(b, root, "c")
			for i := range 100 {
				create(b, c, fmt.Sprintf("f%05d", i), make([]byte, 4096))
			}
			b.Run("Getattr", func(b *testing.B) {
				f := walk(b, c, "f00000")
				defer f.Close()
				for b.Loop() {
					if _, _, _, err := f.GetAttr(p9.AttrMaskAll); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("WalkGetattrClunk", func(b *testing.B) {
				for i := 0; b.Loop(); i++ {
					_, f, err := c.Walk([]string{fmt.Sprintf("f%05d", i%100)})
					if err != nil {
						b.Fatal(err)
					}
					if _, _, _, err := f.GetAttr(p9.AttrMaskAll); err != nil {
						b.Fatal(err)
					}
					f.Close()
				}
			})
			b.Run("Write64K", func(b *testing.B) {
				f, _, _, err := walk(b, c).Create("big", p9.ReadWrite, 0o644, p9.NoUID, p9.NoGID)
				if err != nil {
					b.Fatal(err)
				}
				defer f.Close()
				buf := make([]byte, 64<<10)
				b.SetBytes(int64(len(buf)))
				for i := 0; b.Loop(); i++ {
					if _, err := f.WriteAt(buf, int64(i%256)*int64(len(buf))); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}
