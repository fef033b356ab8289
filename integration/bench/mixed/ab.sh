#!/bin/bash
# Mixed load A/B of two semfs builds (issue 30 item 7): both daemons run at once
# as users run them (`semfs serve`, index on, model loaded, NFS and 9P on), and
# the same 64-client mixed load (mixload beside this script: NFS and 9P reads
# and writes, queries, tags) runs against each in turn for SECONDS, ROUNDS
# times, the order alternating each round (a b, b a, ...) so the machine's
# drift hits both alike. Each run prints the operations of each kind, the
# errors, the load driver's own CPU (load_cpu_s: on a shared machine what it
# spends the daemon does not get) and the daemon's CPU (user+system, cpu_s);
# a summary gives the medians and, per row, the median of the same-round
# ratios b/a with their spread and a 95 % interval of it (../median.py).
#
#   bash integration/bench/mixed/ab.sh OLD NEW [ROUNDS] [SECONDS]
#
# OLD and NEW are commits (built in temporary worktrees, removed at exit) or
# paths to semfs executables. Default: 3 rounds of 60 s. The load driver is
# built from this tree, once, and drives both.
#
# A_ENV and B_ENV (VAR=value ..., through env(1)) set each daemon's
# environment, A_ARGS and B_ARGS add flags to its serve command, for an A/B of
# one binary with and without a setting, e.g.
#   A_ENV=SEMFS_SYSMON_HOLD=off bash ab.sh HEAD HEAD
# B_ENV=SEMFS_CPUPROFILE=/tmp/b.prof profiles the second daemon over all its
# runs (written when it stops, at the end), SEMFS_MEMPROFILE=FILE its
# allocations. KINDS=query,tag deals the clients
# over those kinds only (mixload -kinds); A_LOAD and B_LOAD add mixload flags
# for one side (B_LOAD="-rank seed": the queries' rank; B_LOAD="-scope tags":
# tags and names only, as a build without contents answers; "-rate tag=150,query=150":
# the same tags and queries a second from both builds). CLIENTS sets the load's clients
# (default 64), PERF_DIR=DIR records each run's daemon with perf (DIR/a-1.data,
# ...: either build, a commit without SEMFS_CPUPROFILE too), PORT_SHIFT moves the ports (13401..13412), MODEL the model
# directory (default embed/model/dist: make model).
set -eu
[ $# -ge 2 ] || { echo "usage: ab.sh OLD NEW [ROUNDS] [SECONDS]" >&2; exit 2; }
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
R=${3:-3} SECS=${4:-60} CLIENTS=${CLIENTS:-64}
MODEL=${MODEL:-$ROOT/embed/model/dist}
[ -f "$MODEL/model.json" ] || { echo "no model in $MODEL: run make model, or set MODEL" >&2; exit 3; }
W=$(mktemp -d /tmp/semfs-mixed.XXXXXX)
PIDS=() TREES=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  wait || true
  for t in "${TREES[@]}"; do git -C "$ROOT" worktree remove --force "$t" 2>/dev/null || true; done
  rm -rf "$W"
}
trap cleanup EXIT

build() { # REV OUT: a commit built in a temporary worktree, or an executable as is
  if [ -x "$1" ] && [ -f "$1" ]; then cp "$1" "$2"; return; fi
  local t=$W/tree-$(basename "$2")
  git -C "$ROOT" worktree add --detach "$t" "$1" >/dev/null 2>&1
  TREES+=("$t")
  echo "building $1 ($(git -C "$t" log -1 --format='%h %cd' --date=short))" >&2
  (cd "$t" && go build -o "$2" ./cmd/semfs)
}
build "$1" $W/semfs-a
build "$2" $W/semfs-b
(cd "$ROOT" && go build -o $W/mixload ./integration/bench/mixed/mixload)

S=${PORT_SHIFT:-0}
start() { # NAME NFS_PORT 9P_PORT ENV ARGS
  mkdir -p $W/$1/data $W/$1/index
  env $4 $W/semfs-$1 serve --data $W/$1/data --index $W/$1/index --socket $W/$1/s.sock \
    --nfs 127.0.0.1:$2 --9p 127.0.0.1:$3 --model-dir "$MODEL" --log-level warn $5 > $W/$1.log 2>&1 &
  PIDS+=($!)
}
start a $((13401 + S)) $((13402 + S)) "${A_ENV:-}" "${A_ARGS:-}"; PA=${PIDS[0]}
start b $((13411 + S)) $((13412 + S)) "${B_ENV:-}" "${B_ARGS:-}"; PB=${PIDS[1]}
for i in $(seq 300); do [ -S $W/a/s.sock ] && [ -S $W/b/s.sock ] && break; sleep 0.1; done
[ -S $W/a/s.sock ] && [ -S $W/b/s.sock ] || { echo "a daemon did not start:"; cat $W/a.log $W/b.log; exit 1; }
drive() { # NAME ARGS...
  local n=$1; shift
  local off=1 load=${A_LOAD:-}; [ $n = b ] && off=11 load=${B_LOAD:-}
  $W/mixload $load -nfs 127.0.0.1:$((13400 + off + S)) -9p 127.0.0.1:$((13401 + off + S)) -socket $W/$n/s.sock ${KINDS:+-kinds $KINDS} "$@"
}
drive a -seed; drive b -seed
cpu() { awk '{print $14+$15}' /proc/$1/stat; }
TCK=$(getconf CLK_TCK)
echo "mixed clients=$CLIENTS secs=$SECS rounds=$R load=$(cut -d' ' -f1-3 /proc/loadavg)"
echo "a: $1${A_ENV:+ env $A_ENV}${A_ARGS:+ args $A_ARGS}${A_LOAD:+ load $A_LOAD}"
echo "b: $2${B_ENV:+ env $B_ENV}${B_ARGS:+ args $B_ARGS}${B_LOAD:+ load $B_LOAD}"
OUT=$W/rounds.txt
for r in $(seq $R); do
  order="a b"; [ $((r % 2)) = 0 ] && order="b a"
  for x in $order; do
    P=$PA; [ $x = b ] && P=$PB
    c0=$(cpu $P)
    if [ -n "${PERF_DIR:-}" ]; then
      perf record -q -F 499 -g -p $P -o "$PERF_DIR/$x-$r.data" -- sleep "$SECS" 2>/dev/null &
    fi
    out=$(drive $x -clients "$CLIENTS" -secs "$SECS" -run r$r 2>$W/err.txt) || { cat $W/err.txt; exit 1; }
    c1=$(cpu $P)
    [ -n "${PERF_DIR:-}" ] && wait $!
    cpu_s=$(echo "scale=2; ($c1 - $c0) / $TCK" | bc)
    total=$(echo "$out" | sed -n 's/.* total=\([0-9]*\).*/\1/p')
    line="$x round=$r ${out#mixed } cpu_s=$cpu_s cpu_us_per_op=$(echo "scale=1; $cpu_s * 1000000 / $total" | bc)"
    echo "$line" | tee -a $OUT
    [ -s $W/err.txt ] && sed 's/^/  /' $W/err.txt
  done
done
python3 "$ROOT/integration/bench/median.py" "$OUT" clients secs
