package kernel

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"debug/elf"
	_ "embed"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// imageFormat changes whenever the layout of a cached image changes, so old
// cache entries are never reused by a newer harness.
const imageFormat = "semfs-kernel-image/1"

//go:embed guest/init.sh
var guestInit []byte

// Image is a bootable guest: a kernel and a base initramfs, cached on disk.
type Image struct {
	Dir            string // the cache entry holding the files below
	Kernel         string // vmlinux (PVH entry) when extractable, else the bzImage
	Initrd         string // gzip'd newc cpio, zero-padded to 512 bytes
	KernelPackage  string // e.g. linux-image-6.1.0-57-amd64
	KernelVersion  string // Debian version of KernelPackage, e.g. 6.1.192-3
	PVH            bool   // Kernel is the uncompressed ELF with a PVH entry note
	Modules        []string
	BusyboxVersion string
}

// ImageConfig says where images are cached and how progress is reported.
type ImageConfig struct {
	CacheDir string                        // "" = DefaultCacheDir()
	Logf     func(format string, a ...any) // nil = silent
}

// DefaultCacheDir is $SEMFS_KERNEL_CACHE, else /var/cache/semfs-kernel for
// root, else $XDG_CACHE_HOME/semfs-kernel (~/.cache/semfs-kernel).
func DefaultCacheDir() string {
	if d := os.Getenv("SEMFS_KERNEL_CACHE"); d != "" {
		return d
	}
	if os.Geteuid() == 0 {
		return "/var/cache/semfs-kernel"
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "semfs-kernel")
	}
	return filepath.Join(os.TempDir(), "semfs-kernel")
}

// busyboxPath is where Debian's busybox-static installs its binary.
const busyboxPath = "/bin/busybox"

// BuildImage returns the cached image for the current Debian kernel package
// (what linux-image-amd64 depends on), busybox and guest init, building it
// first if needed. Builds are serialised by an flock on the cache directory;
// a finished entry is renamed into place, so a crash never leaves a half
// image that a later run would trust. Nothing is installed on the host: the
// kernel .deb is fetched with `apt-get download` and unpacked in the cache.
func BuildImage(ctx context.Context, cfg ImageConfig) (*Image, error) {
	logf := cfg.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	dir := cfg.CacheDir
	if dir == "" {
		dir = DefaultCacheDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("image: create cache dir: %w", err)
	}
	lock, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("image: lock: %w", err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return nil, fmt.Errorf("image: flock %s: %w", lock.Name(), err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)

	kpkg, kver, err := resolveKernelPackage(ctx, logf)
	if err != nil {
		return nil, err
	}
	bb, err := os.ReadFile(busyboxPath)
	if err != nil {
		return nil, fmt.Errorf("image: %s (install busybox-static): %w", busyboxPath, err)
	}
	if err := checkStatic(busyboxPath); err != nil {
		return nil, err
	}
	bbver, _ := output(ctx, "dpkg-query", "-W", "-f=${Version}", "busybox-static")

	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n%s\n%s\n", imageFormat, kpkg, kver, strings.Join(guestModules, " "))
	h.Write(bb)
	h.Write(guestInit)
	key := hex.EncodeToString(h.Sum(nil))[:16]
	entry := filepath.Join(dir, strings.TrimPrefix(kpkg, "linux-image-")+"_"+kver+"_"+key)

	if img, err := loadImage(entry); err == nil {
		return img, nil
	}
	logf("image: building %s (%s %s, one-off, cached in %s)", filepath.Base(entry), kpkg, kver, dir)
	tmp, err := os.MkdirTemp(dir, ".build-")
	if err != nil {
		return nil, fmt.Errorf("image: %w", err)
	}
	defer os.RemoveAll(tmp)
	img, err := buildImage(ctx, tmp, kpkg, kver, bb, logf)
	if err != nil {
		return nil, err
	}
	img.BusyboxVersion = strings.TrimSpace(bbver)
	if err := writeMeta(tmp, img); err != nil {
		return nil, err
	}
	os.RemoveAll(entry)
	if err := os.Rename(tmp, entry); err != nil {
		return nil, fmt.Errorf("image: install %s: %w", entry, err)
	}
	pruneImages(dir, entry, logf)
	return loadImage(entry)
}

// pruneImages removes cache entries other than keep that were built more
// than a day ago (a superseded kernel package or harness version), so the
// cache does not grow by ~66 MB per kernel update. Runs under the cache lock;
// a run still booting a day-old entry is not a case worth keeping it for.
func pruneImages(dir, keep string, logf func(string, ...any)) {
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		if !e.IsDir() || p == keep {
			continue
		}
		if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > 24*time.Hour {
			logf("image: removing superseded cache entry %s", e.Name())
			os.RemoveAll(p)
		}
	}
}

