#!/bin/bash
# setup.sh - install the Debian packages the QEMU kernel-client harness needs.
#
# Idempotent, root, apt-get only. Called by .ci/run before `go test
# ./integration/kernel/...`. It installs tools on the host; it never installs a
# kernel: the harness fetches the guest kernel with `apt-get download` and
# builds (and caches) the guest image itself.
#
#   qemu-system-x86  the emulator (TCG; KVM does not work on this machine kind)
#   busybox-static   the guest's userland (copied into the initramfs)
#   cpio             builds the initramfs
#   kmod             depmod, to resolve module dependencies of the kernel .deb
#   xz-utils         extracts the uncompressed vmlinux from the bzImage
#   iproute2         ip netns, the network namespace qemu runs in
#   util-linux       setpriv, flock
#   socat            not needed by the harness itself; handy for debugging
#
# `apt-get update` runs only when an install fails or the kernel package cannot
# be resolved, so a warm machine makes no network request at all.
set -euo pipefail

[ "$(id -u)" = 0 ] || { echo "setup.sh: must run as root" >&2; exit 1; }

pkgs=(qemu-system-x86 busybox-static cpio kmod xz-utils iproute2 util-linux)
apt_opts=(-o DPkg::Lock::Timeout=300 -y -q --no-install-recommends)

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q '^install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "setup.sh: installing ${missing[*]}"
	if ! DEBIAN_FRONTEND=noninteractive apt-get "${apt_opts[@]}" install "${missing[@]}"; then
		apt-get -o DPkg::Lock::Timeout=300 -q update
		DEBIAN_FRONTEND=noninteractive apt-get "${apt_opts[@]}" install "${missing[@]}"
	fi
fi

# The harness resolves linux-image-amd64 -> linux-image-<abi>-amd64 with
# apt-cache; make sure the package lists know it (fresh machines may have none).
if ! apt-cache depends linux-image-amd64 2>/dev/null | grep -q 'Depends: linux-image-[0-9]'; then
	apt-get -o DPkg::Lock::Timeout=300 -q update
fi
apt-cache depends linux-image-amd64 | grep -q 'Depends: linux-image-[0-9]' ||
	{ echo "setup.sh: cannot resolve linux-image-amd64" >&2; exit 1; }
echo "setup.sh: ok ($(dpkg-query -W -f='${Version}' qemu-system-x86) qemu)"
