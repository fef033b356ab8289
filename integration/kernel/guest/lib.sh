# semfs kernel battery: shell functions every step sources (/semfs/lib.sh).
# Busybox sh in the guest. Each function checks one thing through one mount
# and prints "FAIL: ..." and exits non-zero at the first wrong answer; the
# host names the mount and the step and shows this output.
G=/semfs/guest
NFS_OPTS_BASE="vers=3,proto=tcp,mountproto=tcp,nolock,noacl"
NINEP_OPTS_BASE="version=9p2000.L,msize=1048576"

fail() { echo "FAIL: $*"; exit 1; }
# eq GOT WANT WHAT
eq() { [ "$1" = "$2" ] || fail "$3: got '$1', want '$2'"; }
run() { "$@" || fail "exit $?: $*"; }

# mount_nfs EXPORT MNT PORT: busybox mount has no userspace NFS helper, so the
# kernel does the MOUNT call itself and needs addr= and mountaddr=.
mount_nfs() {
	mkdir -p "$2"
	o="$NFS_OPTS_BASE,port=$3,mountport=$3,addr=10.0.2.2,mountaddr=10.0.2.2"
	echo "mount -t nfs -o $o 10.0.2.2:$1 $2"
	timeout 60 mount -t nfs -o "$o" "10.0.2.2:$1" "$2" || fail "NFS mount of $1 failed"
}

# mount_9p_tcp ANAME MNT PORT
mount_9p_tcp() {
	mkdir -p "$2"
	o="trans=tcp,port=$3,$NINEP_OPTS_BASE,aname=$1"
	echo "mount -t 9p -o $o 10.0.2.2 $2"
	timeout 60 mount -t 9p -o "$o" 10.0.2.2 "$2" || fail "9P/TCP mount of $1 failed"
}

# mount_9p_fd ANAME MNT: 9P over the virtio-serial port "semfs.9p", whose
# host side is the daemon's --9p-socket. trans=fd cannot use the port
# directly (virtio_console has no read_iter/write_iter, so the kernel's
# kernel_read/kernel_write refuse it, EINVAL) and the port opens only once
# (EBUSY): one O_RDWR descriptor is relayed by two cat processes to two FIFOs
# which the mount uses as rfdno/wfdno.
#
# The kernel gets the rx FIFO read-only, with the relay as its only writer:
# when the daemon goes away the port reads EOF, the relay exits, the kernel
# reads EOF and marks the 9P client disconnected (EIO from then on, and a
# clean umount), as a TCP mount does. With an O_RDWR rx the kernel would be a
# writer itself, never see EOF, and hang in every later request.
mount_9p_fd() {
	mkdir -p "$2"
	tag=9pfd.$$
	[ -e /dev/semfs-9p ] || fail "no virtio-serial port semfs.9p"
	mkfifo "/tmp/$tag.rx" "/tmp/$tag.tx" || fail mkfifo
	exec 5<>/dev/semfs-9p || fail "open /dev/semfs-9p"
	exec 4<>"/tmp/$tag.tx" || fail "open tx FIFO"
	# A 9P message larger than the pipe buffer (64 KiB by default) stalls
	# trans=fd for good on Linux 6.1 (a 1 MiB-msize Twrite never completes;
	# msize=65536 works). Grow both pipes beyond msize; a pipe keeps its size
	# while anything holds it open.
	echo 4194304 >/proc/sys/fs/pipe-max-size
	$G pipesize "/tmp/$tag.tx" 2097152 >/dev/null || fail "grow the tx FIFO"
	cat <"/tmp/$tag.tx" >&5 4>&- 2>/dev/null &
	echo $! >/tmp/9pfd.relays
	cat <&5 >"/tmp/$tag.rx" 4>&- 2>/dev/null &
	echo $! >>/tmp/9pfd.relays
	exec 3<"/tmp/$tag.rx" || fail "open rx FIFO"
	$G pipesize "/tmp/$tag.rx" 2097152 >/dev/null || fail "grow the rx FIFO"
	o="trans=fd,rfdno=3,wfdno=4,$NINEP_OPTS_BASE,aname=$1"
	echo "mount -t 9p -o $o semfs9p $2  (fd 3,4 = FIFOs relayed to /dev/semfs-9p)"
	timeout 60 mount -t 9p -o "$o" semfs9p "$2" || fail "9P/fd mount of $1 failed"
	exec 3<&- 4>&- 5>&-
}

# retire_9p_fd MNT: stop the relays of a 9P/fd mount (its client then sees
# EOF and fails every request) and detach it, so that a new mount over the
# (reconnected) port starts a clean byte stream. It prints what reading
# restart/old.txt through the old mount gives once the relays are gone.
retire_9p_fd() {
	[ -f /tmp/9pfd.relays ] && kill $(cat /tmp/9pfd.relays) 2>/dev/null
	rm -f /tmp/9pfd.relays
	echo "old 9P/fd mount after its relays stopped: $(timeout -s KILL 20 cat "$1/restart/old.txt" 2>&1 || echo killed)"
	timeout -s KILL 30 umount -l "$1" || fail "umount -l $1"
}

