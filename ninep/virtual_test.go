package ninep_test

import (
	"context"
	"io/fs"
	"sync"
	"testing"
	"time"

	"github.com/semfs/semfs/server"
)

// gatedTree is a virtual tree (server.Virtual) whose directory ".slow/q" answers
// its Lstat only once the test lets it, as a query directory answers only once
// its query has run. It stands in for server/meta, which is not what is tested
// here: the shim is.
type gatedTree struct {
	mu      sync.Mutex
	entered chan struct{} // closed when an Lstat of .slow/q starts waiting
	release chan struct{} // closed to let it answer
}

func (g *gatedTree) arm() (entered <-chan struct{}, release func()) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.entered, g.release = make(chan struct{}), make(chan struct{})
	var once sync.Once
	r := g.release
	return g.entered, func() { once.Do(func() { close(r) }) }
}

func (g *gatedTree) Name() string { return ".slow" }

func (g *gatedTree) Lstat(_ context.Context, p string) (server.Attr, error) {
	a := server.Attr{Mode: fs.ModeDir | 0o555, Ino: server.VirtualIno(p), Nlink: 2}
	switch p {
	case ".slow":
		return a, nil
	case ".slow/q":
		g.mu.Lock()
		entered, release := g.entered, g.release
		g.mu.Unlock()
		if entered != nil {
			select {
			case <-entered:
			default:
				close(entered)
			}
			<-release
		}
		return a, nil
	}
	return server.Attr{}, server.E("lstat", server.KindNotFound, p, nil)
}

func (g *gatedTree) ReadDir(_ context.Context, p string) ([]server.DirEntry, error) {
	return nil, nil
}

func (g *gatedTree) Readlink(_ context.Context, p string) (string, error) {
	return "", server.E("readlink", server.KindInvalid, p, nil)
}

func (g *gatedTree) OpenFile(_ context.Context, p string, write bool) (server.VirtualFile, error) {
	return nil, server.E("open", server.KindIsDir, p, nil)
}

func (g *gatedTree) Truncate(_ context.Context, p string, size int64) error {
	return server.E("truncate", server.KindReadOnly, p, nil)
}

// TestShimLeavesVirtualPathsToP9: the shim answers walks and getattrs in the
// connection's only reader, so it must not answer one that waits for anything
// but a system call. The virtual tree's answers can run a query (server.FS.Inline
// says false): a Twalk into it and a Tgetattr of a fid there go to p9, and a
// request for a real file sent behind them is answered while they wait.
func TestShimLeavesVirtualPathsToP9(t *testing.T) {
	g := &gatedTree{}
	e := newEnv(t, func(o *server.Options) { o.Virtual = g })
	r := attachFast(t, e)

	// first sends a blocked request, then a Tgetattr of the root (fid 1), and
	// returns the tag of the first reply. If none comes within 5 s the gate
	// is opened, so that a shim answering inline fails the test instead of
	// hanging it.
	first := func(blocked []byte, getattrTag uint16) (uint16, func()) {
		entered, release := g.arm()
		t.Cleanup(release)
		r.send(blocked)
		select {
		case <-entered:
		case <-time.After(10 * time.Second):
			release()
			t.Fatal("the blocked request never reached the virtual tree")
		}
		r.send(msg(tGetattr, getattrTag, uint32(1), maskAll))
		timer := time.AfterFunc(5*time.Second, release)
		defer timer.Stop()
		typ, tag, body := r.recv()
		if typ == 7 { // Rlerror
			t.Fatalf("tag %d: Rlerror %x", tag, body)
		}
		return tag, release
	}

	tag, release := first(msg(tWalk, 5, uint32(1), uint32(2), uint16(2), ".slow", "q"), 6)
	if tag != 6 {
		t.Fatalf("first reply is tag %d, want the root's Rgetattr (tag 6): the Twalk into the virtual tree held the connection", tag)
	}
	release()
	if typ, tag, body := r.recv(); tag != 5 || typ != tWalk+1 {
		t.Fatalf("walk reply: type %d tag %d %x", typ, tag, body)
	}

	tag, release = first(msg(tGetattr, 7, uint32(2), maskAll), 8)
	if tag != 8 {
		t.Fatalf("first reply is tag %d, want the root's Rgetattr (tag 8): the Tgetattr of a virtual fid held the connection", tag)
	}
	release()
	if typ, tag, body := r.recv(); tag != 7 || typ != tGetattr+1 {
		t.Fatalf("getattr reply: type %d tag %d %x", typ, tag, body)
	}
}
