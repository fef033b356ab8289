#!/bin/bash
# NFSv3 benchmarks: semfs (`semfs serve`, the real daemon), nfs-ganesha (VFS FSAL)
# and the stock go-nfs v0.0.4 stack (gonfsraw/) side by side, one client and the
# same data for all: nfsbench, a small libnfs load driver from the shared peer
# study (../shared/peers/nfsbench.c beside the clone, compiled here; set PEERS to its directory).
#
# A fourth column, "nfs/ only", is semfs's NFS adapter over the core without
# the daemon's index (the nfs package's test binary, TestManualServe), to tell
# the adapter's cost from the index's.
#
# Tests: write 256 MiB (1 MiB WRITEs, then COMMIT at close), read it back (1 MiB
# READs), create 2,000 x 4 KiB files, list those 2,000 (READDIRPLUS), GETATTR
# latency on one handle (2,000 calls, median). Servers run in alternation, ROUNDS
# times, so load drift on a shared machine hits each alike; the report gives the
# median per server and the ratio to ganesha. Server CPU comes from /proc.
#
# Needs root, Debian 12 packages nfs-ganesha nfs-ganesha-vfs rpcbind libnfs-dev
# gcc, and loopback only. rpcbind (ganesha will not start without it) binds
# port 111. Usage: bash integration/bench/nfs/bench.sh [ROUNDS]
set -eu
ROUNDS=${1:-3}
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
PEERS=${PEERS:-$ROOT/../shared/peers}
W=$(mktemp -d /tmp/semfs-nfsbench.XXXXXX)
SEMFS_PORT=13049 GONFS_PORT=13060 GANESHA_NFS=12049 GANESHA_MNT=12050 NFSONLY_PORT=13070
echo "work dir $W" >&2

# --- build
go build -o $W/semfs "$ROOT/cmd/semfs"
(cd "$ROOT" && go test -c -o $W/nfs.test ./nfs)
(cd "$ROOT/integration/bench/nfs/gonfsraw" && go build -o $W/gonfsraw .)
gcc -O2 -o $W/nfsbench "$PEERS/nfsbench.c" -lnfs
sed "s|@EXPORT_DIR@|$W/ganesha-data|" "$PEERS/ganesha.conf" > $W/ganesha.conf

# --- start
mkdir -p $W/semfs-data $W/semfs-index $W/gonfs-data $W/ganesha-data $W/nfsonly-data $W/nfsonly-state /run/rpcbind
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do for i in $(seq 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.2; done; done
}
trap cleanup EXIT
if ! pgrep -x rpcbind >/dev/null; then
  (setsid rpcbind -f > $W/rpcbind.log 2>&1 & echo $! > $W/rpcbind.pid); PIDS+=($(cat $W/rpcbind.pid)); sleep 1
fi
setsid $W/semfs serve --data $W/semfs-data --index $W/semfs-index --socket $W/semfs.sock \
  --nfs 127.0.0.1:$SEMFS_PORT --9p off --model-dir off --log-level warn > $W/semfs.log 2>&1 &
SEMFS_PID=$!; PIDS+=($SEMFS_PID)
SEMFS_NFS_SERVE=$W/nfsonly-data,$W/nfsonly-state,127.0.0.1:$NFSONLY_PORT \
  setsid $W/nfs.test -test.run TestManualServe > $W/nfsonly.log 2>&1 &
NFSONLY_PID=$!; PIDS+=($NFSONLY_PID)
setsid $W/gonfsraw $W/gonfs-data $GONFS_PORT > $W/gonfs.log 2>&1 &
GONFS_PID=$!; PIDS+=($GONFS_PID)
setsid ganesha.nfsd -F -L $W/ganesha.log -f $W/ganesha.conf -N NIV_WARN -p $W/ganesha.lockpid > $W/ganesha.out 2>&1 &
GANESHA_PID=$!; PIDS+=($GANESHA_PID)
sleep 5

url() {
  case $1 in
  semfs)   echo "nfs://127.0.0.1/@bench?nfsport=$SEMFS_PORT&mountport=$SEMFS_PORT&version=3" ;;
  nfsonly) echo "nfs://127.0.0.1/@bench?nfsport=$NFSONLY_PORT&mountport=$NFSONLY_PORT&version=3" ;;
  gonfs)   echo "nfs://127.0.0.1/?nfsport=$GONFS_PORT&mountport=$GONFS_PORT&version=3&auto-traverse-mounts=0" ;;
  ganesha) echo "nfs://127.0.0.1$W/ganesha-data?nfsport=$GANESHA_NFS&mountport=$GANESHA_MNT&version=3&auto-traverse-mounts=0" ;;
  esac
}
pid() { case $1 in semfs) echo $SEMFS_PID;; nfsonly) echo $NFSONLY_PID;; gonfs) echo $GONFS_PID;; ganesha) echo $GANESHA_PID;; esac; }
cpu() { awk '{print $14+$15}' /proc/$1/stat; }   # utime+stime, clock ticks
TCK=$(getconf CLK_TCK)

