package conformance

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Suite is a built pjdfstest: its static binary and its patched tests.
type Suite struct {
	Dir   string   // the build directory (a copy of the source)
	Files []string // counted test files relative to tests/, e.g. "chown/07.t", sorted
}

// Excluded reports whether a test file is neither run nor counted: mknod/
// and unlink/00.t create block and character devices outright.
func Excluded(file string) bool {
	return strings.HasPrefix(file, "mknod/") || file == "unlink/00.t"
}

// typeLoop matches the suite's loops over file types ("for type in regular
// dir fifo block char socket symlink; do" and type2, type3).
var typeLoop = regexp.MustCompile(`(?m)^([ \t]*for type[0-9]* in [^;\n]*)`)
var deviceTypes = regexp.MustCompile(`[ \t]+(block|char)\b`)

// PatchTypeLoops removes block and char from every file-type loop of a test
// script: device nodes are refused by design, and every loop would otherwise
// fail on them. It returns the patched script and how many loops changed.
func PatchTypeLoops(script string) (string, int) {
	n := 0
	out := typeLoop.ReplaceAllStringFunc(script, func(loop string) string {
		p := deviceTypes.ReplaceAllString(loop, "")
		if p != loop {
			n++
		}
		return p
	})
	return out, n
}

// BuildSuite copies pjdfstest's unmodified source src to dst, builds a static
// binary there (autoreconf -ifs && ./configure && make LDFLAGS=-static; the
// guest has no libc) and patches the copied tests' type loops.
func BuildSuite(ctx context.Context, src, dst string) (*Suite, error) {
	if err := os.RemoveAll(dst); err != nil {
		return nil, err
	}
	if out, err := exec.CommandContext(ctx, "cp", "-r", src, dst).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("pjdfstest: copy %s: %v: %s", src, err, out)
	}
	// The source may be read-only (a shared, write-protected copy).
	if out, err := exec.CommandContext(ctx, "chmod", "-R", "u+w", dst).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("pjdfstest: chmod: %v: %s", err, out)
	}
	for _, argv := range [][]string{{"autoreconf", "-ifs"}, {"./configure"}, {"make", "LDFLAGS=-static"}} {
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		cmd.Dir = dst
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("pjdfstest: %s in %s: %v\n%s", strings.Join(argv, " "), dst, err, lastLines(string(out), 20))
		}
	}
	s := &Suite{Dir: dst}
	patched := 0
	err := filepath.WalkDir(filepath.Join(dst, "tests"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".t") {
			return err
		}
		rel, _ := filepath.Rel(filepath.Join(dst, "tests"), p)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out, n := PatchTypeLoops(string(b))
		patched += n
		if n > 0 {
			if err := os.WriteFile(p, []byte(out), 0o755); err != nil {
				return err
			}
		}
		if !Excluded(rel) {
			s.Files = append(s.Files, rel)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("pjdfstest: patch tests: %w", err)
	}
	if patched == 0 || len(s.Files) == 0 {
		return nil, fmt.Errorf("pjdfstest: %d test files, %d type loops patched: not the expected tree at %s", len(s.Files), patched, src)
	}
	sort.Strings(s.Files)
	return s, nil
}

// GuestFile is a file the guest gets under /semfs/.
type GuestFile struct {
	Mode fs.FileMode
	Data []byte
}

// opensslShim stands in for `openssl md5` (namegen in tests/misc.sh) with
// busybox's md5sum: the guest has no openssl, and misc.sh keeps only the
// last field of the line.
const opensslShim = "#!/bin/sh\nmd5sum | cut -d' ' -f1\n"

// GuestFiles are the files the guest needs, relative to /semfs/: the binary
// at pjd/pjdfstest (misc.sh finds it by walking up from the test), the
// patched tests under pjd/tests/ and the openssl shim in pjd/bin/.
func (s *Suite) GuestFiles() (map[string]GuestFile, error) {
	files := map[string]GuestFile{"pjd/bin/openssl": {Mode: 0o755, Data: []byte(opensslShim)}}
	bin, err := os.ReadFile(filepath.Join(s.Dir, "pjdfstest"))
	if err != nil {
		return nil, err
	}
	files["pjd/pjdfstest"] = GuestFile{Mode: 0o755, Data: bin}
	err = filepath.WalkDir(filepath.Join(s.Dir, "tests"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(s.Dir, p)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		files["pjd/"+rel] = GuestFile{Mode: 0o755, Data: b}
		return nil
	})
	return files, err
}

// GuestScript is the guest step that runs one test file as root in a fresh
// directory on the mount at mnt.
func GuestScript(mnt, file string) string {
	d := mnt + "/pjd." + strings.NewReplacer("/", "_", ".t", "").Replace(file)
	return fmt.Sprintf(`export PATH=/semfs/pjd/bin:$PATH
mkdir -p %[1]s && chmod 0755 %[1]s && cd %[1]s || { echo "cannot enter %[1]s"; exit 90; }
sh /semfs/pjd/tests/%[2]s 2>&1
`, d, file)
}

