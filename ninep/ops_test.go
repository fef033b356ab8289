package ninep_test

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/hugelgupf/p9/linux"
	"github.com/hugelgupf/p9/p9"
	"github.com/semfs/semfs/server"
)

func wantErrno(t *testing.T, what string, err error, want linux.Errno) {
	t.Helper()
	var got linux.Errno
	if !errors.As(err, &got) || got != want {
		t.Fatalf("%s: got %v, want %v (%d)", what, err, want, want)
	}
}

// TestOperations drives every operation a Linux v9fs client uses, over TCP and
// over a Unix socket, through p9's client speaking plain 9P2000.L.
func TestOperations(t *testing.T) {
	e := newEnv(t)
	for _, tr := range []struct{ network, addr string }{{"tcp", e.tcp}, {"unix", e.unix}} {
		t.Run(tr.network, func(t *testing.T) {
			_, root := dial(t, tr.network, tr.addr, "/", 0, 64<<10)
			base := tr.network
			if _, err := root.Mkdir(base, 0o755, p9.NoUID, p9.NoGID); err != nil {
				t.Fatalf("mkdir: %v", err)
			}
			host := filepath.Join(e.export, base)
			dir := walk(t, root, base)

			t.Run("create-write-read", func(t *testing.T) {
				d := walk(t, dir)
				f, qid, _, err := d.Create("a.txt", p9.ReadWrite, 0o640, p9.NoUID, p9.NoGID)
				if err != nil {
					t.Fatal(err)
				}
				if qid.Type != p9.TypeRegular {
					t.Fatalf("qid type %v", qid.Type)
				}
				if n, err := f.WriteAt([]byte("hello, world"), 0); err != nil || n != 12 {
					t.Fatalf("write: %d %v", n, err)
				}
				if n, err := f.WriteAt([]byte("W"), 7); err != nil || n != 1 {
					t.Fatalf("write at 7: %d %v", n, err)
				}
				buf := make([]byte, 64)
				n, err := f.ReadAt(buf, 0)
				if err != nil && n == 0 {
					t.Fatal(err)
				}
				if got := string(buf[:n]); got != "hello, World" {
					t.Fatalf("read back %q", got)
				}
				if err := f.FSync(); err != nil {
					t.Fatalf("fsync: %v", err)
				}
				if err := f.Close(); err != nil {
					t.Fatal(err)
				}
				b, _ := os.ReadFile(filepath.Join(host, "a.txt"))
				if string(b) != "hello, World" {
					t.Fatalf("backing file %q", b)
				}
				// Exclusive create of an existing name fails; plain create opens it.
				d = walk(t, dir)
				if _, _, _, err := d.Create("a.txt", p9.ReadWrite|0o200, 0o644, p9.NoUID, p9.NoGID); err == nil {
					t.Fatal("O_EXCL create of an existing file succeeded")
				} else {
					wantErrno(t, "excl create", err, linux.EEXIST)
				}
				// Tlopen with O_TRUNC empties it.
				f = walk(t, dir, "a.txt")
				if _, _, err := f.Open(p9.WriteOnly | 0o1000); err != nil {
					t.Fatalf("open O_TRUNC: %v", err)
				}
				f.Close()
				if st, _ := os.Stat(filepath.Join(host, "a.txt")); st.Size() != 0 {
					t.Fatalf("O_TRUNC left %d bytes", st.Size())
				}
				// A read-only fid cannot write.
				f = walk(t, dir, "a.txt")
				f.Open(p9.ReadOnly)
				if _, err := f.WriteAt([]byte("x"), 0); err == nil {
					t.Fatal("write on a read-only fid succeeded")
				}
				f.Close()
			})

			t.Run("getattr-setattr", func(t *testing.T) {
				create(t, dir, "s.txt", []byte("0123456789"))
				f := walk(t, dir, "s.txt")
				defer f.Close()
				qid, valid, a, err := f.GetAttr(p9.AttrMaskAll)
				if err != nil {
					t.Fatal(err)
				}
				var st syscall.Stat_t
				if err := syscall.Lstat(filepath.Join(host, "s.txt"), &st); err != nil {
					t.Fatal(err)
				}
				if !valid.Mode || !valid.Size || !valid.INo || qid.Path != st.Ino || a.Size != 10 ||
					a.Mode != p9.ModeRegular|0o644 || uint32(a.UID) != st.Uid || a.NLink != 1 {
					t.Fatalf("getattr: qid %v valid %v attr %v (stat ino %d uid %d)", qid, valid, a, st.Ino, st.Uid)
				}
				// mode
				if err := f.SetAttr(p9.SetAttrMask{Permissions: true}, p9.SetAttr{Permissions: 0o600}); err != nil {
					t.Fatal(err)
				}
				// size (path-based: the fid is not open)
				if err := f.SetAttr(p9.SetAttrMask{Size: true}, p9.SetAttr{Size: 4}); err != nil {
					t.Fatal(err)
				}
				// explicit atime and mtime
				at, mt := time.Unix(1_000_000_000, 5), time.Unix(1_200_000_000, 7)
				if err := f.SetAttr(p9.SetAttrMask{ATime: true, MTime: true, ATimeNotSystemTime: true, MTimeNotSystemTime: true},
					p9.SetAttr{ATimeSeconds: uint64(at.Unix()), ATimeNanoSeconds: 5, MTimeSeconds: uint64(mt.Unix()), MTimeNanoSeconds: 7}); err != nil {
					t.Fatal(err)
				}
				fi, _ := os.Stat(filepath.Join(host, "s.txt"))
				if fi.Mode().Perm() != 0o600 || fi.Size() != 4 || !fi.ModTime().Equal(mt) {
					t.Fatalf("after setattr: %v %d %v", fi.Mode(), fi.Size(), fi.ModTime())
				}
				syscall.Lstat(filepath.Join(host, "s.txt"), &st)
				if st.Atim.Sec != at.Unix() || st.Atim.Nsec != 5 {
					t.Fatalf("atime %v", st.Atim)
				}
				// atime/mtime "now"
				before := time.Now().Add(-time.Second)
				if err := f.SetAttr(p9.SetAttrMask{ATime: true, MTime: true}, p9.SetAttr{}); err != nil {
					t.Fatal(err)
				}
				_, _, a, _ = f.GetAttr(p9.AttrMaskAll)
				if time.Unix(int64(a.MTimeSeconds), 0).Before(before) || time.Unix(int64(a.ATimeSeconds), 0).Before(before) {
					t.Fatalf("times not set to now: %v", a)
				}
				// uid/gid: the server may chown to its own ids at least.
				uid, gid := uint32(os.Getuid()), uint32(os.Getgid())
				if err := f.SetAttr(p9.SetAttrMask{UID: true, GID: true}, p9.SetAttr{UID: p9.UID(uid), GID: p9.GID(gid)}); err != nil {
					t.Fatalf("chown to own ids: %v", err)
				}
				if os.Getuid() == 0 {
					if err := f.SetAttr(p9.SetAttrMask{UID: true, GID: true}, p9.SetAttr{UID: 1234, GID: 5678}); err != nil {
						t.Fatal(err)
					}
					syscall.Lstat(filepath.Join(host, "s.txt"), &st)
					if st.Uid != 1234 || st.Gid != 5678 {
						t.Fatalf("chown: %d:%d", st.Uid, st.Gid)
					}
				}
				// ftruncate through an open fid
				g := walk(t, dir, "s.txt")
				g.Open(p9.ReadWrite)
				if err := g.SetAttr(p9.SetAttrMask{Size: true}, p9.SetAttr{Size: 1}); err != nil {
					t.Fatal(err)
				}
				g.Close()
				if fi, _ := os.Stat(filepath.Join(host, "s.txt")); fi.Size() != 1 {
					t.Fatalf("ftruncate: size %d", fi.Size())
				}
				// a directory has no size
				dd := walk(t, dir)
				wantErrno(t, "truncate dir", dd.SetAttr(p9.SetAttrMask{Size: true}, p9.SetAttr{}), linux.EISDIR)
				dd.Close()
			})

			t.Run("mkdir-symlink-link-readlink", func(t *testing.T) {
				if _, err := dir.Mkdir("sub", 0o750, p9.NoUID, p9.NoGID); err != nil {
					t.Fatal(err)
				}
				wantErrnoMk := func() {
					_, err := dir.Mkdir("sub", 0o750, p9.NoUID, p9.NoGID)
					wantErrno(t, "mkdir twice", err, linux.EEXIST)
				}
				wantErrnoMk()
				if fi, err := os.Stat(filepath.Join(host, "sub")); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o750 {
					t.Fatalf("mkdir: %v %v", fi, err)
				}
				if _, err := dir.Symlink("sub/target", "ln", p9.NoUID, p9.NoGID); err != nil {
					t.Fatal(err)
				}
				l := walk(t, dir, "ln")
				if tg, err := l.Readlink(); err != nil || tg != "sub/target" {
					t.Fatalf("readlink: %q %v", tg, err)
				}
				if _, _, a, _ := l.GetAttr(p9.AttrMaskAll); !a.Mode.IsSymlink() {
					t.Fatalf("symlink mode %v", a.Mode)
				}
				l.Close()
				create(t, dir, "orig", []byte("data"))
				o := walk(t, dir, "orig")
				if err := dir.Link(o, "hard"); err != nil {
					t.Fatal(err)
				}
				o.Close()
				var s1, s2 syscall.Stat_t
				syscall.Lstat(filepath.Join(host, "orig"), &s1)
				syscall.Lstat(filepath.Join(host, "hard"), &s2)
				if s1.Ino != s2.Ino || s1.Nlink != 2 {
					t.Fatalf("link: ino %d/%d nlink %d", s1.Ino, s2.Ino, s1.Nlink)
				}
				sd := walk(t, dir, "sub")
				// link(2) of a directory is EPERM (diod answers so; the core's
				// ISDIR is NFS's answer).
				wantErrno(t, "link a directory", dir.Link(sd, "dirlink"), linux.EPERM)
				sd.Close()
				// read(2) of an open directory is EISDIR (diod answers so).
				sd = walk(t, dir, "sub")
				if _, _, err := sd.Open(p9.ReadOnly); err != nil {
					t.Fatalf("open sub: %v", err)
				}
				_, err := sd.ReadAt(make([]byte, 16), 0)
				wantErrno(t, "read an open directory", err, linux.EISDIR)
				sd.Close()
			})

			t.Run("mknod", func(t *testing.T) {
				if _, err := dir.Mknod("fifo", p9.ModeNamedPipe|0o644, 0, 0, p9.NoUID, p9.NoGID); err != nil {
					t.Fatal(err)
				}
				if fi, err := os.Lstat(filepath.Join(host, "fifo")); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
					t.Fatalf("fifo: %v %v", fi, err)
				}
				_, err := dir.Mknod("null", p9.ModeCharacterDevice|0o666, 1, 3, p9.NoUID, p9.NoGID)
				wantErrno(t, "mknod char device", err, linux.EPERM)
				if _, err := os.Lstat(filepath.Join(host, "null")); !os.IsNotExist(err) {
					t.Fatalf("refused mknod left something: %v", err)
				}
				// bind(2) through v9fs: a socket node is made.
				if _, err := dir.Mknod("sock", p9.ModeSocket|0o666, 0, 0, p9.NoUID, p9.NoGID); err != nil {
					t.Fatalf("mknod socket: %v", err)
				}
				if fi, err := os.Lstat(filepath.Join(host, "sock")); err != nil || fi.Mode().Type() != os.ModeSocket {
					t.Fatalf("socket: %v %v", fi, err)
				}
			})

			t.Run("rename", func(t *testing.T) {
				create(t, dir, "r1", []byte("one"))
				if err := dir.RenameAt("r1", dir, "r2"); err != nil {
					t.Fatal(err)
				}
				sub := walk(t, dir, "sub")
				if err := dir.RenameAt("r2", sub, "r3"); err != nil {
					t.Fatal(err)
				}
				if b, _ := os.ReadFile(filepath.Join(host, "sub", "r3")); string(b) != "one" {
					t.Fatalf("renameat across directories: %q", b)
				}
				// Trename (fid-based) on an open fid whose name then follows.
				f := walk(t, sub, "r3")
				if err := f.Rename(dir, "r4"); err != nil {
					t.Fatal(err)
				}
				if _, _, a, err := f.GetAttr(p9.AttrMaskAll); err != nil || a.Size != 3 {
					t.Fatalf("getattr after rename: %v %v", a, err)
				}
				f.Close()
				// A fid below a renamed directory follows it (p9 calls Renamed).
				if _, err := dir.Mkdir("mv", 0o755, p9.NoUID, p9.NoGID); err != nil {
					t.Fatal(err)
				}
				create(t, walk(t, dir, "mv"), "inner", []byte("inner data"))
				inner := walk(t, dir, "mv", "inner")
				if err := dir.RenameAt("mv", dir, "moved"); err != nil {
					t.Fatal(err)
				}
				if _, _, err := inner.Open(p9.ReadOnly); err != nil {
					t.Fatalf("open through a fid below a renamed directory: %v", err)
				}
				inner.Close()
				// Renaming a non-empty directory onto a non-empty directory fails.
				create(t, walk(t, dir, "sub"), "keep", nil)
				wantErrno(t, "rename onto non-empty dir", dir.RenameAt("moved", dir, "sub"), linux.ENOTEMPTY)
				sub.Close()
			})

			t.Run("unlink", func(t *testing.T) {
				create(t, dir, "gone", nil)
				if err := dir.UnlinkAt("gone", 0); err != nil {
					t.Fatal(err)
				}
				wantErrno(t, "unlink missing", dir.UnlinkAt("gone", 0), linux.ENOENT)
				if _, err := dir.Mkdir("emptydir", 0o755, p9.NoUID, p9.NoGID); err != nil {
					t.Fatal(err)
				}
				wantErrno(t, "unlink dir without AT_REMOVEDIR", dir.UnlinkAt("emptydir", 0), linux.EISDIR)
				if err := dir.UnlinkAt("emptydir", 0x200); err != nil {
					t.Fatal(err)
				}
				wantErrno(t, "rmdir non-empty", dir.UnlinkAt("sub", 0x200), linux.ENOTEMPTY)
				// Open-unlink-fstat: an open fid outlives its name.
				create(t, dir, "tmp", []byte("abc"))
				f := walk(t, dir, "tmp")
				f.Open(p9.ReadWrite)
				if err := dir.UnlinkAt("tmp", 0); err != nil {
					t.Fatal(err)
				}
				if _, _, a, err := f.GetAttr(p9.AttrMaskAll); err != nil || a.Size != 3 {
					t.Fatalf("fstat after unlink: %v %v", a, err)
				}
				f.Close()
			})

			t.Run("readdir", func(t *testing.T) {
				ents := readdir(t, dir, 8192)
				names := map[string]p9.Dirent{}
				for _, d := range ents {
					names[d.Name] = d
				}
				if ents[0].Name != "." || ents[1].Name != ".." {
					t.Fatalf("readdir starts with %q %q", ents[0].Name, ents[1].Name)
				}
				want, _ := os.ReadDir(host)
				if len(ents) != len(want)+2 {
					t.Fatalf("readdir: %d entries, want %d", len(ents), len(want)+2)
				}
				for _, w := range want {
					d, ok := names[w.Name()]
					if !ok {
						t.Fatalf("readdir misses %q", w.Name())
					}
					wt := map[bool]uint8{true: 4, false: 8}[w.IsDir()]
					if w.Type()&os.ModeSymlink != 0 {
						wt = 10
					} else if w.Type()&os.ModeNamedPipe != 0 {
						wt = 1
					} else if w.Type()&os.ModeSocket != 0 {
						wt = 12
					}
					if uint8(d.Type) != wt {
						t.Fatalf("%s: d_type %d, want %d", w.Name(), d.Type, wt)
					}
					wf := walk(t, dir, w.Name())
					if q, _, _, err := wf.GetAttr(p9.AttrMaskAll); err != nil || q != d.QID {
						t.Fatalf("%s: readdir qid %v, getattr qid %v (%v)", w.Name(), d.QID, q, err)
					}
					wf.Close()
				}
				// The root's ".." is the root.
				rents := readdir(t, root, 8192)
				if rents[0].QID.Path != rents[1].QID.Path {
					t.Fatalf("root . %v .. %v", rents[0].QID, rents[1].QID)
				}
			})

			t.Run("statfs", func(t *testing.T) {
				st, err := root.StatFS()
				if err != nil {
					t.Fatal(err)
				}
				var want syscall.Statfs_t
				syscall.Statfs(e.export, &want)
				if st.Type != 0x01021997 || st.Blocks != want.Blocks || st.BlockSize != uint32(want.Bsize) || st.NameLength != 255 {
					t.Fatalf("statfs %+v", st)
				}
			})

		})
	}
}