func buildImage(ctx context.Context, tmp, kpkg, kver string, busybox []byte, logf func(string, ...any)) (*Image, error) {
	debDir := filepath.Join(tmp, "deb")
	if err := os.MkdirAll(debDir, 0o755); err != nil {
		return nil, err
	}
	dl := exec.CommandContext(ctx, "apt-get", "-q", "download", kpkg+"="+kver)
	dl.Dir = debDir
	if out, err := dl.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("image: apt-get download %s=%s: %v\n%s", kpkg, kver, err, out)
	}
	debs, _ := filepath.Glob(filepath.Join(debDir, "*.deb"))
	if len(debs) != 1 {
		return nil, fmt.Errorf("image: apt-get download %s left %d .deb files", kpkg, len(debs))
	}
	x := filepath.Join(tmp, "x")
	if out, err := exec.CommandContext(ctx, "dpkg-deb", "-x", debs[0], x).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("image: dpkg-deb -x: %v\n%s", err, out)
	}
	abi := strings.TrimPrefix(kpkg, "linux-image-")
	// The .deb ships no modules.dep (its postinst runs depmod); build one in
	// the unpacked tree only.
	if out, err := exec.CommandContext(ctx, "depmod", "-b", x, abi).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("image: depmod -b %s %s (install kmod): %v\n%s", x, abi, err, out)
	}
	mdir := filepath.Join(x, "lib", "modules", abi)
	dep, err := os.Open(filepath.Join(mdir, "modules.dep"))
	if err != nil {
		return nil, fmt.Errorf("image: %w", err)
	}
	order, err := moduleLoadOrder(dep, guestModules)
	dep.Close()
	if err != nil {
		return nil, fmt.Errorf("image: %w", err)
	}

	a := newCPIOArchive()
	for _, d := range []string{"bin", "dev", "proc", "sys", "tmp", "mnt", "semfs", "lib/modules", "etc", "root"} {
		a.Dir(d, 0o755)
	}
	a.Dir("tmp", 0o777) // init mounts a mode=1777 tmpfs over it
	a.File("init", 0o755, guestInit)
	a.File("bin/busybox", 0o755, busybox)
	a.File("etc/passwd", 0o644, []byte("root:x:0:0:root:/root:/bin/sh\nuser:x:1000:1000:user:/tmp:/bin/sh\n"))
	a.File("etc/group", 0o644, []byte("root:x:0:\nuser:x:1000:\n"))
	var names []string
	for _, p := range order {
		data, err := os.ReadFile(filepath.Join(mdir, p))
		if err != nil {
			return nil, fmt.Errorf("image: module %s: %w", p, err)
		}
		base := filepath.Base(p)
		if strings.HasSuffix(base, ".xz") { // busybox insmod takes plain .ko
			out, err := exec.CommandContext(ctx, "xz", "-dc", filepath.Join(mdir, p)).Output()
			if err != nil {
				return nil, fmt.Errorf("image: xz -d %s: %w", p, err)
			}
			data, base = out, strings.TrimSuffix(base, ".xz")
		}
		a.File("lib/modules/"+base, 0o644, data)
		names = append(names, base)
	}
	a.File("semfs/modules", 0o644, []byte(strings.Join(names, "\n")+"\n"))

	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	if _, err := a.WriteTo(zw); err != nil {
		return nil, fmt.Errorf("image: cpio: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("image: gzip: %w", err)
	}
	// Zero-pad the compressed stream too: a per-boot overlay archive is
	// appended after it and must start 4-byte aligned.
	if pad := (512 - buf.Len()%512) % 512; pad > 0 {
		buf.Write(make([]byte, pad))
	}
	if err := os.WriteFile(filepath.Join(tmp, "initrd.gz"), buf.Bytes(), 0o644); err != nil {
		return nil, err
	}

	vmlinuz := filepath.Join(x, "boot", "vmlinuz-"+abi)
	pvh, err := extractVmlinux(ctx, vmlinuz, filepath.Join(tmp, "kernel"))
	if err != nil {
		return nil, err
	}
	if !pvh {
		logf("image: no PVH-capable vmlinux in %s; booting the bzImage (slower: xz under TCG)", filepath.Base(vmlinuz))
	}
	os.RemoveAll(x)
	os.RemoveAll(debDir)
	return &Image{
		Kernel: filepath.Join(tmp, "kernel"), Initrd: filepath.Join(tmp, "initrd.gz"),
		KernelPackage: kpkg, KernelVersion: kver, PVH: pvh, Modules: names,
	}, nil
}

