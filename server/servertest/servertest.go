// Package servertest is one conformance suite for every way into the backing
// directory: the core itself, NFSv3 and 9P2000.L. Each front end's tests supply
// a Client that speaks its protocol through a real client library and translate
// that protocol's errors to the io/fs sentinels; the suite then checks the same
// behaviour, and the bytes on disk, through each of them.
package servertest

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Info is what the suite needs of lstat.
type Info struct {
	Size         int64
	Mode         fs.FileMode // type bits and permissions, setuid, setgid and sticky included
	Nlink        uint32
	Mtime, Atime time.Time
	UID, GID     uint32
}

// Client is a protocol's view of the backing directory, with slash-separated
// paths relative to its root. Errors must satisfy errors.Is with fs.ErrNotExist,
// fs.ErrExist or fs.ErrPermission where they apply, ErrNotEmpty for a
// non-empty directory, syscall.EXDEV for a rename or link across a mount
// point (which tells a mover to copy and delete instead), and syscall.EPERM for
// an operation not permitted whatever the permission bits (not EACCES).
type Client interface {
	WriteFile(path string, data []byte, perm fs.FileMode) error // create or truncate, then write
	ReadFile(path string) ([]byte, error)
	Mkdir(path string, perm fs.FileMode) error
	Remove(path string) error // a non-directory
	Rmdir(path string) error
	Rename(oldPath, newPath string) error
	Symlink(target, path string) error
	Readlink(path string) (string, error)
	Link(oldPath, newPath string) error
	Lstat(path string) (Info, error)
	ReadDir(path string) ([]string, error) // names, without "." and ".."
	Truncate(path string, size int64) error
	Chmod(path string, perm fs.FileMode) error // setuid, setgid and sticky included
	Chtimes(path string, mtime time.Time) error
	Chown(path string, uid, gid int) error // -1 leaves it as it is
	// Mknod makes a special file of mode's type (fs.ModeNamedPipe,
	// fs.ModeSocket, fs.ModeDevice with or without fs.ModeCharDevice).
	Mknod(path string, mode fs.FileMode) error
	SetTimes(path string, atime, mtime TimeSet) error
	// As is the same server seen by a caller acting as uid, with primary
	// group gid and supplementary groups (where the protocol carries
	// groups; see Env.HostGroups).
	As(uid, gid uint32, groups []uint32) Client
}

// ErrNotEmpty is what a Client returns for ENOTEMPTY.
var ErrNotEmpty = syscall.ENOTEMPTY

// ErrInvalid is what a Client returns for EINVAL (errors.Is must hold).
var ErrInvalid = syscall.EINVAL

// Env is one started server: a client, and the host paths to check behind it.
type Env struct {
	Client  Client
	Backing string // the backing directory on the host
	Outside string // a directory beside it holding "secret"; nothing may touch it
	// HostGroups says the protocol carries no groups (9P: n_uname only): the
	// server takes a caller's from the host's user and group databases, so
	// Client.As's gid and groups are not the caller's.
	HostGroups bool
	// Vouching, where HostGroups, is a client whose As callers hold the group
	// a request of theirs names (a chgrp's) on the client's word: a 9P
	// connection on which root attached, as a kernel mount's, whose kernel
	// checked the caller's real groups before sending (server/vouch.go). Nil
	// where Client.As's groups travel with each call.
	Vouching Client
	// Seconds32 says the protocol carries a time's seconds in 32 unsigned
	// bits (NFSv3's nfstime3: 1970 to 2106).
	Seconds32 bool
}

// StartFn starts a fresh server on an empty backing directory.
type StartFn func(t *testing.T) Env

