package kernel

import (
	"bufio"
	"fmt"
	"io"
	"path"
	"strings"
)

// guestModules are the kernel modules the guest needs, in the order asked for.
// Their dependencies are resolved from the kernel package's modules.dep (see
// moduleLoadOrder); nothing else is copied into the image or loaded.
//
//	virtio_pci + virtio_net       the SLIRP NIC (virtio-net-pci, no option ROM)
//	virtio_console                virtio-serial ports: control channel, 9P fd bridge
//	nfsv3                         the NFSv3 client (pulls sunrpc, lockd, nfs, ...)
//	9p + 9pnet_fd                 v9fs; 9pnet_fd provides trans=tcp/unix/fd
var guestModules = []string{"virtio_pci", "virtio_net", "virtio_console", "nfsv3", "9p", "9pnet_fd"}

// moduleLoadOrder resolves want against a modules.dep file and returns the
// module paths (relative to the modules directory) in an order insmod can load
// them: every module after all of its dependencies. modules.dep lists a
// module's dependencies so that loading them in reverse order works (as
// modprobe does); each module is listed once.
func moduleLoadOrder(modulesDep io.Reader, want []string) ([]string, error) {
	deps := map[string][]string{} // module name -> [its path, deps...]
	sc := bufio.NewScanner(modulesDep)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		i := strings.IndexByte(line, ':')
		if i < 0 {
			continue
		}
		p := line[:i]
		deps[moduleName(p)] = append([]string{p}, strings.Fields(line[i+1:])...)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read modules.dep: %w", err)
	}
	var order []string
	seen := map[string]bool{}
	for _, m := range want {
		e, ok := deps[strings.ReplaceAll(m, "-", "_")]
		if !ok {
			return nil, fmt.Errorf("module %q is not in modules.dep", m)
		}
		seq := make([]string, 0, len(e))
		for i := len(e) - 1; i >= 1; i-- {
			seq = append(seq, e[i])
		}
		seq = append(seq, e[0])
		for _, p := range seq {
			if !seen[p] {
				seen[p] = true
				order = append(order, p)
			}
		}
	}
	return order, nil
}

// moduleName turns "kernel/fs/nfs/nfsv3.ko" (or .ko.xz) into "nfsv3",
// normalising "-" to "_" as the kernel does.
func moduleName(p string) string {
	b := path.Base(p)
	if i := strings.Index(b, ".ko"); i >= 0 {
		b = b[:i]
	}
	return strings.ReplaceAll(b, "-", "_")
}