# ---------------------------------------------------------------- battery
# Every function takes the directory to work in (fresh, on the mount).

b_rw() {
	d=$1
	printf 'alpha\n' >"$d/rw.txt" || fail "create+write"
	eq "$(cat "$d/rw.txt")" alpha "read after write"
	printf 'beta\n' >>"$d/rw.txt" || fail append
	eq "$(tr '\n' , <"$d/rw.txt")" "alpha,beta," "read after append"
	eq "$(stat -c %s "$d/rw.txt")" 11 "size after append"
	printf 'ALPHA' | dd of="$d/rw.txt" conv=notrunc 2>/dev/null || fail "overwrite in place"
	eq "$(tr '\n' , <"$d/rw.txt")" "ALPHA,beta," "read after overwrite"
	echo "rw ok"
}

b_excl() {
	d=$1
	$G excl "$d/excl"
	eq $? 0 "first O_CREAT|O_EXCL create (exit status)"
	$G excl "$d/excl" 2>/dev/null
	eq $? 17 "second O_CREAT|O_EXCL create must fail with EEXIST (exit status)"
	printf x >"$d/excl2"
	$G excl "$d/excl2" 2>/dev/null
	eq $? 17 "O_EXCL over a written file (exit status)"
	eq "$(cat "$d/excl2")" x "O_EXCL failure must leave the file alone"
	echo "excl ok"
}

b_truncate() {
	d=$1
	$G pattern trunc 100 >"$d/t" || fail "write 100 bytes"
	truncate -s 1000 "$d/t" || fail "truncate up"
	eq "$(stat -c %s "$d/t")" 1000 "size after truncate up"
	eq "$(head -c 100 "$d/t" | md5sum | cut -c1-32)" "$($G pattern trunc 100 | md5sum | cut -c1-32)" "first 100 bytes after truncate up"
	eq "$(tail -c 900 "$d/t" | tr -d '\000' | wc -c)" 0 "bytes 100..999 must read as zeros"
	truncate -s 10 "$d/t" || fail "truncate down"
	eq "$(stat -c %s "$d/t")" 10 "size after truncate down"
	eq "$(md5sum <"$d/t" | cut -c1-32)" "$($G pattern trunc 10 | md5sum | cut -c1-32)" "content after truncate down"
	: >"$d/t" || fail "truncate to 0 with O_TRUNC"
	eq "$(stat -c %s "$d/t")" 0 "size after O_TRUNC"
	echo "truncate ok"
}

# b_big DIR SEED MD5: 16 MiB written through the mount; the host checks the
# backing file's checksum too.
b_big() {
	$G pattern "$2" 16777216 >"$1/big.bin" || fail "16 MiB write"
	sync
	eq "$(stat -c %s "$1/big.bin")" 16777216 "size of the 16 MiB file"
	echo 3 >/proc/sys/vm/drop_caches
	# dd bs=1M: with 9P cache=none every read() is one Tread; md5sum alone
	# reads 4 KiB at a time (4096 round trips under TCG).
	eq "$(dd if="$1/big.bin" bs=1M 2>/dev/null | md5sum | cut -c1-32)" "$3" "md5 of the 16 MiB file read back"
	echo "big ok"
}

b_mkdirp() {
	d=$1
	mkdir -p "$d/l1/l2/l3/l4/l5" || fail "mkdir -p of 5 levels"
	[ -d "$d/l1/l2/l3/l4/l5" ] || fail "l5 is not a directory"
	printf deep >"$d/l1/l2/l3/l4/l5/f" || fail "create at depth 5"
	eq "$(cat "$d/l1/l2/l3/l4/l5/f")" deep "read at depth 5"
	mkdir -p "$d/l1/l2/l3/l4/l5" || fail "mkdir -p of an existing path"
	eq "$(find "$d/l1" -type d | wc -l)" 5 "directories under l1"
	echo "mkdirp ok"
}

b_rename() {
	d=$1
	printf one >"$d/a" && mv "$d/a" "$d/b" || fail "rename file"
	[ ! -e "$d/a" ] || fail "old name still exists after rename"
	eq "$(cat "$d/b")" one "content after rename"
	printf new >"$d/src" && printf old >"$d/dst" || fail "create src/dst"
	mv -f "$d/src" "$d/dst" || fail "rename over an existing file"
	eq "$(cat "$d/dst")" new "content after rename over existing file"
	[ ! -e "$d/src" ] || fail "source still exists after rename over existing"
	mkdir -p "$d/dir1/sub" && printf in1 >"$d/dir1/f1" && printf in2 >"$d/dir1/sub/f2" || fail "build dir1"
	mv "$d/dir1" "$d/dir2" || fail "rename a non-empty directory"
	[ ! -e "$d/dir1" ] || fail "dir1 still exists"
	eq "$(cat "$d/dir2/f1")$(cat "$d/dir2/sub/f2")" in1in2 "contents of the renamed directory"
	mkdir "$d/other" && mv "$d/dir2/sub/f2" "$d/other/f2" || fail "rename across directories"
	eq "$(cat "$d/other/f2")" in2 "content after cross-directory rename"
	mv "$d/dir2/sub" "$d/other/sub" || fail "move a directory into another"
	[ -d "$d/other/sub" ] && [ ! -e "$d/dir2/sub" ] || fail "directory move"
	echo "rename ok"
}

