#!/usr/bin/env bash
# Manual check of ninep with a real Linux 6.1 v9fs client (QEMU/TCG guest), using
# ../shared/tools/qemu-kernel-client.sh beside the clone (root; Debian packages; ~1 min cold).
# Three runs against semfs9p (integration/bench/ninep/semfs9p):
#   1. trans=tcp, cache=none, access=user, aname=@notes, msize 256 KiB: guest-ops.sh
#   2. trans=fd over virtio-serial (Unix socket), cache=loose, access=client,
#      aname=@editor, msize 1 MiB: guest-ops.sh
#   3. two TCP mounts (two connections): fcntl F_SETLK/F_GETLK and flock across
#      them: guest-locks.sh with locktool (a static Go program; source in
#      locktool/main.go.txt, kept as .txt so it is not part of the module).
# Prints PASS/FAIL per run; exit 1 if any failed.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
qkc=${QKC_TOOL:-$repo/../shared/tools/qemu-kernel-client.sh}
work=$(mktemp -d /tmp/ninep-kernel.XXXXXX)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$work"' EXIT
(cd "$repo" && go build -o "$work/semfs9p" ./integration/bench/ninep/semfs9p) || exit 3
mkdir -p "$work/lt" "$work/files" "$work/e1" "$work/e2" "$work/e3"
cp "$here/locktool/main.go.txt" "$work/lt/main.go"
printf 'module locktool\n\ngo 1.22\n' >"$work/lt/go.mod"
(cd "$work/lt" && CGO_ENABLED=0 go build -o "$work/files/locktool" .) || exit 3
sed 's/QKC_9P_MNT/QKC_9PFD_MNT/' "$here/guest-ops.sh" >"$work/guest-ops-fd.sh"
fail=0
run() { # name, then env assignments
	local name=$1; shift
	if env "$@" QKC_TIMEOUT=240 timeout 600 bash "$qkc" >"$work/$name.log" 2>&1; then
		echo "PASS $name"
	else
		echo "FAIL $name (rc $?):"; tail -5 "$work/$name.log"; fail=1
	fi
}
run tcp-none-user QKC_SERVER_CMD="$work/semfs9p -dir $work/e1 -addr 127.0.0.1:5640" QKC_9P_PORT=5640 \
	QKC_9P_ANAME=@notes QKC_9P_OPTS=cache=none,access=user,msize=262144 QKC_GUEST_SCRIPT="$here/guest-ops.sh"
"$work/semfs9p" -dir "$work/e2" -addr 127.0.0.1:0 -socket "$work/9p.sock" 2>"$work/srv.log" &
pid=$!
sleep 0.5
run fd-loose-client QKC_9P_SOCK="$work/9p.sock" QKC_9PFD_ANAME=@editor \
	QKC_9PFD_OPTS=cache=loose,access=client,msize=1048576 QKC_GUEST_SCRIPT="$work/guest-ops-fd.sh"
run locks QKC_SERVER_CMD="$work/semfs9p -dir $work/e3 -addr 127.0.0.1:5640" QKC_9P_PORT=5640 \
	QKC_9P_ANAME=@notes QKC_9P_OPTS=cache=none,access=user QKC_GUEST_SCRIPT="$here/guest-locks.sh" \
	QKC_GUEST_FILES="$work/files"
exit $fail
