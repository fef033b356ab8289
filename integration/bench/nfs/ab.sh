#!/bin/bash
# A/B of two semfs builds: both daemons run at once (index on, model loaded),
# and the same libnfs load alternates between them, ROUNDS times; each line
# gives the wall time and the daemon's CPU (user+system) for that run. For a
# change's before/after on a busy machine, where same-run pairs drift less than
# separate runs.
#
#   bash integration/bench/nfs/ab.sh OLD_BIN NEW_BIN [ROUNDS] [create N | par | write MIB]
#
# Default: 5 rounds of "create 2000". Builds the load drivers beside this
# script (nfsload.c, nfspar.c). Needs libnfs-dev and gcc.
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
start() { # BIN NAME PORT
  mkdir -p $W/$2/data $W/$2/index
  "$1" serve --data $W/$2/data --index $W/$2/index --socket $W/$2/s.sock --nfs 127.0.0.1:$3 \
    --9p off --model-dir "$MODEL" --log-level warn > $W/$2.log 2>&1 &
  PIDS+=($!)
}
start "$A" a 13301; PA=${PIDS[0]}
start "$B" b 13311; PB=${PIDS[1]}
for i in $(seq 100); do [ -S $W/a/s.sock ] && [ -S $W/b/s.sock ] && break; sleep 0.1; done
cpu() { awk '{print $14+$15}' /proc/$1/stat; }
TCK=$(getconf CLK_TCK)
echo "op=$OP $ARG rounds=$R load=$(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq $R); do
  for x in a b; do
    if [ $x = a ]; then P=$PA; port=13301; else P=$PB; port=13311; fi
    U="nfs://127.0.0.1/@bench?nfsport=$port&mountport=$port&version=3"
    c0=$(cpu $P); t0=$(date +%s.%N)
    case $OP in
    create) out=$($W/nfsload "$U" create c$r "$ARG") ;;
    write)  out=$($W/nfsload "$U" write big$r "$ARG"); truncate -s 0 $W/$x/data/big$r ;;
    par)    out=$($W/nfspar "$U" par$r); for f in $W/$x/data/par$r/[rw]*; do truncate -s 0 "$f"; done ;;
    esac
    t1=$(date +%s.%N); c1=$(cpu $P)
    echo "$x round=$r wall_s=$(echo "$t1 - $t0" | bc) cpu_s=$(echo "scale=3; ($c1 - $c0) / $TCK" | bc) $(echo "$out" | grep '^par' | sed 's/^par //')"
  done
done
