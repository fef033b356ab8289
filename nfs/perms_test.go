package nfs_test

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// permsTree lays out root-owned files a caller acting as uid 1000 must not
// reach, and that caller's own files, in a backing directory:
//
//	secret     root 0600 "root only"
//	private/   root 0700, holding f (root 0644)
//	pub/       root 0755, holding f (root 0644 "public")
//	mine       1000:1000 0600 "mine"
//	ro         1000:1000 0444 "ro"
func permsTree(t *testing.T, dir string) {
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
	file("ro", "ro", 0o444, 1000)
}

// setattr3 argument encodings for the calls below (sattr3, then guard: none).
func chmodArgs(fh []byte, mode uint32) *enc {
	return (&enc{}).opaque(fh).u32(1).u32(mode).u32(0).u32(0).u32(0).u32(0).u32(0).u32(0)
}

func chownArgs(fh []byte, uid uint32) *enc {
	return (&enc{}).opaque(fh).u32(0).u32(1).u32(uid).u32(0).u32(0).u32(0).u32(0).u32(0)
}

func sizeArgs(fh []byte, size uint64) *enc {
	return (&enc{}).opaque(fh).u32(0).u32(0).u32(0).u32(1).u64(size).u32(0).u32(0).u32(0)
}

func touchArgs(fh []byte) *enc { // atime and mtime SET_TO_SERVER_TIME
	return (&enc{}).opaque(fh).u32(0).u32(0).u32(0).u32(0).u32(1).u32(1).u32(0)
}

// access returns the ACCESS3 bits granted of want (status, bits).
func (c *rawClient) access(fh []byte, want uint32) (uint32, uint32) {
	st, d := c.call(pAccess, (&enc{}).opaque(fh).u32(want))
	if st != sOK {
		return st, 0
	}
	d.postOp()
	return st, d.u32()
}

