package servertest

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The POSIX cases below are the causes pjdfstest found through Linux's NFSv3
// and v9fs clients (issue 29), each checked here against the core and through
// both protocols, on the bytes and inodes on disk. The ones about rights act
// as callers other than root (Client.As), which needs a daemon running as root
// (root mode, server/cred.go): they are skipped otherwise.

// TimeSet is one timestamp of Client.SetTimes, as utimensat(2) takes it: Omit
// leaves it alone (UTIME_OMIT), Now sets the server's clock (UTIME_NOW),
// otherwise T.
type TimeSet struct {
	Omit, Now bool
	T         time.Time
}

// ErrNameTooLong is what a Client returns for ENAMETOOLONG (errors.Is must hold).
var ErrNameTooLong = syscall.ENAMETOOLONG

// specialBits are the permission bits the cases compare.
const specialBits = fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky

func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("acting as other users needs a daemon running as root (root mode)")
	}
}

// hostOwner returns p's owner and group as the host sees them.
func hostOwner(t *testing.T, e Env, p string) (uid, gid uint32, mode fs.FileMode) {
	t.Helper()
	fi, err := os.Lstat(filepath.Join(e.Backing, filepath.FromSlash(p)))
	if err != nil {
		t.Fatalf("on disk %s: %v", p, err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	return st.Uid, st.Gid, fi.Mode()
}

// notPermitted: a refusal whatever the mode bits (EPERM), or EACCES where
// Linux answers it (a sticky directory's unlink answers EPERM; the kernel's
// may_delete says EPERM, some paths EACCES).
func refused(err error) bool {
	return errors.Is(err, syscall.EPERM) || errors.Is(err, fs.ErrPermission)
}

// testChownRights: chown as the kernel decides it for the caller (pjdfstest
// chown/00, 05, 07): a caller that does not own a file cannot change its
// owner or group, even to what they are (EPERM, the file unchanged); an owner
// cannot give a file away, nor chgrp to a group it is not in; an owner's
// chgrp to its own group is allowed and clears setuid and setgid, as
// chown(2) does.
func testChownRights(t *testing.T, e Env) {
	needRoot(t)
	root := e.Client.As(0, 0, nil)
	must(t, root.WriteFile("f", []byte("x"), 0o644), "write")
	must(t, root.Chown("f", NobodyUID, NobodyGID), "chown as root")
	other := e.Client.As(OtherUID, OtherUID, nil)
	if err := other.Chown("f", NobodyUID, NobodyGID); !errors.Is(err, syscall.EPERM) {
		t.Errorf("chown by a non-owner to the owner it has: %v, want EPERM", err)
	}
	if err := other.Chown("f", int(OtherUID), -1); !errors.Is(err, syscall.EPERM) {
		t.Errorf("chown by a non-owner to itself: %v, want EPERM", err)
	}
	if err := other.Chown("f", -1, int(OtherUID)); !errors.Is(err, syscall.EPERM) {
		t.Errorf("chgrp by a non-owner: %v, want EPERM", err)
	}
	if uid, gid, _ := hostOwner(t, e, "f"); uid != NobodyUID || gid != NobodyGID {
		t.Fatalf("refused chowns changed the owner to %d:%d", uid, gid)
	}
	owner := e.Client.As(NobodyUID, NobodyGID, nil)
	if err := owner.Chown("f", int(OtherUID), -1); !errors.Is(err, syscall.EPERM) {
		t.Errorf("an owner giving its file away: %v, want EPERM", err)
	}
	if err := owner.Chown("f", -1, int(OtherUID)); !errors.Is(err, syscall.EPERM) {
		t.Errorf("chgrp to a group the owner is not in: %v, want EPERM", err)
	}
	must(t, root.Chmod("f", 0o755|fs.ModeSetuid|fs.ModeSetgid), "chmod 06755 as root")
	must(t, owner.Chown("f", -1, NobodyGID), "chgrp by the owner to its own group")
	if _, _, mode := hostOwner(t, e, "f"); mode&specialBits != 0o755 {
		t.Errorf("after the owner's chgrp the mode is %v, want setuid and setgid cleared (0755)", mode)
	}
	if !e.HostGroups {
		// A member of a group may give its file to that group.
		member := e.Client.As(NobodyUID, NobodyGID, []uint32{NobodyGID, OtherUID})
		must(t, member.Chown("f", -1, int(OtherUID)), "chgrp to a supplementary group")
		if _, gid, _ := hostOwner(t, e, "f"); gid != OtherUID {
			t.Errorf("chgrp to a supplementary group left gid %d", gid)
		}
	}
}

// testChgrpToCallersGroup: the owner of a file may give it to any group it
// holds, a supplementary one included (pjdfstest chown/00, chown/05), which
// clears setuid and setgid; holding the group gives nothing else: a member
// that does not own the file still gets EPERM, and an owner still cannot give
// its file away. NFS and the core carry the caller's groups; 9P carries none,
// and its kernel client vouches for the group it sends (Env.Vouching).
func testChgrpToCallersGroup(t *testing.T, e Env) {
	needRoot(t)
	c := e.Client
	if e.HostGroups {
		if e.Vouching == nil {
			t.Skip("the protocol carries no groups and this client vouches for none")
		}
		c = e.Vouching
	}
	root := e.Client.As(0, 0, nil)
	must(t, root.WriteFile("f", []byte("x"), 0o644), "write")
	must(t, root.Chown("f", NobodyUID, NobodyGID), "chown as root")
	must(t, root.Chmod("f", 0o755|fs.ModeSetuid|fs.ModeSetgid), "chmod 06755 as root")
	member := c.As(NobodyUID, NobodyGID, []uint32{NobodyGID, OtherUID})
	must(t, member.Chown("f", -1, int(OtherUID)), "chgrp by the owner to its supplementary group")
	if uid, gid, mode := hostOwner(t, e, "f"); uid != NobodyUID || gid != OtherUID || mode&specialBits != 0o755 {
		t.Errorf("after the owner's chgrp: %d:%d %v on disk, want %d:%d with setuid and setgid cleared (0755)",
			uid, gid, mode, NobodyUID, OtherUID)
	}
	if err := member.Chown("f", int(OtherUID), -1); !errors.Is(err, syscall.EPERM) {
		t.Errorf("an owner holding the group giving its file away: %v, want EPERM", err)
	}
	otherMember := c.As(OtherUID, OtherUID, []uint32{OtherUID, NobodyGID})
	if err := otherMember.Chown("f", -1, int(NobodyGID)); !errors.Is(err, syscall.EPERM) {
		t.Errorf("chgrp by a member of both groups that does not own the file: %v, want EPERM", err)
	}
	if uid, gid, _ := hostOwner(t, e, "f"); uid != NobodyUID || gid != OtherUID {
		t.Errorf("refused chowns changed the file to %d:%d", uid, gid)
	}
}

// testSupplementaryGroups: a caller's supplementary groups grant what the
// group bits allow (pjdfstest open/06), and only those (NFS: AUTH_UNIX's gid
// list; 9P carries none, Env.HostGroups).
func testSupplementaryGroups(t *testing.T, e Env) {
	needRoot(t)
	if e.HostGroups {
		t.Skip("the protocol carries no groups: the server takes them from the host's group database")
	}
	root := e.Client.As(0, 0, nil)
	must(t, root.WriteFile("g", []byte("group"), 0o640), "write")
	must(t, root.Chown("g", 0, int(OtherUID)), "chgrp")
	must(t, root.Chmod("g", 0o040), "chmod 0040")
	in := e.Client.As(NobodyUID, NobodyGID, []uint32{NobodyGID, OtherUID})
	if b, err := in.ReadFile("g"); err != nil || string(b) != "group" {
		t.Errorf("a member of the file's group reading it: %q, %v", b, err)
	}
	out := e.Client.As(NobodyUID, NobodyGID, []uint32{NobodyGID})
	if _, err := out.ReadFile("g"); !errors.Is(err, fs.ErrPermission) {
		t.Errorf("a caller outside the file's group reading it: %v, want EACCES", err)
	}
}

// testStickyDirectory: chmod stores the sticky bit, set by root or by a
// directory's owner (pjdfstest chmod/11), and in a sticky directory only the
// owner of a file or of the directory may remove or rename it (unlink/11,
// rmdir/11, rename/09): the others get EPERM (or EACCES) and the file stays.
func testStickyDirectory(t *testing.T, e Env) {
	needRoot(t)
	root := e.Client.As(0, 0, nil)
	must(t, root.Mkdir("tmp", 0o777), "mkdir")
	must(t, root.Chmod("tmp", 0o777|fs.ModeSticky), "chmod 01777")
	if info, err := root.Lstat("tmp"); err != nil || info.Mode&specialBits != 0o777|fs.ModeSticky {
		t.Fatalf("lstat after chmod 01777: %v, %v", info.Mode, err)
	}
	if _, _, mode := hostOwner(t, e, "tmp"); mode&fs.ModeSticky == 0 {
		t.Fatalf("sticky bit not stored on disk: %v", mode)
	}
	must(t, root.WriteFile("tmp/f", []byte("root's"), 0o666), "root's file")
	must(t, root.Mkdir("tmp/d", 0o777), "root's directory")
	other := e.Client.As(NobodyUID, NobodyGID, nil)
	if err := other.Remove("tmp/f"); !refused(err) {
		t.Errorf("unlink of root's file in a sticky directory by another: %v, want EPERM", err)
	}
	if err := other.Rmdir("tmp/d"); !refused(err) {
		t.Errorf("rmdir of root's directory in a sticky directory by another: %v, want EPERM", err)
	}
	if err := other.Rename("tmp/f", "tmp/g"); !refused(err) {
		t.Errorf("rename of root's file in a sticky directory by another: %v, want EPERM", err)
	}
	must(t, other.WriteFile("tmp/mine", []byte("x"), 0o644), "the other's own file")
	if err := other.Rename("tmp/mine", "tmp/f"); !refused(err) {
		t.Errorf("rename over root's file in a sticky directory by another: %v, want EPERM", err)
	}
	must(t, other.Remove("tmp/mine"), "the other removes its own file")
	for _, p := range []string{"tmp/f", "tmp/d"} {
		if _, err := os.Lstat(filepath.Join(e.Backing, p)); err != nil {
			t.Errorf("%s after refused removals: %v", p, err)
		}
	}
	// mkdir(2) keeps a sticky bit it is given.
	must(t, root.Mkdir("tmp2", 0o777|fs.ModeSticky), "mkdir 01777")
	if _, _, mode := hostOwner(t, e, "tmp2"); mode&specialBits != 0o777|fs.ModeSticky {
		t.Errorf("mkdir 01777 stored %v", mode)
	}
	// A directory's owner (not root) sets the bit on its own directory.
	must(t, other.Mkdir("own", 0o755), "mkdir as the other")
	must(t, other.Chmod("own", 0o700|fs.ModeSticky), "chmod 01700 by the owner")
	if _, _, mode := hostOwner(t, e, "own"); mode&specialBits != 0o700|fs.ModeSticky {
		t.Errorf("chmod 01700 by the owner stored %v", mode)
	}
}

// testSpecialFiles: FIFOs and Unix socket nodes are made, as the caller
// (its owner on disk), and behave as files in renames and removals
// (pjdfstest mkfifo/*, and every test looping over file types); device nodes
// are refused with EPERM whoever asks, root included, and nothing appears.
func testSpecialFiles(t *testing.T, e Env) {
	needRoot(t)
	c := e.Client.As(NobodyUID, NobodyGID, nil)
	for _, n := range []struct {
		name string
		typ  fs.FileMode
	}{{"fifo", fs.ModeNamedPipe}, {"sock", fs.ModeSocket}} {
		must(t, c.Mknod(n.name, n.typ|0o640), "mknod "+n.name)
		info, err := c.Lstat(n.name)
		must(t, err, "lstat "+n.name)
		if info.Mode.Type() != n.typ || info.Mode.Perm() != 0o640 {
			t.Errorf("%s: lstat mode %v", n.name, info.Mode)
		}
		if uid, _, mode := hostOwner(t, e, n.name); uid != NobodyUID || mode.Type() != n.typ {
			t.Errorf("%s on disk: owner %d, mode %v; want the caller's %s", n.name, uid, mode, n.typ)
		}
		if err := c.Mknod(n.name, n.typ|0o640); !errors.Is(err, fs.ErrExist) {
			t.Errorf("mknod over an existing %s: %v, want EEXIST", n.name, err)
		}
	}
	must(t, c.Rename("fifo", "sock"), "rename a fifo over a socket")
	if _, _, mode := hostOwner(t, e, "sock"); mode.Type() != fs.ModeNamedPipe {
		t.Errorf("after the rename, sock is %v", mode)
	}
	must(t, c.Remove("sock"), "remove")
	root := e.Client.As(0, 0, nil)
	for _, dev := range []fs.FileMode{fs.ModeDevice, fs.ModeDevice | fs.ModeCharDevice} {
		for _, who := range []Client{root, c} {
			if err := who.Mknod("dev", dev|0o600); !errors.Is(err, syscall.EPERM) {
				t.Errorf("mknod of a %v device: %v, want EPERM", dev, err)
			}
		}
	}
	if ents, _ := os.ReadDir(e.Backing); len(ents) != 0 {
		t.Errorf("left on disk: %v", ents)
	}
}

// testLongNames: a component of NAME_MAX (255) bytes is made, renamed and
// removed; one byte more is ENAMETOOLONG; a tree deeper than PATH_MAX from the
// root works throughout (pjdfstest */03.t run in a directory of their own,
// below the export's root, so their PATH_MAX-1 relative paths are longer from
// it).
func testLongNames(t *testing.T, e Env) {
	long := strings.Repeat("n", 255)
	must(t, e.Client.WriteFile(long, []byte("x"), 0o644), "create a 255-byte name")
	must(t, e.Client.Rename(long, long[:254]+"m"), "rename to a 255-byte name")
	must(t, e.Client.Remove(long[:254]+"m"), "remove a 255-byte name")
	must(t, e.Client.Mkdir(long, 0o755), "mkdir a 255-byte name")
	must(t, e.Client.Rmdir(long), "rmdir a 255-byte name")
	if err := e.Client.WriteFile(long+"x", []byte("x"), 0o644); !errors.Is(err, ErrNameTooLong) {
		t.Errorf("create of a 256-byte name: %v, want ENAMETOOLONG", err)
	}
	comp := strings.Repeat("d", 127)
	p := ""
	for len(p) < 4096+512 {
		p += comp
		must(t, e.Client.Mkdir(p, 0o755), "mkdir at depth "+itoa(strings.Count(p, "/")+1))
		p += "/"
	}
	must(t, e.Client.WriteFile(p+"f", []byte("deep"), 0o644), "create below PATH_MAX")
	if b, err := e.Client.ReadFile(p + "f"); err != nil || string(b) != "deep" {
		t.Fatalf("read below PATH_MAX: %q, %v", b, err)
	}
	must(t, e.Client.Rename(p+"f", p+"g"), "rename below PATH_MAX")
	if b, err := e.Client.ReadFile(p + "g"); err != nil || string(b) != "deep" {
		t.Fatalf("read after a rename below PATH_MAX: %q, %v", b, err)
	}
	must(t, e.Client.Remove(p+"g"), "remove below PATH_MAX")
}

// testTimes: utimensat's UTIME_NOW and UTIME_OMIT and explicit times, with
// their rights (pjdfstest utimensat/05-09): an explicit time is the owner's to
// set (EPERM for others, writers included), the server's clock anyone's who
// may write the file (EACCES for the rest); an omitted time stays; times after
// 2038 are kept (2100 fits NFSv3's unsigned 32-bit seconds; later ones where
// the protocol carries them, Env.Seconds32).
func testTimes(t *testing.T, e Env) {
	needRoot(t)
	root := e.Client.As(0, 0, nil)
	must(t, root.WriteFile("w", []byte("x"), 0o666), "write")
	must(t, root.WriteFile("r", []byte("x"), 0o644), "write")
	at := time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)
	mt := time.Date(2100, 1, 2, 3, 4, 5, 0, time.UTC)
	must(t, root.SetTimes("w", TimeSet{T: at}, TimeSet{T: mt}), "explicit times")
	host := func(p string) (atime, mtime time.Time) {
		var st unix.Stat_t
		if err := unix.Lstat(filepath.Join(e.Backing, p), &st); err != nil {
			t.Fatal(err)
		}
		return time.Unix(st.Atim.Unix()), time.Unix(st.Mtim.Unix())
	}
	if a, m := host("w"); !a.Equal(at) || !m.Equal(mt) {
		t.Fatalf("on disk atime %v mtime %v, want %v %v", a, m, at, mt)
	}
	if info, err := root.Lstat("w"); err != nil || !info.Mtime.Equal(mt) || !info.Atime.Equal(at) {
		t.Fatalf("lstat: %+v, %v", info, err)
	}
	must(t, root.SetTimes("w", TimeSet{Omit: true}, TimeSet{T: at}), "mtime only")
	if a, m := host("w"); !a.Equal(at) || !m.Equal(at) {
		t.Fatalf("UTIME_OMIT atime: on disk atime %v mtime %v", a, m)
	}
	before := time.Now().Add(-2 * time.Second)
	other := e.Client.As(NobodyUID, NobodyGID, nil)
	must(t, other.SetTimes("w", TimeSet{Now: true}, TimeSet{Now: true}), "UTIME_NOW by a writer who is not the owner")
	if a, m := host("w"); a.Before(before) || m.Before(before) {
		t.Fatalf("UTIME_NOW: on disk atime %v mtime %v", a, m)
	}
	if err := other.SetTimes("w", TimeSet{T: at}, TimeSet{T: at}); !errors.Is(err, syscall.EPERM) {
		t.Errorf("explicit times by a writer who is not the owner: %v, want EPERM", err)
	}
	if err := other.SetTimes("r", TimeSet{Now: true}, TimeSet{Now: true}); !errors.Is(err, fs.ErrPermission) {
		t.Errorf("UTIME_NOW by a caller who may not write: %v, want EACCES", err)
	}
	if a, _ := host("w"); a.Equal(at) {
		t.Error("a refused SetTimes changed the atime")
	}
	if !e.Seconds32 {
		// 2^32 seconds and more (pjdfstest utimensat/09's 2106), and past
		// the range of nanoseconds in an int64 (2262), within ext4's (2446).
		for _, far := range []time.Time{time.Unix(1<<32, 5), time.Date(2400, 1, 1, 0, 0, 0, 7, time.UTC)} {
			must(t, root.SetTimes("w", TimeSet{T: far}, TimeSet{T: far}), "times in "+itoa(far.Year()))
			if a, m := host("w"); !a.Equal(far) || !m.Equal(far) {
				t.Errorf("on disk atime %v mtime %v, want %v", a, m, far)
			}
			if info, err := root.Lstat("w"); err != nil || !info.Mtime.Equal(far) || !info.Atime.Equal(far) {
				t.Errorf("lstat after times in %d: %v %v, %v", far.Year(), info.Atime, info.Mtime, err)
			}
		}
	}
}

// testModesAsSent: a new file, directory, FIFO and socket node get the
// permission bits the client sent, whatever the daemon's own umask (the
// client applied its caller's umask already; pjdfstest's modes such as 0777
// and 0666 lost their group and other write bits under a daemon's 022).
func testModesAsSent(t *testing.T, e Env) {
	must(t, e.Client.WriteFile("f", nil, 0o666), "create 0666")
	must(t, e.Client.Mkdir("d", 0o777), "mkdir 0777")
	must(t, e.Client.Mkdir("s", 0o777|fs.ModeSticky), "mkdir 01777")
	want := map[string]fs.FileMode{"f": 0o666, "d": 0o777, "s": 0o777 | fs.ModeSticky}
	if os.Geteuid() == 0 {
		// As root, as the suite's other cases that switch callers.
		must(t, e.Client.As(0, 0, nil).Mknod("p", fs.ModeNamedPipe|0o666), "mkfifo 0666")
		must(t, e.Client.As(0, 0, nil).Mknod("k", fs.ModeSocket|0o777), "socket 0777")
		want["p"], want["k"] = 0o666, 0o777
	}
	for name, m := range want {
		if _, _, mode := hostOwner(t, e, name); mode&specialBits != m {
			t.Errorf("%s on disk: %v, want %v", name, mode&specialBits, m)
		}
	}
}

// testWriteClearsSetuid: a write by a caller without CAP_FSETID clears the
// file's setuid bit, and setgid where group execute is set, as Linux's write
// does (pjdfstest chmod/12); root's write keeps them.
func testWriteClearsSetuid(t *testing.T, e Env) {
	needRoot(t)
	root := e.Client.As(0, 0, nil)
	must(t, root.WriteFile("x", []byte("#!"), 0o777), "write")
	must(t, root.Chmod("x", 0o777|fs.ModeSetuid|fs.ModeSetgid), "chmod 06777")
	if _, _, mode := hostOwner(t, e, "x"); mode&specialBits != 0o777|fs.ModeSetuid|fs.ModeSetgid {
		t.Fatalf("after chmod 06777: %v", mode&specialBits)
	}
	must(t, root.WriteFile("x", []byte("#!/bin/sh"), 0o777), "root's write")
	if _, _, mode := hostOwner(t, e, "x"); mode&specialBits != 0o777|fs.ModeSetuid|fs.ModeSetgid {
		t.Fatalf("after root's write: %v, want setuid and setgid kept", mode&specialBits)
	}
	must(t, e.Client.As(NobodyUID, NobodyGID, nil).WriteFile("x", []byte("#!/bin/true"), 0o777), "nobody's write")
	if _, _, mode := hostOwner(t, e, "x"); mode&specialBits != 0o777 {
		t.Errorf("after another caller's write: %v, want setuid and setgid cleared (0777)", mode&specialBits)
	}
}

// The callers the cases act as: nobody, and another unprivileged uid (also
// used as a group), as pjdfstest's 65534 and 65533.
const (
	NobodyUID = 65534
	NobodyGID = 65534
	OtherUID  = 65533
)

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}
