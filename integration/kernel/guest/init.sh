#!/bin/busybox sh
# semfs kernel-harness guest init (PID 1).
#
# Loads the modules listed in /semfs/modules, brings up eth0 (SLIRP, static
# 10.0.2.15, the host's netns loopback is 10.0.2.2), then serves the host's
# step protocol on the virtio-serial port named "semfs.ctl":
#
#   host -> guest   "STEP <id> <timeout-seconds> <nbytes>\n" then <nbytes> of sh script
#   guest -> host   the script's stdout+stderr, streamed, then
#                   "\n@@SEMFS-END-<nonce> <id> <exit status>\n"
#   host -> guest   "POWEROFF\n"
#
# The guest announces itself with "@@SEMFS-READY-<nonce>" on the port. Fatal
# set-up errors go to the serial console as "SEMFS-FATAL-<nonce>: why" and the
# guest powers off; the host reads the console log. Steps run with stdin from
# /dev/null; a step's background jobs must redirect their output (they would
# otherwise write into a later step's output).
/bin/busybox --install -s /bin
export PATH=/bin HOME=/root TERM=dumb
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs -o mode=1777 tmpfs /tmp
nonce=unknown
for a in $(cat /proc/cmdline); do
	case $a in semfs.nonce=*) nonce=${a#semfs.nonce=} ;; esac
done
say() { echo "SEMFS: [$(cut -d' ' -f1 /proc/uptime)] $*"; }
die() {
	echo "SEMFS-FATAL-$nonce: $*"
	sync
	poweroff -f
	sleep 10
}
say "init started"
for m in $(cat /semfs/modules); do
	insmod "/lib/modules/$m" 2>/tmp/insmod.err || die "insmod $m: $(cat /tmp/insmod.err)"
done
say "modules loaded"
ip link set lo up
i=0
while [ ! -e /sys/class/net/eth0 ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
ip link set eth0 up && ip addr add 10.0.2.15/24 dev eth0 && ip route add default via 10.0.2.2 ||
	die "network: no eth0"
say "eth0 10.0.2.15/24 up"

# Find a virtio-serial port by name (bounded wait for udev-less /dev nodes).
port() {
	j=0
	while [ $j -lt 100 ]; do
		for n in /sys/class/virtio-ports/*/name; do
			[ -f "$n" ] && [ "$(cat "$n")" = "$1" ] || continue
			d=/dev/$(basename "$(dirname "$n")")
			[ -c "$d" ] && { echo "$d"; return 0; }
		done
		sleep 0.1
		j=$((j + 1))
	done
	return 1
}
ctl=$(port semfs.ctl) || die "no virtio-serial port semfs.ctl"
p9=$(port semfs.9p) && ln -s "$p9" /dev/semfs-9p
say "control port $ctl, 9p port ${p9:-none}"

# A virtio port can be opened only once (EBUSY): fd 7 is the one descriptor.
exec 7<>"$ctl"
printf '@@SEMFS-READY-%s\n' "$nonce" >&7
mkdir -p /tmp/steps
while read -r cmd id tmo len <&7; do
	case $cmd in
	STEP)
		head -c "$len" <&7 >"/tmp/steps/$id.sh"
		(cd /tmp && exec timeout -s KILL "$tmo" sh "/tmp/steps/$id.sh") </dev/null >&7 2>&1 7>&-
		rc=$?
		printf '\n@@SEMFS-END-%s %s %s\n' "$nonce" "$id" "$rc" >&7
		;;
	POWEROFF)
		break
		;;
	*)
		printf '\n@@SEMFS-BAD-%s %s\n' "$nonce" "$cmd" >&7
		;;
	esac
done
say "powering off"
sync
poweroff -f
sleep 10
