#!/bin/bash
# A/B of two semfs builds: both daemons run at once (index on, model loaded),
# and the same libnfs load alternates between them, ROUNDS times; each line
# gives the wall time and the daemon's CPU (user+system) for that run. For a
# change's before/after on a busy machine, where same-run pairs drift less than
# separate runs.
#
#   bash integration/bench/nfs/ab.sh OLD_BIN NEW_BIN [ROUNDS] [create N | par | write MIB | read MIB | stat N]
#
# Default: 5 rounds of "create 2000". "read MIB" writes a MIB file (not timed),
# then times reading it back in 1 MiB READs (hot cache); "stat N" times N
# GETATTRs of one file's handle (nfsload fstat) and adds their median latency
# (median_us) and the daemon's CPU per GETATTR (cpu_us_per_call). A summary of
# medians follows the rounds, with a 95 % interval of each paired ratio's
# median (../median.py). Builds the load drivers beside this script
# (nfsload.c, nfspar.c). Needs libnfs-dev and gcc.
#
# PORT_SHIFT=N moves the daemons' ports (13301, 13311) by N, for a run beside
# another on a shared machine.
#
# A_ENV and B_ENV (VAR=value ..., passed through env(1)) set each daemon's
# environment, for an A/B of one binary with and without a setting, e.g.
# A_ENV=SEMFS_SYSMON_HOLD=off (server/sysmon). A_ARGS and B_ARGS add flags to
# each daemon's serve command, for an A/B of one setting, e.g.
# B_ARGS="--policy $PWD/deploy/policy-example.json" (issue 26: cost of a policy).
#
# PIN_SERVER=CPUS and PIN_CLIENT=CPUS (taskset lists, e.g. 1 and 0) pin both
# daemons and the load driver, to tell the server's cost from where the
# scheduler happened to place the two processes.
set -eu
A=$(realpath "$1") B=$(realpath "$2") R=${3:-5}
shift 2; [ $# -gt 0 ] && shift
OP=${1:-create}; ARG=${2:-2000}
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
MODEL=${MODEL:-$ROOT/embed/model/dist}
W=$(mktemp -d /tmp/semfs-ab.XXXXXX)
gcc -O2 -o $W/nfsload "$ROOT/integration/bench/nfs/nfsload.c" -lnfs
gcc -O2 -o $W/nfspar "$ROOT/integration/bench/nfs/nfspar.c" -lnfs
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; wait; rm -rf "$W"; }
trap cleanup EXIT
start() { # BIN NAME PORT ENV ARGS
  mkdir -p $W/$2/data $W/$2/index
  env $4 "$1" serve --data $W/$2/data --index $W/$2/index --socket $W/$2/s.sock --nfs 127.0.0.1:$3 \
    --9p off --model-dir "$MODEL" --log-level warn $5 > $W/$2.log 2>&1 &
  PIDS+=($!)
}
PORT_A=$((13301 + ${PORT_SHIFT:-0})) PORT_B=$((13311 + ${PORT_SHIFT:-0}))
start "$A" a $PORT_A "${A_ENV:-}" "${A_ARGS:-}"; PA=${PIDS[0]}
start "$B" b $PORT_B "${B_ENV:-}" "${B_ARGS:-}"; PB=${PIDS[1]}
for i in $(seq 100); do [ -S $W/a/s.sock ] && [ -S $W/b/s.sock ] && break; sleep 0.1; done
if [ -n "${PIN_SERVER:-}" ]; then taskset -apc "$PIN_SERVER" $PA >/dev/null; taskset -apc "$PIN_SERVER" $PB >/dev/null; fi
CLIENT=()
[ -n "${PIN_CLIENT:-}" ] && CLIENT=(taskset -c "$PIN_CLIENT")
cpu() { awk '{print $14+$15}' /proc/$1/stat; }
TCK=$(getconf CLK_TCK)
echo "op=$OP $ARG rounds=$R load=$(cut -d' ' -f1-3 /proc/loadavg) pin_server=${PIN_SERVER:-no} pin_client=${PIN_CLIENT:-no}"
OUT=$W/rounds.txt
for r in $(seq $R); do
  for x in a b; do
    if [ $x = a ]; then P=$PA; port=$PORT_A; else P=$PB; port=$PORT_B; fi
    U="nfs://127.0.0.1/@bench?nfsport=$port&mountport=$port&version=3"
    case $OP in # untimed set-up
    read) "${CLIENT[@]}" $W/nfsload "$U" write rd$r "$ARG" >/dev/null ;;
    stat) [ -e $W/$x/data/st ] || "${CLIENT[@]}" $W/nfsload "$U" write st 1 >/dev/null ;;
    esac
    c0=$(cpu $P); t0=$(date +%s.%N)
    case $OP in
    create) out=$("${CLIENT[@]}" $W/nfsload "$U" create c$r "$ARG") ;;
    write)  out=$("${CLIENT[@]}" $W/nfsload "$U" write big$r "$ARG"); truncate -s 0 $W/$x/data/big$r ;;
    read)   out=$("${CLIENT[@]}" $W/nfsload "$U" read rd$r) ;;
    stat)   out=$("${CLIENT[@]}" $W/nfsload "$U" fstat st "$ARG") ;;
    par)    out=$("${CLIENT[@]}" $W/nfspar "$U" par$r); for f in $W/$x/data/par$r/[rw]*; do truncate -s 0 "$f"; done ;;
    esac
    t1=$(date +%s.%N); c1=$(cpu $P)
    [ $OP = read ] && truncate -s 0 $W/$x/data/rd$r
    cpu_s=$(echo "scale=3; ($c1 - $c0) / $TCK" | bc)
    extra=$(echo "$out" | grep '^par' | sed 's/^par //' || true)
    if [ $OP = stat ]; then
      extra="median_us=$(echo "$out" | sed -n 's/^fstat(GETATTR).*median_us=\([0-9.]*\).*/\1/p') cpu_us_per_call=$(echo "scale=1; $cpu_s * 1000000 / $ARG" | bc)"
    fi
    echo "$x round=$r wall_s=$(echo "$t1 - $t0" | bc) cpu_s=$cpu_s $extra" | tee -a $OUT
  done
done
python3 "$ROOT/integration/bench/median.py" "$OUT"
