#!/bin/bash
# Grep benchmark (issue 25): the content index's build cost and size, and
# POST /v1/grep against ripgrep over the backing directory and GNU grep -r
# through a kernel NFS mount of the daemon (in a QEMU guest), in the same run.
#
#   bash integration/bench/grep/corpus.sh /srv/grepcorpus     # once
#   [ROUNDS=21] [PATTERNS=20] [NFS=auto|0] [NFS_DIR=perl] [NFS_PATTERNS=5] \
#     [NFS_ROUNDS=1] [SEED=25] bash integration/bench/grep/bench.sh /srv/grepcorpus
#   BUILD_ONLY=1 bash integration/bench/grep/bench.sh /srv/grepcorpus   # the build table only
#
# The corpus (>= 50,000 real text files, >= 500 MB; corpus.sh) is served as the
# daemon's backing directory, read only. The daemon runs with its tag index,
# the embedding model (MODEL_DIR, default embed/model/dist of this clone, or of
# the main clone beside a worktree) and the content index; --watch off, as
# nothing else writes the corpus. What it measures, and how the patterns are
# generated (PATTERNS per class, seeded, never hand-picked) and checked against
# rg: bench.py's header. ROUNDS rounds time every pattern; GNU grep over NFS
# runs in the first NFS_ROUNDS only (it reads the whole corpus each time).
#
# Prints a Markdown table for BENCHMARKS.md on stdout, progress on stderr;
# exits 1 if any answer differs from rg's. Needs ripgrep (apt-get install
# ripgrep), GNU grep and python3; the NFS column needs root, ip and QEMU
# (bash integration/kernel/setup.sh; otherwise the report says why it was not
# run): the daemon then runs in a network namespace of its own (semfsgb<pid>),
# the guest's only way to it. The CPU and size figures hold on a busy
# machine; the latencies need a quiet one.
set -eu
DATA=${1:?usage: bench.sh CORPUS (built by corpus.sh)}
DATA=$(cd "$DATA" && pwd)
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
command -v rg >/dev/null || { echo "bench.sh: ripgrep missing: apt-get install ripgrep" >&2; exit 2; }
[ "$(find "$DATA" -type f -print -quit)" ] || { echo "bench.sh: $DATA holds no files; build it with corpus.sh" >&2; exit 2; }
if [ -z "${MODEL_DIR:-}" ]; then
  for d in "$ROOT/embed/model/dist" "$(git -C "$ROOT" worktree list --porcelain | sed -n '1s/^worktree //p')/embed/model/dist"; do
    [ -f "$d/model.json" ] && { MODEL_DIR=$d; break; }
  done
fi
[ -n "${MODEL_DIR:-}" ] || { echo "bench.sh: no embedding model (bash embed/model/fetch.sh, or MODEL_DIR=dir; MODEL_DIR=off for none)" >&2; exit 2; }
W=$(mktemp -d /tmp/semfs-grepbench.XXXXXX)
NETNS=
cleanup() { [ -z "$NETNS" ] || ip netns delete "$NETNS"; rm -rf "$W"; }
trap cleanup EXIT
go build -o "$W/semfs" "$ROOT/cmd/semfs"
if [ "${NFS:-auto}" != 0 ] && [ "$(id -u)" = 0 ] && command -v ip >/dev/null && command -v qemu-system-x86_64 >/dev/null; then
  (cd "$ROOT" && go build -o "$W/guestgrep" ./integration/bench/grep/guestgrep &&
    CGO_ENABLED=0 go build -o "$W/semfs-guest" ./integration/kernel/guesttool)
  NETNS=semfsgb$$
  ip netns add "$NETNS" && ip -n "$NETNS" link set lo up
fi
ROOT=$ROOT DATA=$DATA W=$W NETNS=$NETNS SEMFS_BIN=$W/semfs MODEL_DIR=$MODEL_DIR python3 "$ROOT/integration/bench/grep/bench.py"