// TestRootModeChecksCallers: a daemon running as root serves a caller acting
// as uid 1000 (AUTH_UNIX) what the kernel would let uid 1000 do, on every
// procedure, also through descriptors root's calls left open in the cache;
// the caller's own files stay its own to use; root may do everything; a caller
// without credentials is nobody. Nothing the refused calls asked for happens.
func TestRootModeChecksCallers(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("root mode needs a daemon running as root")
	}
	e := newEnv(t)
	permsTree(t, e.dir)
	rc, root := e.client("/")
	rc.as(0, 0)
	fh := map[string][]byte{}
	look := func(dir []byte, name, key string) {
		t.Helper()
		st, h, _ := rc.lookup(dir, name)
		if st != sOK {
			t.Fatalf("root: lookup %s: %d", key, st)
		}
		fh[key] = h
	}
	for _, n := range []string{"secret", "private", "pub", "mine", "ro"} {
		look(root, n, n)
	}
	look(fh["private"], "f", "private/f")
	look(fh["pub"], "f", "pub/f")
	// Root's READ and WRITE leave the files' descriptors open in the cache.
	if st, data, _ := rc.read(fh["secret"], 0, 100); st != sOK || string(data) != "root only" {
		t.Fatalf("root: read secret: %d %q", st, data)
	}
	if st, _, _, _ := rc.write(fh["pub/f"], 0, []byte("public"), 2); st != sOK {
		t.Fatalf("root: write pub/f: %d", st)
	}

	u := dialRaw(t, e.addr).as(1000, 1000)
	t.Run("refused", func(t *testing.T) {
		if st, data, _ := u.read(fh["secret"], 0, 100); st != sAcces || len(data) != 0 {
			t.Errorf("read of root's 0600 file: %d %q, want ACCES", st, data)
		}
		if st, _, _, _ := u.write(fh["pub/f"], 0, []byte("PWNED!"), 2); st != sAcces {
			t.Errorf("write of root's 0644 file: %d, want ACCES", st)
		}
		if st, _, _, _ := u.write(fh["secret"], 0, []byte("PWNED!"), 0); st != sAcces {
			t.Errorf("unstable write of root's 0600 file: %d, want ACCES", st)
		}
		if st, _, _ := u.lookup(fh["private"], "f"); st != sAcces {
			t.Errorf("lookup in root's 0700 directory: %d, want ACCES", st)
		}
		if st, _ := u.call(pReaddirplus, (&enc{}).opaque(fh["private"]).u64(0).u64(0).u32(4096).u32(65536)); st != sAcces {
			t.Errorf("readdirplus of root's 0700 directory: %d, want ACCES", st)
		}
		if st, _ := u.create(fh["private"], "x", 1, 0); st != sAcces {
			t.Errorf("create in root's 0700 directory: %d, want ACCES", st)
		}
		if st, _ := u.create(fh["pub"], "x", 0, 0); st != sAcces {
			t.Errorf("create in root's 0755 directory: %d, want ACCES", st)
		}
		if st, _ := u.mkdir(fh["pub"], "d"); st != sAcces {
			t.Errorf("mkdir in root's 0755 directory: %d, want ACCES", st)
		}
		for what, args := range map[string]*enc{
			"chown root's file to the caller": chownArgs(fh["secret"], 1000),
			"chown the caller's file to root": chownArgs(fh["mine"], 0),
			"chmod root's file":               chmodArgs(fh["pub/f"], 0o666),
			"truncate root's file":            sizeArgs(fh["pub/f"], 0),
			"touch root's file":               touchArgs(fh["pub/f"]),
		} {
			if st, _ := u.call(pSetattr, args); st == sOK {
				t.Errorf("%s: allowed", what)
			}
		}
		if st, _ := u.call(pRename, (&enc{}).dirop(fh["pub"], "f").dirop(fh["pub"], "g")); st == sOK {
			t.Error("rename in root's 0755 directory: allowed")
		}
		if st, _ := u.call(pRemove, (&enc{}).dirop(fh["pub"], "f")); st == sOK {
			t.Error("remove in root's 0755 directory: allowed")
		}
		for name, want := range map[string]uint32{
			"secret":  0,
			"pub/f":   0x01,        // READ
			"private": 0,           // a 0700 directory: nothing
			"pub":     0x01 | 0x02, // READ, LOOKUP
			"mine":    0x01 | 0x04 | 0x08,
			"ro":      0x01,
		} {
			if st, got := u.access(fh[name], 0x3f); st != sOK || got != want {
				t.Errorf("ACCESS %s: %d %#x, want %#x", name, st, got, want)
			}
		}
		// A caller without credentials is nobody.
		anon, _ := e.client("/")
		if st, data, _ := anon.read(fh["secret"], 0, 100); st != sAcces || len(data) != 0 {
			t.Errorf("AUTH_NULL read of root's 0600 file: %d %q, want ACCES", st, data)
		}
	})
	for p, want := range map[string]string{"secret": "root only", "pub/f": "public", "private/f": "hidden"} {
		var st syscall.Stat_t
		if err := syscall.Lstat(filepath.Join(e.dir, p), &st); err != nil || st.Uid != 0 || st.Mode&0o7777 != map[string]uint32{"secret": 0o600, "pub/f": 0o644, "private/f": 0o644}[p] {
			t.Errorf("%s changed: %+v %v", p, st, err)
		}
		if got := e.read(p); got != want {
			t.Errorf("%s now holds %q", p, got)
		}
	}
	for _, p := range []string{"pub/g", "pub/x", "pub/d", "private/x"} {
		if _, err := os.Lstat(filepath.Join(e.dir, p)); !os.IsNotExist(err) {
			t.Errorf("%s exists after a refused call: %v", p, err)
		}
	}

	t.Run("own files", func(t *testing.T) {
		if st, data, _ := u.read(fh["mine"], 0, 100); st != sOK || string(data) != "mine" {
			t.Errorf("read own 0600 file: %d %q", st, data)
		}
		if st, _, _, _ := u.write(fh["mine"], 4, []byte("!"), 2); st != sOK {
			t.Errorf("write own file: %d", st)
		}
		// nfsd's owner override: the owner writes a 0444 file it holds open.
		if st, _, _, _ := u.write(fh["ro"], 0, []byte("RO"), 2); st != sOK {
			t.Errorf("owner's write of its 0444 file: %d", st)
		}
		if st, _ := u.call(pSetattr, chmodArgs(fh["mine"], 0o640)); st != sOK {
			t.Errorf("chmod own file: %d", st)
		}
		if st, _ := u.create(root, "new", 1, 0); st != sOK {
			t.Errorf("create in a shared directory: %d", st)
		}
		var st syscall.Stat_t
		if err := syscall.Lstat(filepath.Join(e.dir, "new"), &st); err != nil || st.Uid != 1000 || st.Gid != 1000 {
			t.Errorf("new file owned by %d:%d (%v), want 1000:1000", st.Uid, st.Gid, err)
		}
		// A handle is a capability, as with nfsd (no subtree check): the
		// file itself decides, not the directories above it.
		if st, data, _ := u.read(fh["private/f"], 0, 100); st != sOK || string(data) != "hidden" {
			t.Errorf("read of a 0644 file by handle: %d %q", st, data)
		}
	})

	t.Run("root", func(t *testing.T) {
		if st, _, _, _ := rc.write(fh["secret"], 0, []byte("ROOT"), 2); st != sOK {
			t.Errorf("root: write secret: %d", st)
		}
		if st, _ := rc.create(fh["private"], "x", 1, 0); st != sOK {
			t.Errorf("root: create in private: %d", st)
		}
		if st, _ := rc.call(pSetattr, chownArgs(fh["mine"], 0)); st != sOK {
			t.Errorf("root: chown to root: %d", st)
		}
		if st, _ := rc.call(pRemove, (&enc{}).dirop(fh["pub"], "f")); st != sOK {
			t.Errorf("root: remove pub/f: %d", st)
		}
	})
}

// BenchmarkCallerChecks: what root mode's per-request checks cost an NFS
// client: GETATTR (never checked), READ and WRITE of 4 KiB through the
// descriptor cache, and LOOKUP, as root (not checked) and as uid 1000.
func BenchmarkCallerChecks(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("root mode needs a daemon running as root")
	}
	for _, uid := range []uint32{0, 1000} {
		b.Run(map[uint32]string{0: "uid0", 1000: "uid1000"}[uid], func(b *testing.B) {
			e := newEnv(b)
			if err := errors.Join(os.WriteFile(filepath.Join(e.dir, "f"), make([]byte, 1<<20), 0o666), os.Chmod(filepath.Join(e.dir, "f"), 0o666)); err != nil {
				b.Fatal(err)
			}
			c, root := e.client("/")
			c.as(uid, uid)
			st, fh, _ := c.lookup(root, "f")
			if st != sOK {
				b.Fatal(st)
			}
			data := make([]byte, 4096)
			for name, call := range map[string]func() uint32{
				"Getattr": func() uint32 { st, _ := c.getattr(fh); return st },
				"Lookup":  func() uint32 { st, _, _ := c.lookup(root, "f"); return st },
				"Read4K":  func() uint32 { st, _, _ := c.read(fh, 0, 4096); return st },
				"Write4K": func() uint32 { st, _, _, _ := c.write(fh, 0, data, 0); return st },
			} {
				b.Run(name, func(b *testing.B) {
					for b.Loop() {
						if st := call(); st != sOK {
							b.Fatal(st)
						}
					}
				})
			}
		})
	}
}