b_links() {
	d=$1
	printf linked >"$d/f" || fail create
	ln "$d/f" "$d/h" || fail "hard link"
	eq "$(stat -c %h "$d/f")" 2 "nlink after hard link"
	eq "$(stat -c %i "$d/h")" "$(stat -c %i "$d/f")" "inode of the hard link"
	printf more >>"$d/h" || fail "append through the link"
	eq "$(cat "$d/f")" linkedmore "content seen through the other name"
	rm "$d/f" || fail "unlink first name"
	eq "$(cat "$d/h")" linkedmore "content after unlinking the first name"
	eq "$(stat -c %h "$d/h")" 1 "nlink after unlink"
	ln -s h "$d/s" || fail symlink
	eq "$(readlink "$d/s")" h "readlink"
	eq "$(cat "$d/s")" linkedmore "read through the symlink"
	ln -s ../no/such/target "$d/dangling" || fail "dangling symlink"
	eq "$(readlink "$d/dangling")" ../no/such/target "readlink of a dangling symlink"
	[ -L "$d/dangling" ] || fail "lstat of the dangling symlink"
	echo "links ok"
}

b_chmod_times() {
	d=$1
	printf x >"$d/m" || fail create
	chmod 640 "$d/m" || fail chmod
	eq "$(stat -c %a "$d/m")" 640 "mode after chmod 640"
	chmod 755 "$d/m" || fail chmod
	eq "$(stat -c %a "$d/m")" 755 "mode after chmod 755"
	mkdir "$d/md" && chmod 700 "$d/md" || fail "chmod dir"
	eq "$(stat -c %a "$d/md")" 700 "directory mode"
	touch -d '2001-02-03 04:05:06' "$d/m" || fail "touch -d"
	eq "$(stat -c %Y "$d/m")" 981173106 "mtime after touch -d"
	eq "$(stat -c %X "$d/m")" 981173106 "atime after touch -d"
	now=$(date +%s)
	touch "$d/m" || fail "touch (now)"
	m=$(stat -c %Y "$d/m")
	[ $((m - now)) -le 300 ] && [ $((now - m)) -le 300 ] || fail "mtime after touch: $m, guest clock $now"
	echo "chmod+times ok"
}

# b_ls DIR N: DIR holds f00000..f<N-1>, file i of size (i*7)%101 (made by the
# host); `ls -l` must list every one with its size. (Leading zeros are cut
# before awk converts: busybox awk reads "00010" as octal.)
b_ls() {
	r=$(ls -l "$1" | awk -v n="$2" '
		NR == 1 && /^total/ { next }
		{ c++; s = $9; sub(/^f0*/, "", s); i = (s == "" ? 0 : s + 0); seen[i]++
		  if ($5 != (i * 7) % 101) { bad++; if (bad < 5) print "wrong size: " $0 } }
		END { miss = 0; for (i = 0; i < n; i++) if (seen[i] != 1) miss++
		      print "entries=" c+0 " wrongsize=" bad+0 " missing_or_dup=" miss }')
	echo "$r"
	case $r in *"entries=$2 wrongsize=0 missing_or_dup=0") echo "ls ok" ;; *) fail "ls -l of $1" ;; esac
}

b_rmr() {
	d=$1
	mkdir -p "$d/tree/a/b" "$d/tree/c" || fail "build tree"
	for i in 1 2 3 4 5; do printf $i >"$d/tree/f$i"; printf $i >"$d/tree/a/b/g$i"; done
	ln -s ../f1 "$d/tree/c/link" || fail symlink
	rm -r "$d/tree" || fail "rm -r"
	[ ! -e "$d/tree" ] || fail "tree still exists after rm -r"
	echo "rm -r ok"
}

b_df() {
	df -kP "$1" || fail "df"
	s=$(df -kP "$1" | awk 'NR == 2 { print $2 }')
	[ -n "$s" ] && [ "$s" -gt 0 ] || fail "df reports size '$s'"
	echo "df ok"
}

# b_concurrent DIR: 4 background shells append 100 numbered lines each to
# their own file; every file must hold exactly its lines, in order.
b_concurrent() {
	d=$1
	for w in 1 2 3 4; do
		(for i in $(seq 100); do echo "w$w $i" >>"$d/conc$w"; done) >/dev/null 2>&1 &
	done
	wait
	for w in 1 2 3 4; do
		eq "$(wc -l <"$d/conc$w")" 100 "lines in conc$w"
		eq "$(md5sum <"$d/conc$w" | cut -c1-32)" "$(for i in $(seq 100); do echo "w$w $i"; done | md5sum | cut -c1-32)" "content of conc$w"
	done
	echo "concurrent ok"
}
