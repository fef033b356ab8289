// Package kernel is semfs's harness for real Linux kernel clients: it boots a
// Debian kernel under QEMU (TCG, or KVM where the CPU has hardware
// virtualisation: Accel) with a busybox initramfs and, as the oracle for
// grep, the host's GNU grep (GNUGrep), mounts a server
// over NFSv3, 9P/TCP and 9P over a virtio-serial port (trans=fd), and runs
// shell steps in the guest on the host's command, so a Go test can act on the
// host (restart the daemon, query, tag) between guest steps.
//
// Invariants:
//
//   - Debian packages only. The guest kernel is `apt-get download`ed and
//     unpacked in the image cache, never installed on the host; busybox comes
//     from busybox-static; depmod (kmod) resolves module dependencies; xz
//     extracts the uncompressed vmlinux whose PVH entry QEMU boots directly.
//   - The image is cached under one directory the harness owns
//     (DefaultCacheDir), keyed by the kernel package and version, busybox,
//     the module list and the guest init; builds run under an flock and are
//     renamed into place only when complete.
//   - Isolation. QEMU and the servers run in a network namespace the harness
//     creates and deletes; SLIRP's 10.0.2.2 is that namespace's loopback and
//     nothing else. The harness ends only processes it started, by pid or by
//     the process group it created.
//   - Bounded. Every wait has a deadline: boot, each step (enforced in the
//     guest with SIGKILL, and on the host with a margin), server start and
//     stop. A guest that stops answering marks the VM dead; later steps fail
//     at once naming it, with the console tail, instead of hanging.
//   - One step at a time. The control channel is a virtio-serial port; a step
//     is "STEP id timeout nbytes" plus a script, and its answer is the
//     streamed output then an end marker carrying a per-boot nonce (see
//     guest/init.sh), so output can never be mistaken for a marker.
package kernel