// NewDirs makes the backing directory and an outside directory with a secret
// file, for StartFns.
func NewDirs(t *testing.T) (backing, outside string) {
	t.Helper()
	base := t.TempDir()
	backing, outside = filepath.Join(base, "data"), filepath.Join(base, "outside")
	for _, d := range []string{backing, outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// Shared: a root daemon checks its callers, who may act as any uid.
	if err := os.Chmod(backing, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("outside"), 0o644); err != nil {
		t.Fatal(err)
	}
	return backing, outside
}

// Run runs the whole suite; each subtest gets a fresh server.
func Run(t *testing.T, start StartFn) {
	tests := []struct {
		name string
		fn   func(t *testing.T, e Env)
	}{
		{"WriteReadOnDisk", testWriteRead},
		{"TruncateUpDown", testTruncate},
		{"MkdirNested", testMkdir},
		{"RenameFileOverExistingAndDir", testRename},
		{"RemoveAndRmdir", testRemove},
		{"NoHangAfterWrite", testNoHangAfterWrite},
		{"SymlinkStoredVerbatim", testSymlink},
		{"SymlinkOutsideIsNotFollowed", testSymlinkOutside},
		{"HardLink", testLink},
		{"ChmodChtimes", testAttrs},
		{"ReadDirComplete", testReadDir},
		{"Errors", testErrors},
		{"CrossDevice", testCrossDevice},
		{"NotPermitted", testNotPermitted},
		{"SymlinkIsNoFile", testSymlinkIsNoFile},
		{"NewNamesMustBeUTF8", testNonUTF8},
		{"ChownRights", testChownRights},
		{"SupplementaryGroups", testSupplementaryGroups},
		{"ChgrpToTheCallersGroup", testChgrpToCallersGroup},
		{"StickyDirectory", testStickyDirectory},
		{"SpecialFiles", testSpecialFiles},
		{"LongNames", testLongNames},
		{"Times", testTimes},
		{"ModesAsSent", testModesAsSent},
		{"WriteClearsSetuid", testWriteClearsSetuid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := start(t)
			tc.fn(t, e)
			checkOutside(t, e)
		})
	}
}

func must(t *testing.T, err error, what string) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func onDisk(t *testing.T, e Env, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(e.Backing, filepath.FromSlash(p)))
	if err != nil {
		t.Fatalf("on disk %s: %v", p, err)
	}
	return b
}

func checkOutside(t *testing.T, e Env) {
	t.Helper()
	if e.Outside == "" {
		return
	}
	b, err := os.ReadFile(filepath.Join(e.Outside, "secret"))
	if err != nil || string(b) != "outside" {
		t.Fatalf("the file outside the backing directory changed: %q %v", b, err)
	}
	ents, _ := os.ReadDir(e.Outside)
	if len(ents) != 1 {
		t.Fatalf("the directory outside the backing directory changed: %d entries", len(ents))
	}
}

func testWriteRead(t *testing.T, e Env) {
	data := bytes.Repeat([]byte("0123456789abcdef"), 70000) // > 1 MiB: several WRITEs
	must(t, e.Client.WriteFile("big.bin", data, 0o644), "write")
	got, err := e.Client.ReadFile("big.bin")
	must(t, err, "read")
	if !bytes.Equal(got, data) {
		t.Fatalf("read back %d bytes, want %d equal", len(got), len(data))
	}
	if !bytes.Equal(onDisk(t, e, "big.bin"), data) {
		t.Fatal("backing file differs from what was written")
	}
	must(t, e.Client.WriteFile("big.bin", []byte("short"), 0o644), "overwrite")
	if string(onDisk(t, e, "big.bin")) != "short" {
		t.Fatalf("overwrite left %q", onDisk(t, e, "big.bin")[:16])
	}
	info, err := e.Client.Lstat("big.bin")
	must(t, err, "lstat")
	if info.Size != 5 || !info.Mode.IsRegular() {
		t.Fatalf("lstat: %+v", info)
	}
}

func testTruncate(t *testing.T, e Env) {
	must(t, e.Client.WriteFile("t", []byte("hello world"), 0o644), "write")
	must(t, e.Client.Truncate("t", 5), "truncate down")
	if got := onDisk(t, e, "t"); string(got) != "hello" {
		t.Fatalf("after truncate down: %q", got)
	}
	must(t, e.Client.Truncate("t", 8), "truncate up")
	if got := onDisk(t, e, "t"); string(got) != "hello\x00\x00\x00" {
		t.Fatalf("after truncate up: %q", got)
	}
}

func testMkdir(t *testing.T, e Env) {
	p := ""
	for i := 0; i < 5; i++ {
		p += fmt.Sprintf("/l%d", i)
		must(t, e.Client.Mkdir(p[1:], 0o755), "mkdir "+p)
	}
	must(t, e.Client.WriteFile(p[1:]+"/leaf", []byte("x"), 0o644), "write leaf")
	info, err := e.Client.Lstat("l0")
	must(t, err, "lstat dir")
	if !info.Mode.IsDir() || info.Nlink < 2 {
		t.Fatalf("directory attributes: %+v (nlink must be >= 2)", info)
	}
	if string(onDisk(t, e, "l0/l1/l2/l3/l4/leaf")) != "x" {
		t.Fatal("nested file missing on disk")
	}
}

