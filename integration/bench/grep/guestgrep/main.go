// Command guestgrep runs GNU grep through a real Linux kernel NFS client for
// the grep benchmark (integration/bench/grep/bench.py): it boots the QEMU
// guest of integration/kernel inside an existing network namespace, mounts
// the daemon's NFS export there (read only, the kernel's default caching) and
// then, for each request on stdin, runs GNU grep -rl in the guest, cold or
// warm, and answers with its time and the files it listed.
//
//	guestgrep -netns NS -nfs-port PORT -guest SEMFS-GUEST [-dir DIR] [-mem MB]
//
// NS is the namespace the daemon listens in (the guest reaches its
// 127.0.0.1 at 10.0.2.2); SEMFS-GUEST is integration/kernel/guesttool built
// static (CGO_ENABLED=0). Needs root, QEMU and the packages of
// integration/kernel/setup.sh. Protocol, one JSON object per line:
//
//	stdout, once booted  {"ready":true,"bootSeconds":…,"accel":"tcg","grep":"(GNU grep) 3.8",
//	                      "kernel":"linux-image-… VERSION","memMB":2048,"mount":"…"}
//	stdin                {"pattern":"…","fixed":true,"cold":true,"dir":"sub/dir"}   (dir "" = the export root)
//	stdout               {"seconds":…,"status":0,"files":["a/b.txt",…],"stderr":"…"} or {"error":"…"}
//
// "cold" drops the guest's page, dentry and inode caches first (see
// kernel.GrepScript); the daemon's and the host's caches stay warm. At EOF on
// stdin the guest is powered off. Progress and errors go to stderr.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/semfs/semfs/integration/kernel"
)

// request is one grep to run in the guest.
type request struct {
	Pattern string `json:"pattern"`
	Fixed   bool   `json:"fixed"`
	Cold    bool   `json:"cold"`
	Dir     string `json:"dir"`
}

// mnt is where the guest mounts the export.
const mnt = "/mnt/nfs"

func main() {
	netns := flag.String("netns", "", "network namespace the daemon's NFS server listens in (required)")
	port := flag.Int("nfs-port", 0, "the daemon's NFS port on that namespace's 127.0.0.1 (required)")
	guest := flag.String("guest", "", "the static guest helper, integration/kernel/guesttool (required)")
	dir := flag.String("dir", "", "run directory (console.log, qemu.log); default a new one under /tmp")
	mem := flag.Int("mem", 2048, "guest memory in MiB: the warm runs need the searched files in its page cache")
	stepTimeout := flag.Duration("step-timeout", 30*time.Minute, "the longest one grep may take in the guest")
	flag.Parse()
	if *netns == "" || *port <= 0 || *guest == "" || flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(*netns, *port, *guest, *dir, *mem, *stepTimeout); err != nil {
		fmt.Fprintln(os.Stderr, "guestgrep:", err)
		os.Exit(1)
	}
}

func run(netns string, port int, guestBin, dir string, mem int, stepTimeout time.Duration) error {
	ctx := context.Background()
	logf := func(f string, a ...any) { fmt.Fprintf(os.Stderr, "guestgrep: "+f+"\n", a...) }
	if dir == "" {
		d, err := os.MkdirTemp("", "semfsgg-") // short: unix socket paths are limited to 108 bytes
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		dir = d
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	helper, err := os.ReadFile(guestBin)
	if err != nil {
		return err
	}
	img, err := kernel.BuildImage(ctx, kernel.ImageConfig{Logf: logf})
	if err != nil {
		return err
	}
	files, version, err := kernel.GNUGrep(ctx)
	if err != nil {
		return err
	}
	files["guest"] = kernel.OverlayFile{Mode: 0o755, Data: helper}
	accel := kernel.Accel()
	vm, err := kernel.Boot(ctx, kernel.VMConfig{
		Image: img, Netns: &kernel.Netns{Name: netns}, Dir: dir, Files: files, MemMB: mem, Accel: accel,
	})
	if err != nil {
		return err
	}
	defer vm.Close()
	opts := fmt.Sprintf("vers=3,proto=tcp,mountproto=tcp,nolock,noacl,ro,port=%[1]d,mountport=%[1]d,addr=10.0.2.2,mountaddr=10.0.2.2", port)
	res, err := vm.Run(ctx, "mount", 2*time.Minute, fmt.Sprintf("mkdir -p %s && timeout 60 mount -t nfs -o %s 10.0.2.2:/ %s && %s --version | head -1", mnt, opts, mnt, kernel.GuestGrep))
	if err != nil {
		return err
	}
	if res.Status != 0 {
		return fmt.Errorf("NFS mount in the guest: exit %d: %s\n%s", res.Status, res.Output, vm.ConsoleTail(20))
	}
	if got := strings.TrimSpace(res.Output); !strings.HasSuffix(got, " "+version) {
		return fmt.Errorf("GNU grep in the guest says %q, the host's %q (shared objects missing?)", got, version)
	}
	out := json.NewEncoder(os.Stdout)
	out.Encode(map[string]any{"ready": true, "bootSeconds": vm.BootTime.Seconds(), "accel": accel, "grep": version,
		"kernel": img.KernelPackage + " " + img.KernelVersion, "memMB": mem,
		"mount": "mount -t nfs -o " + opts + " 10.0.2.2:/ " + mnt})

	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; in.Scan(); n++ {
		var req request
		if err := json.Unmarshal(in.Bytes(), &req); err != nil || req.Pattern == "" {
			out.Encode(map[string]string{"error": fmt.Sprintf("bad request %q: %v", in.Text(), err)})
			continue
		}
		d := path.Clean("/" + req.Dir)
		if strings.Contains(req.Dir, "..") {
			out.Encode(map[string]string{"error": fmt.Sprintf("bad dir %q", req.Dir)})
			continue
		}
		res, err := vm.Run(ctx, fmt.Sprintf("grep-%d", n), stepTimeout, kernel.GrepScript(filepath.Join(mnt, d), req.Pattern, req.Fixed, req.Cold))
		if err != nil {
			return err // the guest is gone: nothing later can run
		}
		if res.Status != 0 {
			out.Encode(map[string]string{"error": fmt.Sprintf("grep step: exit %d: %.2000s", res.Status, res.Output)})
			continue
		}
		r, err := kernel.ParseGrep(res.Output)
		if err != nil {
			out.Encode(map[string]string{"error": err.Error()})
			continue
		}
		if r.Files == nil {
			r.Files = []string{}
		}
		out.Encode(r)
	}
	return in.Err()
}
