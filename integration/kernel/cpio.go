package kernel

import (
	"fmt"
	"io"
	"io/fs"
	"sort"
	"strings"
)

// cpioEntry is one member of a newc ("070701") archive, the format the Linux
// initramfs unpacker reads. Writing it in Go keeps the image build independent
// of the host's cpio and lets the harness create device-free, root-owned trees
// without touching the host filesystem.
type cpioEntry struct {
	Name     string      // path inside the archive, no leading "/"
	Mode     fs.FileMode // fs.ModeDir, fs.ModeSymlink or regular, plus permission bits
	Data     []byte      // file contents, or the symlink target
	ownerUID uint32
}

// cpioArchive collects entries and writes them sorted, parents first, so the
// kernel can create every directory before its children.
type cpioArchive struct {
	entries map[string]cpioEntry
}

func newCPIOArchive() *cpioArchive { return &cpioArchive{entries: map[string]cpioEntry{}} }

// Dir adds a directory and its missing parents.
func (a *cpioArchive) Dir(name string, perm fs.FileMode) {
	name = strings.Trim(name, "/")
	if name == "" {
		return
	}
	if i := strings.LastIndex(name, "/"); i > 0 {
		if _, ok := a.entries[name[:i]]; !ok {
			a.Dir(name[:i], 0o755)
		}
	}
	a.entries[name] = cpioEntry{Name: name, Mode: fs.ModeDir | perm}
}

// File adds a regular file (and its parent directories).
func (a *cpioArchive) File(name string, perm fs.FileMode, data []byte) {
	name = strings.Trim(name, "/")
	if i := strings.LastIndex(name, "/"); i > 0 {
		if _, ok := a.entries[name[:i]]; !ok {
			a.Dir(name[:i], 0o755)
		}
	}
	a.entries[name] = cpioEntry{Name: name, Mode: perm, Data: data}
}

// Symlink adds a symbolic link.
func (a *cpioArchive) Symlink(name, target string) {
	name = strings.Trim(name, "/")
	a.entries[name] = cpioEntry{Name: name, Mode: fs.ModeSymlink | 0o777, Data: []byte(target)}
}

// WriteTo writes the archive, trailer included, and pads the stream to a
// multiple of 512 bytes: the kernel only recognises a following (appended)
// archive at an aligned offset.
func (a *cpioArchive) WriteTo(w io.Writer) (int64, error) {
	names := make([]string, 0, len(a.entries))
	for n := range a.entries {
		names = append(names, n)
	}
	sort.Strings(names)
	cw := &countWriter{w: w}
	ino := uint32(1)
	for _, n := range names {
		if err := writeCPIOHeader(cw, a.entries[n], ino); err != nil {
			return cw.n, err
		}
		ino++
	}
	if err := writeCPIOHeader(cw, cpioEntry{Name: "TRAILER!!!"}, 0); err != nil {
		return cw.n, err
	}
	if pad := (512 - cw.n%512) % 512; pad > 0 {
		if _, err := cw.Write(make([]byte, pad)); err != nil {
			return cw.n, err
		}
	}
	return cw.n, nil
}

func writeCPIOHeader(w *countWriter, e cpioEntry, ino uint32) error {
	var mode uint32
	switch {
	case e.Mode.IsDir():
		mode = 0o040000
	case e.Mode&fs.ModeSymlink != 0:
		mode = 0o120000
	case e.Name == "TRAILER!!!":
		mode = 0
	default:
		mode = 0o100000
	}
	mode |= uint32(e.Mode.Perm())
	nlink := uint32(1)
	if e.Mode.IsDir() {
		nlink = 2
	}
	name := e.Name + "\x00"
	hdr := fmt.Sprintf("070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
		ino, mode, e.ownerUID, 0, nlink, 0, len(e.Data), 0, 0, 0, 0, len(name), 0)
	if _, err := io.WriteString(w, hdr+name); err != nil {
		return err
	}
	if err := w.pad4(); err != nil {
		return err
	}
	if _, err := w.Write(e.Data); err != nil {
		return err
	}
	return w.pad4()
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

func (c *countWriter) pad4() error {
	if pad := (4 - c.n%4) % 4; pad > 0 {
		_, err := c.Write(make([]byte, pad))
		return err
	}
	return nil
}