func testRename(t *testing.T, e Env) {
	must(t, e.Client.WriteFile("a", []byte("A"), 0o644), "write a")
	must(t, e.Client.WriteFile("b", []byte("B"), 0o644), "write b")
	must(t, e.Client.Rename("a", "b"), "rename over existing")
	if _, err := e.Client.Lstat("a"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("source still there: %v", err)
	}
	if string(onDisk(t, e, "b")) != "A" {
		t.Fatal("target not replaced")
	}
	must(t, e.Client.Mkdir("d", 0o755), "mkdir d")
	must(t, e.Client.Mkdir("d/sub", 0o755), "mkdir d/sub")
	must(t, e.Client.WriteFile("d/sub/f", []byte("F"), 0o644), "write d/sub/f")
	must(t, e.Client.Mkdir("e", 0o755), "mkdir e")
	must(t, e.Client.Rename("d", "e/moved"), "rename non-empty dir across dirs")
	if string(onDisk(t, e, "e/moved/sub/f")) != "F" {
		t.Fatal("directory contents did not move")
	}
	must(t, e.Client.Rename("b", "e/moved/sub/b2"), "rename file across dirs")
	if string(onDisk(t, e, "e/moved/sub/b2")) != "A" {
		t.Fatal("file did not move across directories")
	}
}

func testRemove(t *testing.T, e Env) {
	must(t, e.Client.Mkdir("d", 0o755), "mkdir")
	must(t, e.Client.WriteFile("d/f", []byte("x"), 0o644), "write")
	if err := e.Client.Rmdir("d"); !errors.Is(err, ErrNotEmpty) && !errors.Is(err, fs.ErrExist) {
		t.Fatalf("rmdir of a non-empty directory: %v", err)
	}
	must(t, e.Client.Remove("d/f"), "remove")
	must(t, e.Client.Rmdir("d"), "rmdir")
	if _, err := os.Lstat(filepath.Join(e.Backing, "d")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("directory still on disk: %v", err)
	}
}

func testSymlink(t *testing.T, e Env) {
	for _, target := range []string{"plain", "../up/and/over", "/abs/path", "dir/"} {
		name := fmt.Sprintf("l%d", len(target))
		must(t, e.Client.Symlink(target, name), "symlink "+target)
		got, err := e.Client.Readlink(name)
		must(t, err, "readlink")
		if got != target {
			t.Fatalf("readlink = %q, want %q verbatim", got, target)
		}
		info, err := e.Client.Lstat(name)
		must(t, err, "lstat link")
		if info.Mode&fs.ModeSymlink == 0 {
			t.Fatalf("lstat of a symlink says %v", info.Mode)
		}
	}
}

func testSymlinkOutside(t *testing.T, e Env) {
	if e.Outside == "" {
		t.Skip("no outside directory")
	}
	secret := filepath.Join(e.Outside, "secret")
	must(t, e.Client.Symlink(secret, "evil"), "symlink to outside")
	must(t, e.Client.Symlink(e.Outside, "evildir"), "symlink to outside dir")
	if b, err := e.Client.ReadFile("evil"); err == nil {
		t.Fatalf("read through a symlink to outside gave %q", b)
	}
	if err := e.Client.WriteFile("evil", []byte("pwned"), 0o644); err == nil {
		t.Fatal("write through a symlink to outside succeeded")
	}
	if err := e.Client.Truncate("evil", 0); err == nil {
		t.Log("truncate on a symlink returned no error; checking nothing outside changed")
	}
	if err := e.Client.Chmod("evil", 0o777); err == nil {
		t.Log("chmod on a symlink returned no error; checking nothing outside changed")
	}
	if _, err := e.Client.ReadFile("evildir/secret"); err == nil {
		t.Fatal("read through a symlinked directory to outside succeeded")
	}
	if err := e.Client.WriteFile("evildir/planted", []byte("x"), 0o644); err == nil {
		t.Fatal("create through a symlinked directory to outside succeeded")
	}
	if err := e.Client.Rename("evildir/secret", "stolen"); err == nil {
		t.Fatal("rename from outside succeeded")
	}
	must(t, e.Client.Remove("evil"), "remove the link itself")
	if _, err := os.Stat(secret); err != nil {
		t.Fatalf("removing the link removed its target: %v", err)
	}
}