# run SERVER TEST ROUND: prints "SERVER TEST ROUND wall_s srv_cpu_s [median_us]"
run() {
  local s=$1 t=$2 r=$3 u; u=$(url $s); local p; p=$(pid $s)
  local c0; c0=$(cpu $p); local t0; t0=$(date +%s.%N)
  local out
  case $t in
  write)  out=$($W/nfsbench "$u" write big$r 256) ;;
  read)   out=$($W/nfsbench "$u" read big$r) ;;
  create) out=$($W/nfsbench "$u" create many$r 2000) ;;
  list)   out=$($W/nfsbench "$u" list many$r) ;;
  getattr) out=$($W/nfsbench "$u" stat big$r 2000) ;;
  esac
  local t1; t1=$(date +%s.%N); local c1; c1=$(cpu $p)
  local extra=""
  if [ $t = getattr ]; then extra=$(echo "$out" | sed -n 's/^fstat(GETATTR).*median_us=\([0-9.]*\).*/\1/p'); fi
  if [ $t = list ]; then
    n=$(echo "$out" | sed -n 's/^listed \([0-9]*\) .*/\1/p')
    [ "$n" -ge 2000 ] || { echo "list on $s gave $n entries" >&2; exit 1; }
  fi
  echo "$s $t $r $(echo "$t1 - $t0" | bc) $(echo "scale=3; ($c1 - $c0) / $TCK" | bc) $extra"
}

RES=$W/results.txt
for r in $(seq $ROUNDS); do
  for t in write read create list getattr; do
    # rotate the order each round so no server always runs first
    case $(( r % 3 )) in
    0) order="semfs ganesha gonfs nfsonly";; 1) order="ganesha nfsonly gonfs semfs";; 2) order="gonfs semfs nfsonly ganesha";;
    esac
    for s in $order; do run $s $t $r | tee -a $RES; done
  done
done

python3 - "$RES" <<'PY'
import sys, statistics as st, collections
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
d = collections.defaultdict(list)
for r in rows:
    s, t = r[0], r[1]
    val = float(r[5]) / 1e6 if t == "getattr" else float(r[3])
    d[(s, t)].append((val, float(r[4])))
tests = ["write", "read", "create", "list", "getattr"]
label = {"write": "write 256 MiB (s)", "read": "read 256 MiB (s)", "create": "create 2,000 x 4 KiB (s)",
         "list": "list 2,000 (s)", "getattr": "GETATTR median (us)"}
target = {"write": 1.0, "read": 1.0, "create": 1.0, "list": 1.5, "getattr": 1.2}
servers = ("semfs", "nfsonly", "ganesha", "gonfs")
print("| test | semfs (daemon) | nfs/ only | ganesha | go-nfs raw | semfs/ganesha | nfs/ only/ganesha | target | met (daemon) |")
print("|---|---|---|---|---|---|---|---|---|")
for t in tests:
    m = {s: st.median([v for v, _ in d[(s, t)]]) for s in servers}
    c = {s: st.median([c for _, c in d[(s, t)]]) for s in servers}
    f = (lambda v: f"{v*1e6:.0f}") if t == "getattr" else (lambda v: f"{v:.3f}")
    ratio = m["semfs"] / m["ganesha"]
    cell = lambda s: f"{f(m[s])} (srv {c[s]:.2f} s)"
    r2 = m["nfsonly"] / m["ganesha"]
    print(f"| {label[t]} | {cell('semfs')} | {cell('nfsonly')} | {cell('ganesha')} | {cell('gonfs')} | {ratio:.2f} | {r2:.2f} | <= {target[t]} | {'yes' if ratio <= target[t] else 'no'} |")
print()
print("per-round ratios semfs/ganesha:")
for t in tests:
    g = {int(r[2]): (float(r[5]) if t == "getattr" else float(r[3])) for r in rows if r[0] == "ganesha" and r[1] == t}
    sv = {int(r[2]): (float(r[5]) if t == "getattr" else float(r[3])) for r in rows if r[0] == "semfs" and r[1] == t}
    print(f"  {t}: " + " ".join(f"{sv[k]/g[k]:.2f}" for k in sorted(g) if k in sv))
PY
