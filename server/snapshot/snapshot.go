// Package snapshot writes and restores one archive that holds the backing
// directory and a consistent copy of the index.
//
// The archive is a POSIX tar: "semfs-snapshot.json" (format version), then every
// entry of the backing directory under "data/" (directories, regular files,
// symlinks verbatim, FIFOs, hard links as tar links), then "index/records.jsonl"
// (index.Dump) and "index/registry.json" (uid -> app). It is written while
// server.FS.Freeze holds every change back, so a write is wholly in it or wholly
// out of it; reads go on meanwhile.
package snapshot

import (
	"archive/tar"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/semfs/semfs/index"
	"github.com/semfs/semfs/server"
)

const (
	manifestName = "semfs-snapshot.json"
	recordsName  = "index/records.dump"
	registryName = "index/registry.json"
	dataPrefix   = "data/"
	formatV1     = 1
)

type manifest struct {
	Format    int       `json:"format"`
	CreatedAt time.Time `json:"createdAt"`
}

// Write streams a snapshot of fsys, idx and reg to w.
func Write(ctx context.Context, w io.Writer, fsys *server.FS, idx *index.Index, reg *server.Registry) error {
	tw := tar.NewWriter(w)
	err := fsys.Freeze(ctx, func() error {
		if err := writeJSON(tw, manifestName, manifest{Format: formatV1, CreatedAt: time.Now().UTC()}); err != nil {
			return err
		}
		if err := writeData(ctx, tw, fsys); err != nil {
			return err
		}
		if err := writeIndex(tw, idx, keepOf(ctx)); err != nil {
			return err
		}
		regs := map[string]string{}
		if reg != nil {
			for uid, app := range reg.All() {
				regs[strconv.FormatUint(uint64(uid), 10)] = app
			}
		}
		return writeJSON(tw, registryName, regs)
	})
	if err != nil {
		return err
	}
	return tw.Close()
}

func writeData(ctx context.Context, tw *tar.Writer, fsys *server.FS) error {
	links := map[uint64]string{} // inode -> first path, for hard links
	keep := keepOf(ctx)
	return fsys.Walk(ctx, "", func(p string, a server.Attr) error {
		if keep != nil && !keep(p) {
			return nil
		}
		hdr := &tar.Header{
			Name:    dataPrefix + p,
			Mode:    int64(a.Mode.Perm() | a.Mode&(fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky)),
			ModTime: a.Mtime, AccessTime: a.Atime,
			Uid: int(a.UID), Gid: int(a.GID),
			Format: tar.FormatPAX,
		}
		hdr.Mode = int64(tarMode(a.Mode))
		switch {
		case a.IsDir():
			hdr.Typeflag, hdr.Name = tar.TypeDir, hdr.Name+"/"
			return tw.WriteHeader(hdr)
		case a.IsSymlink():
			target, err := fsys.Readlink(ctx, p)
			if err != nil {
				return err
			}
			hdr.Typeflag, hdr.Linkname = tar.TypeSymlink, target
			return tw.WriteHeader(hdr)
		case a.Mode&fs.ModeNamedPipe != 0:
			hdr.Typeflag = tar.TypeFifo
			return tw.WriteHeader(hdr)
		case a.Mode.IsRegular():
			if a.Nlink > 1 {
				if first, ok := links[a.Ino]; ok {
					hdr.Typeflag, hdr.Linkname = tar.TypeLink, dataPrefix+first
					return tw.WriteHeader(hdr)
				}
				links[a.Ino] = p
			}
			f, err := fsys.OpenRead(ctx, p)
			if err != nil {
				return err
			}
			defer f.Close()
			// The size comes from the open file: nothing changes it under Freeze
			// except a process outside the server, and then the copy below fails
			// loudly instead of writing a torn entry.
			fi, err := f.Stat()
			if err != nil {
				return err
			}
			hdr.Typeflag, hdr.Size = tar.TypeReg, fi.Size()
			if err := tw.WriteHeader(hdr); err != nil {
				return err
			}
			if _, err := io.CopyN(tw, f, hdr.Size); err != nil {
				return fmt.Errorf("snapshot: copying /%s: %w", p, err)
			}
			return nil
		}
		return nil // sockets and devices are not part of the tree
	})
}

func tarMode(m fs.FileMode) int {
	mode := int(m.Perm())
	if m&fs.ModeSetuid != 0 {
		mode |= 0o4000
	}
	if m&fs.ModeSetgid != 0 {
		mode |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		mode |= 0o1000
	}
	return mode
}

func writeIndex(tw *tar.Writer, idx *index.Index, keep func(string) bool) error {
	// Dump goes to a temporary file first because a tar entry needs its size up
	// front.
	tmp, err := os.CreateTemp("", "semfs-dump-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	if err := idx.DumpKeep(tmp, keep); err != nil {
		return fmt.Errorf("snapshot: dumping the index: %w", err)
	}
	size, err := tmp.Seek(0, io.SeekCurrent)
	if err != nil {
		return err
	}
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return err
	}
	if err := tw.WriteHeader(&tar.Header{Name: recordsName, Mode: 0o600, Size: size, Typeflag: tar.TypeReg, ModTime: time.Now()}); err != nil {
		return err
	}
	_, err = io.CopyN(tw, tmp, size)
	return err
}

func writeJSON(tw *tar.Writer, name string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o600, Size: int64(len(b)), Typeflag: tar.TypeReg, ModTime: time.Now()}); err != nil {
		return err
	}
	_, err = tw.Write(b)
	return err
}