func testLink(t *testing.T, e Env) {
	must(t, e.Client.WriteFile("orig", []byte("same"), 0o644), "write")
	must(t, e.Client.Link("orig", "alias"), "link")
	info, err := e.Client.Lstat("alias")
	must(t, err, "lstat")
	if info.Nlink != 2 {
		t.Fatalf("nlink = %d, want 2", info.Nlink)
	}
	a, _ := os.Stat(filepath.Join(e.Backing, "orig"))
	b, _ := os.Stat(filepath.Join(e.Backing, "alias"))
	if !os.SameFile(a, b) {
		t.Fatal("the link is not the same file on disk")
	}
}

func testAttrs(t *testing.T, e Env) {
	must(t, e.Client.WriteFile("f", []byte("x"), 0o644), "write")
	must(t, e.Client.Chmod("f", 0o600), "chmod")
	fi, err := os.Stat(filepath.Join(e.Backing, "f"))
	must(t, err, "stat on disk")
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode on disk %v, want 0600", fi.Mode())
	}
	when := time.Date(2021, 3, 4, 5, 6, 7, 0, time.UTC)
	must(t, e.Client.Chtimes("f", when), "chtimes")
	fi, _ = os.Stat(filepath.Join(e.Backing, "f"))
	if !fi.ModTime().Equal(when) {
		t.Fatalf("mtime on disk %v, want %v", fi.ModTime(), when)
	}
	info, err := e.Client.Lstat("f")
	must(t, err, "lstat")
	if !info.Mtime.Equal(when) || info.Mode.Perm() != 0o600 {
		t.Fatalf("lstat through the protocol: %+v", info)
	}
}

func testReadDir(t *testing.T, e Env) {
	must(t, e.Client.Mkdir("many", 0o755), "mkdir")
	const n = 1500
	want := make([]string, n)
	for i := range want {
		want[i] = fmt.Sprintf("entry-%05d-with-a-longer-name-to-fill-pages", i)
		if err := os.WriteFile(filepath.Join(e.Backing, "many", want[i]), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := e.Client.ReadDir("many")
	must(t, err, "readdir")
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("readdir returned %d of %d entries", len(got), n)
	}
}

func testErrors(t *testing.T, e Env) {
	if _, err := e.Client.ReadFile("missing"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("read of a missing file: %v", err)
	}
	must(t, e.Client.Mkdir("d", 0o755), "mkdir")
	if err := e.Client.Mkdir("d", 0o755); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("mkdir of an existing directory: %v", err)
	}
	if err := e.Client.Remove("missing"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("remove of a missing file: %v", err)
	}
	if err := e.Client.Rename("missing", "x"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("rename of a missing file: %v", err)
	}
}

// testCrossDevice: a file system mounted inside the backing directory makes a
// rename or link across it EXDEV through every front end, as rename(2) says
// it, so that mv falls back to copy and delete; nothing moves. It needs a
// tmpfs mount (root with CAP_SYS_ADMIN): it is skipped where mounting is not
// allowed, except under CI=true.
func testCrossDevice(t *testing.T, e Env) {
	mnt := filepath.Join(e.Backing, "mnt")
	if err := os.Mkdir(mnt, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", mnt, "tmpfs", 0, "size=1m,mode=0777"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("mounting a tmpfs inside the backing directory: %v", err)
		}
		t.Skipf("mounting a tmpfs inside the backing directory is not permitted here (%v)", err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(mnt, syscall.MNT_DETACH) })
	must(t, e.Client.WriteFile("f", []byte("F"), 0o644), "write f")
	if err := e.Client.Rename("f", "mnt/f"); !errors.Is(err, syscall.EXDEV) {
		t.Fatalf("rename across a mount point: %v, want EXDEV", err)
	}
	if err := e.Client.Link("f", "mnt/g"); !errors.Is(err, syscall.EXDEV) {
		t.Fatalf("link across a mount point: %v, want EXDEV", err)
	}
	if string(onDisk(t, e, "f")) != "F" {
		t.Fatal("the source changed")
	}
	if names, err := os.ReadDir(mnt); err != nil || len(names) != 0 {
		t.Fatalf("the mount got %v (%v)", names, err)
	}
}

