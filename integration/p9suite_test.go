package integration_test

import (
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/hugelgupf/p9/fsimpl/localfs"
	p9test "github.com/hugelgupf/p9/fsimpl/test"
	"github.com/hugelgupf/p9/p9"

	"github.com/semfs/semfs/integration/semfstest"
)

// wireAttacher is a p9.Attacher whose files are p9's own client over TCP to
// the real daemon: p9's acceptance suite (fsimpl/test), written to check a
// p9.Attacher in process, then checks semfs's 9P server as a client sees it,
// through the connection shim and the fast paths (ninep/), on the wire.
type wireAttacher struct {
	t     *testing.T
	d     *semfstest.Daemon
	aname string
}

func (a wireAttacher) Attach() (p9.File, error) {
	return wireFile{a.d.Attach9P(a.t, a.aname, 0)}, nil
}

// wireFile adapts p9's client File to the in-process p9.File contract the
// suite was written against, in the two places where the wire differs for
// every server (p9's own included), not only for semfs:
//
//   - Create: an in-process Create returns a new File and leaves the
//     directory as it was; on the wire Tlcreate turns the directory's fid into
//     the new file, and p9's client returns that same File (the suite's
//     f.Close() would then close the root). The adapter creates through a
//     clone of the directory's fid, as the Linux kernel does.
//   - Create of an existing name: the suite expects EEXIST, which an
//     in-process Create gives; on the wire Tlcreate is open(2) with O_CREAT,
//     exclusive only when the client sends O_EXCL, as the kernel does for an
//     O_EXCL open (semfs opens an existing file otherwise, like diod). The
//     adapter sends O_EXCL.
//   - Readdir: in process, count is a number of entries; on the wire it is
//     bytes (p9's own server fits no 29-byte entry in the suite's count of
//     10). The adapter asks for count entries' worth of bytes and returns at
//     most count entries, without "." and "..", which semfs lists (Linux
//     v9fs shows only what the server sends, and `ls -a` expects them; see
//     TestP9ReaddirDots) and an in-process directory does not.
type wireFile struct{ p9.File }

func (f wireFile) Walk(names []string) ([]p9.QID, p9.File, error) {
	qids, nf, err := f.File.Walk(names)
	if err != nil {
		return nil, nil, err
	}
	return qids, wireFile{nf}, nil
}

func (f wireFile) WalkGetAttr(names []string) ([]p9.QID, p9.File, p9.AttrMask, p9.Attr, error) {
	qids, nf, mask, attr, err := f.File.WalkGetAttr(names)
	if err != nil {
		return nil, nil, mask, attr, err
	}
	return qids, wireFile{nf}, mask, attr, nil
}

func (f wireFile) Create(name string, flags p9.OpenFlags, perm p9.FileMode, uid p9.UID, gid p9.GID) (p9.File, p9.QID, uint32, error) {
	_, dir, err := f.File.Walk(nil)
	if err != nil {
		return nil, p9.QID{}, 0, err
	}
	const oExcl = 0o200 // Linux O_EXCL, passed through in Tlcreate's flags
	nf, qid, iounit, err := dir.Create(name, flags|oExcl, perm, uid, gid)
	if err != nil {
		dir.Close()
		return nil, p9.QID{}, 0, err
	}
	return wireFile{nf}, qid, iounit, nil
}

func (f wireFile) Readdir(offset uint64, count uint32) (p9.Dirents, error) {
	const maxDirent = 24 + 255 // qid, offset, type, name length, longest name
	var out p9.Dirents
	for uint32(len(out)) < count {
		ents, err := f.File.Readdir(offset, count*maxDirent)
		if err != nil || len(ents) == 0 {
			return out, err
		}
		for _, e := range ents {
			offset = e.Offset
			if e.Name != "." && e.Name != ".." && uint32(len(out)) < count {
				out = append(out, e)
			}
		}
	}
	return out, nil
}

// TestP9AcceptanceSuite runs every test of p9 v0.4.1's fsimpl/test package
// over the wire: TestFile and TestReadWriteFS on an empty writable directory,
// TestReadOnlyFS on a tree made on the host (directory listings with the
// QID each entry walks to, file attributes and contents read twice, a
// symlink's target).
func TestP9AcceptanceSuite(t *testing.T) {
	t.Run("rw", func(t *testing.T) {
		d := semfstest.Start(t, semfstest.Options{ModelDir: "off"})
		t.Run("TestFile", func(t *testing.T) { p9test.TestFile(t, wireAttacher{t, d, "@suite"}) })
		t.Run("TestReadWriteFS", func(t *testing.T) { p9test.TestReadWriteFS(t, wireAttacher{t, d, "@suite"}) })
	})
	// The suite over p9's own server (localfs, no semfs) through the same
	// adapter: what it needs of the wire is what any 9P2000.L server gives.
	t.Run("p9-localfs", func(t *testing.T) {
		srv := p9.NewServer(localfs.Attacher(t.TempDir()))
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		go srv.Serve(ln)
		t.Cleanup(func() { ln.Close() })
		conn, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		cl, err := p9.NewClient(conn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cl.Close() })
		root, err := cl.Attach("/")
		if err != nil {
			t.Fatal(err)
		}
		p9test.TestFile(t, staticAttacher{wireFile{root}})
	})
	t.Run("ro", func(t *testing.T) {
		data := filepath.Join(t.TempDir(), "data")
		writeFiles(t, data, map[string]string{"a.txt": "hello", "sub/b.txt": "", "sub/deeper/c.md": "# c\n"})
		if err := os.Symlink("../a.txt", filepath.Join(data, "sub/link")); err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{"a.txt", "sub/b.txt", "sub/deeper/c.md"} {
			os.Chmod(filepath.Join(data, p), 0o644) // whatever the umask
		}
		d := semfstest.Start(t, semfstest.Options{Data: data, ModelDir: "off"})
		size := p9.AttrMask{Mode: true, Size: true}
		p9test.TestReadOnlyFS(t, wireAttacher{t, d, "@suite"},
			p9test.WithDir("", "a.txt", "sub"),
			p9test.WithDir("sub", "b.txt", "deeper", "link"),
			p9test.WithDir("sub/deeper", "c.md"),
			p9test.WithFile("a.txt", "hello", p9.Attr{Mode: p9.ModeRegular | 0o644, Size: 5}, size),
			p9test.WithFile("sub/b.txt", "", p9.Attr{Mode: p9.ModeRegular | 0o644}, size),
			p9test.WithFile("sub/deeper/c.md", "# c\n", p9.Attr{Mode: p9.ModeRegular | 0o644, Size: 4}, size),
			p9test.WithSymlink("sub/link", "../a.txt", p9.Attr{Mode: p9.ModeSymlink | 0o777}, p9.AttrMask{Mode: true}),
		)
	})
}

type staticAttacher struct{ f p9.File }

func (a staticAttacher) Attach() (p9.File, error) { return a.f, nil }

// semfs lists "." and ".." first in every directory, as a local file system
// and diod do (the adapter above hides them from the suite).
func TestP9ReaddirDots(t *testing.T) {
	d := semfstest.Start(t, semfstest.Options{ModelDir: "off"})
	root := d.Attach9P(t, "@suite", 0)
	_, dir, err := root.Walk(nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := dir.Open(p9.ReadOnly); err != nil {
		t.Fatal(err)
	}
	ents, err := dir.Readdir(0, 4096)
	if err != nil || len(ents) < 2 || ents[0].Name != "." || ents[1].Name != ".." {
		t.Fatalf("Readdir of the root: %v %v, want . and .. first", ents, err)
	}
}