// TestCreatorOwnership: with a uid from the attach (access=user/client), new
// files, directories, symlinks and fifos belong to that uid, as with a server
// acting as each user; the gid the client asks for is given where that uid may
// have it, as chown(2) decides: uid 4321 (not in the user database, so in no
// group) keeps nobody's group, root gets the group it asks for. Needs root.
func TestCreatorOwnership(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("chown to another uid needs root")
	}
	e := newEnv(t)
	// Raw messages: p9's client sends NoGID at plain 9P2000.L; Linux sends the gid.
	r := dialRaw(t, "tcp", e.tcp)
	r.version(64 << 10)
	if err := r.attach(1, 1, "/", 4321); err != nil {
		t.Fatal(err)
	}
	r.walk(1, 2)
	const gid = uint32(8765)
	if _, err := r.call(msg(tLcreate, 1, uint32(2), "mine", uint32(2), uint32(0o644), gid)); err != nil {
		t.Fatal(err)
	}
	if _, err := r.call(msg(72, 1, uint32(1), "mydir", uint32(0o755), gid)); err != nil { // Tmkdir
		t.Fatal(err)
	}
	if _, err := r.call(msg(16, 1, uint32(1), "mylink", "mine", gid)); err != nil { // Tsymlink
		t.Fatal(err)
	}
	if _, err := r.call(msg(18, 1, uint32(1), "myfifo", uint32(0o10600), uint32(0), uint32(0), gid)); err != nil { // Tmknod
		t.Fatal(err)
	}
	for _, name := range []string{"mine", "mydir", "mylink", "myfifo"} {
		var st syscall.Stat_t
		if err := syscall.Lstat(filepath.Join(e.export, name), &st); err != nil {
			t.Fatal(err)
		}
		if st.Uid != 4321 || st.Gid != server.NobodyGID {
			t.Errorf("%s owned by %d:%d, want 4321:%d", name, st.Uid, st.Gid, server.NobodyGID)
		}
	}
	rootc := dialRaw(t, "tcp", e.tcp)
	rootc.version(64 << 10)
	if err := rootc.attach(1, 1, "/", 0); err != nil {
		t.Fatal(err)
	}
	rootc.walk(1, 2)
	if _, err := rootc.call(msg(tLcreate, 1, uint32(2), "roots", uint32(2), uint32(0o644), gid)); err != nil {
		t.Fatal(err)
	}
	var st syscall.Stat_t
	if err := syscall.Lstat(filepath.Join(e.export, "roots"), &st); err != nil || st.Uid != 0 || st.Gid != gid {
		t.Errorf("root's create owned by %d:%d (%v), want 0:%d", st.Uid, st.Gid, err, gid)
	}
	// Without a uid (n_uname = NoUID) the caller is nobody.
	_, anon := dial(t, "tcp", e.tcp, "/", 0xFFFFFFFF, 64<<10)
	d := walk(t, anon)
	f, _, _, err := d.Create("theirs", p9.ReadWrite, 0o644, p9.NoUID, p9.NoGID)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	syscall.Lstat(filepath.Join(e.export, "theirs"), &st)
	if st.Uid != server.NobodyUID || st.Gid != server.NobodyGID {
		t.Errorf("anonymous create owned by %d:%d, want nobody", st.Uid, st.Gid)
	}
}