// extractVmlinux writes to dst the uncompressed ELF kernel embedded in a
// bzImage when it carries a PVH entry note (XEN_ELFNOTE_PHYS32_ENTRY), which
// QEMU boots directly; this skips ~3 s of xz decompression under TCG.
// Otherwise it copies the bzImage itself and reports false.
func extractVmlinux(ctx context.Context, vmlinuz, dst string) (bool, error) {
	raw, err := os.ReadFile(vmlinuz)
	if err != nil {
		return false, fmt.Errorf("image: %w", err)
	}
	if off := bytes.Index(raw, []byte("\xfd7zXZ\x00")); off >= 0 {
		cmd := exec.CommandContext(ctx, "xz", "-dc", "--single-stream")
		cmd.Stdin = bytes.NewReader(raw[off:])
		out, err := cmd.Output() // trailing bytes after the stream are ignored by --single-stream
		if err == nil && hasPVHNote(out) {
			return true, os.WriteFile(dst, out, 0o644)
		}
	}
	return false, os.WriteFile(dst, raw, 0o644)
}

// hasPVHNote reports whether an ELF image has a Xen note of type 18
// (XEN_ELFNOTE_PHYS32_ENTRY), the entry point QEMU's -kernel uses for ELF.
func hasPVHNote(b []byte) bool {
	f, err := elf.NewFile(bytes.NewReader(b))
	if err != nil {
		return false
	}
	for _, p := range f.Progs {
		if p.Type != elf.PT_NOTE {
			continue
		}
		data := make([]byte, p.Filesz)
		if _, err := p.ReadAt(data, 0); err != nil {
			continue
		}
		for len(data) >= 12 {
			nsz := binary.LittleEndian.Uint32(data[0:])
			dsz := binary.LittleEndian.Uint32(data[4:])
			typ := binary.LittleEndian.Uint32(data[8:])
			n := (12 + int(nsz+3)&^3)
			end := n + int(dsz+3)&^3
			if end > len(data) || int(nsz) > len(data)-12 {
				break
			}
			if typ == 18 && strings.TrimRight(string(data[12:12+nsz]), "\x00") == "Xen" {
				return true
			}
			data = data[end:]
		}
	}
	return false
}

func checkStatic(p string) error {
	f, err := elf.Open(p)
	if err != nil {
		return fmt.Errorf("image: %s: %w", p, err)
	}
	defer f.Close()
	for _, pr := range f.Progs {
		if pr.Type == elf.PT_INTERP {
			return fmt.Errorf("image: %s is dynamically linked (install busybox-static)", p)
		}
	}
	return nil
}

// resolveKernelPackage asks apt (local package lists only) which kernel
// linux-image-amd64 depends on and its candidate version. It runs
// `apt-get update` once only when the lists do not know the package.
func resolveKernelPackage(ctx context.Context, logf func(string, ...any)) (pkg, ver string, err error) {
	if p := os.Getenv("SEMFS_KERNEL_PACKAGE"); p != "" {
		pkg = p
	}
	for attempt := 0; attempt < 2; attempt++ {
		if attempt == 1 {
			logf("image: apt lists do not know the kernel package; running apt-get update")
			if out, err := exec.CommandContext(ctx, "apt-get", "-o", "DPkg::Lock::Timeout=300", "-q", "update").CombinedOutput(); err != nil {
				return "", "", fmt.Errorf("image: apt-get update: %v\n%s", err, out)
			}
		}
		p := pkg
		if p == "" {
			out, _ := output(ctx, "apt-cache", "depends", "linux-image-amd64")
			for _, l := range strings.Split(out, "\n") {
				l = strings.TrimSpace(l)
				if rest, ok := strings.CutPrefix(l, "Depends: "); ok && strings.HasPrefix(rest, "linux-image-") {
					p = rest
					break
				}
			}
		}
		if p == "" {
			continue
		}
		out, _ := output(ctx, "apt-cache", "show", "--no-all-versions", p)
		for _, l := range strings.Split(out, "\n") {
			if v, ok := strings.CutPrefix(l, "Version: "); ok {
				return p, strings.TrimSpace(v), nil
			}
		}
	}
	return "", "", errors.New("image: cannot resolve the kernel package linux-image-amd64 depends on (apt-cache depends/show)")
}

func output(ctx context.Context, name string, args ...string) (string, error) {
	out, err := exec.CommandContext(ctx, name, args...).Output()
	return string(out), err
}

func writeMeta(dir string, img *Image) error {
	m := *img
	m.Dir, m.Kernel, m.Initrd = "", "", ""
	b, _ := json.MarshalIndent(m, "", "  ")
	return os.WriteFile(filepath.Join(dir, "image.json"), b, 0o644)
}

func loadImage(dir string) (*Image, error) {
	b, err := os.ReadFile(filepath.Join(dir, "image.json"))
	if err != nil {
		return nil, err
	}
	var img Image
	if err := json.Unmarshal(b, &img); err != nil {
		return nil, err
	}
	img.Dir, img.Kernel, img.Initrd = dir, filepath.Join(dir, "kernel"), filepath.Join(dir, "initrd.gz")
	for _, f := range []string{img.Kernel, img.Initrd} {
		if st, err := os.Stat(f); err != nil || st.Size() == 0 {
			return nil, fmt.Errorf("image: incomplete cache entry %s", dir)
		}
	}
	return &img, nil
}
