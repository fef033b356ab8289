package ninep_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/hugelgupf/p9/linux"
)

const tMknod = 18

// TestMknodDevices: Tmknod of a character or block device is refused with
// EPERM, as mknod(2) answers a caller without CAP_MKNOD, and creates nothing: a
// device node would hand clients the host's devices. A fifo and a socket node
// (v9fs's bind(2)) are made. Over the raw wire, with the fast path and without.
func TestMknodDevices(t *testing.T) {
	e := newEnv(t)
	logs := &logBuffer{}
	ref := noFastServer(t, e, logs)
	for _, s := range []struct{ name, network, addr string }{{"fast path", "tcp", e.tcp}, {"p9 only", "unix", ref}} {
		t.Run(s.name, func(t *testing.T) {
			r := dialRaw(t, s.network, s.addr)
			r.version(fastMsize)
			if err := r.attach(1, 1, "@mknod", 0); err != nil {
				t.Fatal(err)
			}
			prefix := map[string]string{"fast path": "f-", "p9 only": "p-"}[s.name]
			for _, c := range []struct {
				name         string
				mode         uint32
				major, minor uint32
			}{
				{"chr", syscall.S_IFCHR | 0o666, 1, 3}, // /dev/null
				{"blk", syscall.S_IFBLK | 0o600, 8, 0}, // /dev/sda
			} {
				name := prefix + c.name
				if _, err := r.call(msg(tMknod, 2, uint32(1), name, c.mode, c.major, c.minor, uint32(0))); err != linux.EPERM {
					t.Errorf("mknod %s: %v, want EPERM", c.name, err)
				}
				if _, err := os.Lstat(filepath.Join(e.export, name)); !os.IsNotExist(err) {
					t.Errorf("mknod %s left something behind: %v", c.name, err)
				}
			}
			for _, c := range []struct {
				name string
				mode uint32
				typ  os.FileMode
			}{{"fifo", syscall.S_IFIFO | 0o644, os.ModeNamedPipe}, {"sock", syscall.S_IFSOCK | 0o600, os.ModeSocket}} {
				name := prefix + c.name
				if _, err := r.call(msg(tMknod, 2, uint32(1), name, c.mode, uint32(0), uint32(0), uint32(0))); err != nil {
					t.Fatalf("mknod %s: %v", c.name, err)
				}
				fi, err := os.Lstat(filepath.Join(e.export, name))
				if err != nil || fi.Mode().Type() != c.typ {
					t.Fatalf("%s: %v, %v", c.name, fi, err)
				}
			}
			r.mustCall(msg(tGetattr, 3, uint32(1), maskAll))
		})
	}
}