// testNotPermitted: an immutable file (chattr +i, set by the host) refuses
// every change with EPERM, not EACCES, through every front end, and stays as
// it was. Skipped where the file system has no immutable flag, except under
// CI=true.
func testNotPermitted(t *testing.T, e Env) {
	must(t, e.Client.WriteFile("imm", []byte("kept"), 0o666), "write imm")
	p := filepath.Join(e.Backing, "imm")
	setFlags := func(flags int) error {
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		return unix.IoctlSetPointerInt(int(f.Fd()), unix.FS_IOC_SETFLAGS, flags)
	}
	const immutable = 0x10 // FS_IMMUTABLE_FL
	if err := setFlags(immutable); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("chattr +i: %v", err)
		}
		t.Skipf("no immutable flag here (%v)", err)
	}
	t.Cleanup(func() { _ = setFlags(0) })
	if err := e.Client.WriteFile("imm", []byte("changed"), 0o666); !errors.Is(err, syscall.EPERM) {
		t.Errorf("write of an immutable file: %v, want EPERM", err)
	}
	if err := e.Client.Remove("imm"); !errors.Is(err, syscall.EPERM) {
		t.Errorf("remove of an immutable file: %v, want EPERM", err)
	}
	if err := e.Client.Rename("imm", "moved"); !errors.Is(err, syscall.EPERM) {
		t.Errorf("rename of an immutable file: %v, want EPERM", err)
	}
	if err := e.Client.Chmod("imm", 0o600); !errors.Is(err, syscall.EPERM) {
		t.Errorf("chmod of an immutable file: %v, want EPERM", err)
	}
	if string(onDisk(t, e, "imm")) != "kept" {
		t.Error("the immutable file changed")
	}
}

// testSymlinkIsNoFile: reading a symlink as a file fails (the server never
// follows one) with ELOOP, as open(2) with O_NOFOLLOW says it, or EINVAL where
// the protocol has no such status (NFSv3, as Linux's nfsd answers).
func testSymlinkIsNoFile(t *testing.T, e Env) {
	must(t, e.Client.WriteFile("target", []byte("T"), 0o644), "write target")
	must(t, e.Client.Symlink("target", "link"), "symlink")
	b, err := e.Client.ReadFile("link")
	if !errors.Is(err, syscall.ELOOP) && !errors.Is(err, ErrInvalid) {
		t.Errorf("read of a symlink as a file: %q, %v; want ELOOP (or EINVAL over NFSv3)", b, err)
	}
}

// testNonUTF8: a name that is not valid UTF-8 could never be tagged (the tag API
// is JSON), so no way of making a name accepts one (EINVAL, nothing on disk),
// while such a name made by a host tool stays listable and readable.
func testNonUTF8(t *testing.T, e Env) {
	bad := "bad-\xff\xfe"
	must(t, e.Client.WriteFile("ok.txt", []byte("ok"), 0o644), "write")
	refused := map[string]error{
		"create":  e.Client.WriteFile(bad, []byte("x"), 0o644),
		"mkdir":   e.Client.Mkdir(bad, 0o755),
		"symlink": e.Client.Symlink("ok.txt", bad),
		"link":    e.Client.Link("ok.txt", bad),
		"rename":  e.Client.Rename("ok.txt", bad),
	}
	for op, err := range refused {
		if !errors.Is(err, ErrInvalid) {
			t.Errorf("%s of a name that is not UTF-8: %v, want EINVAL", op, err)
		}
	}
	ents, _ := os.ReadDir(e.Backing)
	if len(ents) != 1 || ents[0].Name() != "ok.txt" {
		t.Fatalf("a refused name left something on disk: %v", ents)
	}
	if err := os.WriteFile(filepath.Join(e.Backing, bad), []byte("host"), 0o644); err != nil {
		t.Fatal(err)
	}
	names, err := e.Client.ReadDir("")
	must(t, err, "readdir")
	if !slices.Contains(names, bad) {
		t.Fatalf("a host-made name that is not UTF-8 is not listed: %q", names)
	}
	b, err := e.Client.ReadFile(bad)
	must(t, err, "read of a host-made name")
	if string(b) != "host" {
		t.Fatalf("read of a host-made name: %q", b)
	}
}