// DeviceScript asks pjdfstest, as root, for a block and a character device
// on the mount and prints the answers (0 or the errno's name).
func DeviceScript(mnt string) string {
	return fmt.Sprintf(`cd %s || exit 90
for t in b c; do
	echo "mknod $t 1 2: $(/semfs/pjd/pjdfstest mknod pjd.dev.$t $t 0644 1 2 2>&1 | tail -1)"
	rm -f pjd.dev.$t
done
`, mnt)
}

// GuestSetup prepares the guest once per boot: the user database that
// utimensat/06.t and 07.t read (`id -u nobody`): the harness's /etc/passwd
// has only root and user, so nobody (65534) and nogroup are added as Debian
// has them.
const GuestSetup = `mkdir -p /etc
grep -q '^nobody:' /etc/passwd 2>/dev/null || echo 'nobody:x:65534:65534:nobody:/nonexistent:/bin/false' >>/etc/passwd
grep -q '^nogroup:' /etc/group 2>/dev/null || echo 'nogroup:x:65534:' >>/etc/group
echo "nobody is uid $(id -u nobody) gid $(id -g nobody)"
`

// MountNFS is the guest command that mounts export over NFSv3/TCP. Busybox's
// mount has no NFS helper: the kernel does the MOUNT call itself, at
// mountport (semfs serves MOUNT on the NFS port, ganesha on its own).
func MountNFS(export, mnt string, port, mountport int) string {
	o := fmt.Sprintf("vers=3,proto=tcp,mountproto=tcp,nolock,noacl,port=%d,mountport=%d,addr=10.0.2.2,mountaddr=10.0.2.2", port, mountport)
	return fmt.Sprintf("mkdir -p %[1]s && timeout 60 mount -t nfs -o %[2]s 10.0.2.2:%[3]s %[1]s || { echo 'NFS mount of %[3]s failed'; exit 1; }", mnt, o, export)
}

// Mount9P is the guest command that mounts aname over 9P2000.L/TCP, with the
// kernel's defaults otherwise (access=user: one attach per uid, cache=none).
func Mount9P(aname, mnt string, port int) string {
	o := fmt.Sprintf("trans=tcp,port=%d,version=9p2000.L,msize=1048576,aname=%s", port, aname)
	return fmt.Sprintf("mkdir -p %[1]s && timeout 60 mount -t 9p -o %[2]s 10.0.2.2 %[1]s || { echo '9P mount of %[3]s failed'; exit 1; }", mnt, o, aname)
}

// GaneshaConf is nfs-ganesha's configuration for the peer run (from
// ../shared/peers/ganesha.conf): NFSv3 over TCP only, VFS FSAL, no root
// squash, no NLM. No Bind_addr: inside the harness's namespace (only lo)
// getaddrinfo refuses "127.0.0.1" (AI_ADDRCONFIG sees no configured
// address), and the namespace is isolated anyway.
func GaneshaConf(export string, port, mountport int) string {
	return fmt.Sprintf(`NFS_CORE_PARAM {
    NFS_Port = %d;
    MNT_Port = %d;
    NLM_Port = %d;
    Rquota_Port = %d;
    Protocols = 3;
    Enable_NLM = false;
    Enable_RQUOTA = false;
    Enable_UDP = false;
}
NFSV4 { Graceless = true; }
EXPORT_DEFAULTS { Access_Type = RW; Squash = No_Root_Squash; }
EXPORT {
    Export_Id = 1;
    Path = %s;
    Pseudo = /exp-ganesha;
    Access_Type = RW;
    Squash = No_Root_Squash;
    Protocols = 3;
    Transports = TCP;
    SecType = sys;
    FSAL { Name = VFS; }
}
LOG { Default_Log_Level = EVENT; }
`, port, mountport, mountport+1, mountport+2, export)
}

// Report lists, per test file with failures, the failed assertion numbers
// and the first failure lines (what was tried, expected, got): what the
// engineer fixing them reads.
func (rs Results) Report(header ...string) string {
	var b strings.Builder
	for _, h := range header {
		fmt.Fprintf(&b, "# %s\n", h)
	}
	failed, ran := rs.Total()
	fmt.Fprintf(&b, "# %d of %d assertions failed\n", failed, ran)
	for _, f := range rs.Files() {
		r := rs[f]
		if len(r.Failed) == 0 && r.Note == "" {
			continue
		}
		fmt.Fprintf(&b, "%s: %s", f, joinInts(r.Failed, " "))
		if r.Note != "" {
			fmt.Fprintf(&b, " (%s after %d assertions)", r.Note, r.Ran)
		}
		b.WriteByte('\n')
		for i, n := range r.Failed {
			if i == 8 {
				fmt.Fprintf(&b, "    ... %d more\n", len(r.Failed)-i)
				break
			}
			fmt.Fprintf(&b, "    %s\n", Elide(r.Lines[n]))
		}
	}
	return b.String()
}

// longWord is a run of non-blank characters too long to read: the *_03.t
// files try names of NAME_MAX and paths near PATH_MAX.
var longWord = regexp.MustCompile(`[^ ]{100,}`)

// Elide shortens long names and paths in a failure line to their first 40
// and last 16 bytes and their length.
func Elide(line string) string {
	return longWord.ReplaceAllStringFunc(line, func(w string) string {
		return fmt.Sprintf("%s…[%d bytes]…%s", w[:40], len(w), w[len(w)-16:])
	})
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