// Restore unpacks the archive r into dataDir and indexDir, which must be empty or
// absent, and builds the index from the archived records so that queries answer
// exactly as before. opts are the index options the daemon will run with.
func Restore(r io.Reader, dataDir, indexDir string, opts index.Options) error {
	for _, d := range []string{dataDir, indexDir} {
		if err := ensureEmpty(d); err != nil {
			return err
		}
	}
	root, err := os.OpenRoot(dataDir)
	if err != nil {
		return err
	}
	defer root.Close()
	tr := tar.NewReader(r)
	var sawManifest, sawRecords bool
	type dirTimes struct {
		name         string
		atime, mtime time.Time
	}
	var dirs []dirTimes
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("restore: reading the archive: %w", err)
		}
		switch {
		case hdr.Name == manifestName:
			var m manifest
			if err := json.NewDecoder(io.LimitReader(tr, 1<<20)).Decode(&m); err != nil {
				return fmt.Errorf("restore: bad manifest: %w", err)
			}
			if m.Format != formatV1 {
				return fmt.Errorf("restore: archive format %d is not supported (want %d)", m.Format, formatV1)
			}
			sawManifest = true
		case hdr.Name == recordsName:
			if !sawManifest {
				return errors.New("restore: not a semfs snapshot (no manifest first)")
			}
			idx, err := index.Load(indexDir, tr, opts)
			if err != nil {
				return fmt.Errorf("restore: rebuilding the index: %w", err)
			}
			if err := idx.Close(); err != nil {
				return err
			}
			sawRecords = true
		case hdr.Name == registryName:
			b, err := io.ReadAll(io.LimitReader(tr, 1<<20))
			if err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(indexDir, "registry.json"), b, 0o600); err != nil {
				return err
			}
		case strings.HasPrefix(hdr.Name, dataPrefix):
			if !sawManifest {
				return errors.New("restore: not a semfs snapshot (no manifest first)")
			}
			name := strings.TrimSuffix(strings.TrimPrefix(hdr.Name, dataPrefix), "/")
			p, err := server.CleanPath("restore", name)
			if err != nil || p == "" || p != name {
				return fmt.Errorf("restore: refusing archive entry %q: not a clean path inside the backing directory", hdr.Name)
			}
			if err := restoreEntry(root, tr, hdr, p); err != nil {
				return fmt.Errorf("restore: %s: %w", hdr.Name, err)
			}
			if hdr.Typeflag == tar.TypeDir {
				dirs = append(dirs, dirTimes{p, hdr.AccessTime, hdr.ModTime})
			}
		default:
			return fmt.Errorf("restore: unexpected archive entry %q", hdr.Name)
		}
	}
	if !sawManifest || !sawRecords {
		return errors.New("restore: the archive is incomplete (no manifest or no index records)")
	}
	// Directory times last: creating their children changed them.
	for i := len(dirs) - 1; i >= 0; i-- {
		d := dirs[i]
		root.Chtimes(d.name, atimeOr(d.atime, d.mtime), d.mtime)
	}
	return nil
}

func restoreEntry(root *os.Root, tr *tar.Reader, hdr *tar.Header, p string) error {
	if err := createEntry(root, tr, hdr, p); err != nil {
		return err
	}
	// Owners are restored only when we may set them; an ordinary user restores
	// everything as their own.
	if os.Geteuid() == 0 && hdr.Typeflag != tar.TypeLink {
		return root.Lchown(p, hdr.Uid, hdr.Gid)
	}
	return nil
}

func createEntry(root *os.Root, tr *tar.Reader, hdr *tar.Header, p string) error {
	mode := fs.FileMode(hdr.Mode & 0o777)
	switch hdr.Typeflag {
	case tar.TypeDir:
		if err := root.Mkdir(p, 0o700); err != nil {
			return err
		}
		return root.Chmod(p, mode)
	case tar.TypeSymlink:
		return root.Symlink(hdr.Linkname, p)
	case tar.TypeLink:
		target := strings.TrimPrefix(hdr.Linkname, dataPrefix)
		if t, err := server.CleanPath("restore", target); err != nil || t != target || t == "" {
			return fmt.Errorf("hard link to %q is outside the backing directory", hdr.Linkname)
		}
		return root.Link(target, p)
	case tar.TypeFifo:
		// os.Root has no mknod: create the FIFO relative to its parent, opened
		// through the root, with a single validated name.
		dir, name := server.Split(p)
		if dir == "" {
			dir = "."
		}
		d, err := root.Open(dir)
		if err != nil {
			return err
		}
		defer d.Close()
		return unix.Mknodat(int(d.Fd()), name, unix.S_IFIFO|uint32(mode), 0)
	case tar.TypeReg:
		f, err := root.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return err
		}
		if _, err := io.Copy(f, tr); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
		if err := root.Chmod(p, mode); err != nil {
			return err
		}
		return root.Chtimes(p, atimeOr(hdr.AccessTime, hdr.ModTime), hdr.ModTime)
	}
	return fmt.Errorf("unsupported entry type %q", hdr.Typeflag)
}

func atimeOr(a, m time.Time) time.Time {
	if a.IsZero() {
		return m
	}
	return a
}

func ensureEmpty(dir string) error {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return os.MkdirAll(dir, 0o755)
	}
	if err != nil {
		return err
	}
	if len(ents) > 0 {
		return fmt.Errorf("restore: %s is not empty; restore only into an empty location", dir)
	}
	return nil
}
