package kernel_test

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// mountInsideBacking mounts a tmpfs at xdev/mnt inside the backing directory
// for protocolChecks; it must run before the daemon starts, whose mount
// namespace (ip netns exec) does not receive later host mounts. "" when mounts
// are not permitted here (a failure under CI=true).
func mountInsideBacking(t *testing.T, d *semfsd) string {
	mp := filepath.Join(d.data, "xdev", "mnt")
	if err := os.MkdirAll(mp, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", mp, "tmpfs", 0, "size=4m,mode=0777"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("mounting a tmpfs inside the backing directory: %v", err)
		}
		t.Logf("mounting a tmpfs inside the backing directory is not permitted here (%v)", err)
		return ""
	}
	t.Cleanup(func() { _ = syscall.Unmount(mp, syscall.MNT_DETACH) })
	return mp
}

// protocolChecks runs issue 14's kernel cases: mv across a mount point inside
// the backing directory (mp, from mountInsideBacking: the server answers
// EXDEV, so mv copies and deletes), and a file replaced under a name another
// client still holds (an open file keeps reading its own data; the held name
// never opens the new file; once let go, a fresh lookup finds it).
func protocolChecks(t *testing.T, h *harness, d *semfsd, mp string) {
	t.Run("proto/mv-across-mount", func(t *testing.T) {
		if mp == "" {
			skipOrFail(t, "no tmpfs inside the backing directory (mount not permitted here)")
		}
		h.step(t, "nfs+9p-tcp", "mv-across-mount", 60*time.Second, `
for m in /mnt/nfs /mnt/9p; do
	n=$(basename $m)
	printf "crossing $n\n" >$m/xdev/src-$n || fail "create over $n"
	mv $m/xdev/src-$n $m/xdev/mnt/dst-$n || fail "mv across a mount point over $n"
	[ ! -e $m/xdev/src-$n ] || fail "source still there after mv over $n"
	eq "$(cat $m/xdev/mnt/dst-$n)" "crossing $n" "content after mv over $n"
done
echo ok`)
		for _, n := range []string{"nfs", "9p"} {
			b, err := os.ReadFile(filepath.Join(mp, "dst-"+n))
			if err != nil || string(b) != fmt.Sprintf("crossing %s\n", n) {
				t.Errorf("host: %s's file on the mounted tmpfs: %q, %v", n, b, err)
			}
		}
	})
	t.Run("proto/small-readdirplus", func(t *testing.T) {
		// rsize=1024 caps the client's READDIRPLUS pages (its dtsize follows
		// rsize), so each page holds two or three of these long names: the
		// server must answer with short pages, never TOOSMALL for a page
		// one entry fits in and never JUKEBOX, which a hard mount retries
		// forever. The listing must come back whole, with attributes.
		h.step(t, "nfs", "small-readdirplus", 90*time.Second, fmt.Sprintf(`
mkdir -p /mnt/nfs/rdp /mnt/small || fail mkdir
long=$(printf '%%0200d' 0)
i=0
while [ $i -lt 40 ]; do : >/mnt/nfs/rdp/$long-$i || fail "create $i"; i=$((i+1)); done
o="$NFS_OPTS_BASE,port=%[1]d,mountport=%[1]d,addr=10.0.2.2,mountaddr=10.0.2.2,rsize=1024,wsize=1024"
timeout 60 mount -t nfs -o "$o" 10.0.2.2:/ /mnt/small || fail "NFS mount with rsize=1024"
grep ' /mnt/small ' /proc/mounts | grep -q 'rsize=1024' || fail "the mount did not take rsize=1024: $(grep ' /mnt/small ' /proc/mounts)"
eq "$(ls /mnt/small/rdp | wc -l)" 40 "names listed through 1 KiB pages"
eq "$(ls -l /mnt/small/rdp | grep -c "^-")" 40 "entries with attributes through 1 KiB pages"
umount /mnt/small || fail umount
echo ok`, nfsPort))
	})
	t.Run("proto/replaced-under-fid", func(t *testing.T) {
		// The NFS mount is the other client: the 9P server hears nothing of
		// its renames.
		h.step(t, "9p-tcp+nfs", "replaced-under-fid", 60*time.Second, `
mkdir -p /mnt/9p/rep/d /mnt/9p/rep/e || fail mkdir
printf own >/mnt/9p/rep/d/f || fail "create over 9P"
exec 3</mnt/9p/rep/d/f || fail "open over 9P"
cd /mnt/9p/rep/e || fail "cd over 9P"
mv /mnt/nfs/rep/d /mnt/nfs/rep/d-old && mkdir /mnt/nfs/rep/d && printf OTHER >/mnt/nfs/rep/d/f || fail "replace d/f over NFS"
mv /mnt/nfs/rep/e /mnt/nfs/rep/e-old && mkdir /mnt/nfs/rep/e || fail "replace e over NFS"
eq "$(cat <&3)" own "read through the fd opened before the replacement"
# v9fs (cache=none) reuses the dentry the open fd pins, so this open goes
# through the old fid: its own file or ESTALE, never the other file.
got=$(cat /mnt/9p/rep/d/f 2>&1)
case "$got" in *OTHER*) fail "an open through the held name read the other file";; esac
echo "open through the held name: $got"
new=$(stat -c %i /mnt/nfs/rep/e)
held=$(stat -c %i . 2>/dev/null) || held=stale
[ "$held" != "$new" ] || fail "the held directory answers as the new one (inode $new)"
echo "held directory: $held (new: $new)"
cd / && exec 3<&-
eq "$(cat /mnt/9p/rep/d/f)" OTHER "a fresh lookup, once the name is let go, finds the new file"
echo ok`)
	})
}
