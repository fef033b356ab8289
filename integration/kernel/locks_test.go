package kernel_test

import (
	"strings"
	"testing"
	"time"
)

// ninepLocks: fcntl and flock locks taken through one 9P/TCP mount (/mnt/9p)
// are reported and honoured through another (/mnt/editor, a second
// connection), which exercises the shim's Tgetlock (ninep/conn.go: p9 does
// not know the message and would answer EIO, so F_GETLK would fail). Also
// what the 9P battery leaves out: a FIFO made through the mount and a script
// executed from it.
func ninepLocks(t *testing.T, h *harness) {
	out := h.step(t, "9p-tcp+editor", "locks", 90*time.Second, `
mkdir -p /mnt/9p/locks || fail "mkdir"
echo data >/mnt/9p/locks/lf || fail "write"
run $G locks /mnt/9p/locks/lf /mnt/editor/locks/lf
mkfifo /mnt/9p/locks/ff || fail "mkfifo"
[ -p /mnt/editor/locks/ff ] || fail "FIFO not a FIFO through the other mount"
printf '#!/bin/sh\necho ran-from-9p\n' >/mnt/9p/locks/s.sh || fail "write script"
chmod +x /mnt/9p/locks/s.sh || fail "chmod +x"
eq "$(/mnt/editor/locks/s.sh)" ran-from-9p "script executed from 9P"
rm -r /mnt/9p/locks || fail "rm -r"`)
	if !strings.Contains(out, "locks ok") {
		t.Errorf("the lock checks did not report success:\n%s", out)
	}
}
