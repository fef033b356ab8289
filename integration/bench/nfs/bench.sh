#!/bin/bash
# NFSv3 benchmarks: semfs (`semfs serve`, the real daemon with its index on and
# the USE-lite model loaded, as `make serve` runs it), nfs-ganesha (VFS FSAL)
# and the stock go-nfs v0.0.4 stack (gonfsraw/) side by side, one client and the
# same data for all: nfsload.c and nfspar.c beside this script, small load
# drivers on libnfs (a third-party client), compiled here.
#
# A fourth column, "nfs/ only", is semfs's NFS adapter over the core without
# the daemon's index (the nfs package's test binary, TestManualServe), to tell
# the adapter's cost from the index's.
#
# Tests: write 256 MiB (1 MiB WRITEs, then COMMIT at close), read it back (1 MiB
# READs), create 2,000 x 4 KiB files, list those 2,000 (READDIRPLUS), GETATTR
# latency on one handle (2,000 calls, median; GETATTR_N=N for N), and "par": eight streams at once on
# ONE connection (reads, writes, creates, stats; nfspar.c beside this script, on
# libnfs's async API). Servers run in alternation, ROUNDS (default 7) times, so
# load drift on a shared machine hits each alike; the report gives the median per
# server, and the ratio to ganesha as the median of the per-round ratios with
# their spread (min-max). Server CPU (user+system) comes from /proc.
#
# Every 256 MiB file is truncated in the backing directory as soon as its run
# is over: the kernel's write(2) into the page cache costs several times more
# system CPU while earlier files' pages fill it (measured: ganesha and semfs
# alike go from 0.5 to 2.9 ms of system CPU per MiB written after three earlier
# 256 MiB files), so without it a row measured how much the runs before had
# left in memory, not the server. The write run's file goes at once (until
# 2026-12-01 it stayed for the read row, and the second writer of each round
# found the first one's 256 MiB cached: 0.24-0.34 s first, 0.54-0.94 s second,
# the write row decided by the order); the read row writes its own file first,
# untimed, and truncates it after reading.
#
# POLICY=FILE adds a column "semfs+policy": a second daemon, the same as the
# first but with --policy FILE, in the same rotation, so a policy's cost is read
# in the same run (issue 26). integration/bench/policy.json is deploy's example
# plus rules for the benchmark's own app (@bench), whose hide globs every call
# then evaluates.
#
# Needs root, Debian 12 packages nfs-ganesha nfs-ganesha-vfs rpcbind libnfs-dev
# gcc, and loopback only. rpcbind (ganesha will not start without it) binds
# port 111. Usage: bash integration/bench/nfs/bench.sh [ROUNDS]
# TESTS selects rows (default all): TESTS="create par" bash .../bench.sh 3
# PIN_SERVER=CPUS PIN_CLIENT=CPUS (taskset lists) pin every server (all its
# threads) and the load drivers alike, to tell a server's cost from where the
# scheduler happens to place it against the client (the GETATTR row's rounds
# are bimodal unpinned: same CPU as the client or not).
# ("list" needs "create" before it, "getattr" "write").
# Two more rows, not in the default set, measure GETATTR latency with each
# server pinned in turn (all its threads, taskset) and the driver on CPU 0:
# "getattr-near" puts the server on CPU 0 too, "getattr-apart" on CPU 1; both
# make GETATTR_N GETATTRs only (nfsload fstat), so their CPU column is the
# server's CPU for those calls. Unpinned, where the kernel places a server's
# thread against the client's (same CPU: ~25-35 us; apart: ~65-80 us on a
# 2-vCPU VM) decides the getattr row more than the server does.
set -eu
ROUNDS=${1:-7}
TESTS=${TESTS:-write read create list getattr par}
GETATTR_N=${GETATTR_N:-2000} # GETATTRs per getattr run (the row is their median)
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
W=$(mktemp -d /tmp/semfs-nfsbench.XXXXXX)
# Ports: PORT_SHIFT (default 0) moves them all, for a second run beside another
# (two helpers on one machine).
S=${PORT_SHIFT:-0}
SEMFS_PORT=$((13049 + S)) GONFS_PORT=$((13060 + S)) GANESHA_NFS=$((12049 + S)) GANESHA_MNT=$((12050 + S)) NFSONLY_PORT=$((13070 + S)) POLICY_PORT=$((13080 + S))
echo "work dir $W" >&2

# --- build
go build -o $W/semfs "$ROOT/cmd/semfs"
(cd "$ROOT" && go test -c -o $W/nfs.test ./nfs)
(cd "$ROOT/integration/bench/nfs/gonfsraw" && go build -o $W/gonfsraw .)
gcc -O2 -o $W/nfsload "$ROOT/integration/bench/nfs/nfsload.c" -lnfs
gcc -O2 -o $W/nfspar "$ROOT/integration/bench/nfs/nfspar.c" -lnfs
MODEL=${MODEL:-$ROOT/embed/model/dist}
[ -f "$MODEL/model.json" ] || { echo "no model in $MODEL: run make model" >&2; exit 3; }
# ganesha: NFSv3 over TCP on loopback only, the VFS FSAL on one directory,
# no NLM/RQUOTA, no NFSv4 grace period (it would hold writes for 90 s).
cat > $W/ganesha.conf <<EOF
NFS_CORE_PARAM {
    Bind_addr = 127.0.0.1;
    NFS_Port = $GANESHA_NFS;
    MNT_Port = $GANESHA_MNT;
    NLM_Port = $((GANESHA_MNT + 1));
    Rquota_Port = $((GANESHA_MNT + 2));
    Protocols = 3;
    Enable_NLM = false;
    Enable_RQUOTA = false;
    Enable_UDP = false;
}
NFSV4 { Graceless = true; }
EXPORT_DEFAULTS { Access_Type = RW; Squash = No_Root_Squash; }
EXPORT {
    Export_Id = 1;
    Path = $W/ganesha-data;
    Pseudo = /exp-ganesha;
    Access_Type = RW;
    Squash = No_Root_Squash;
    Protocols = 3;
    Transports = TCP;
    SecType = sys;
    FSAL { Name = VFS; }
}
LOG { Default_Log_Level = EVENT; }
EOF

# --- start
mkdir -p $W/policy-data $W/policy-index $W/semfs-data $W/semfs-index $W/gonfs-data $W/ganesha-data $W/nfsonly-data $W/nfsonly-state /run/rpcbind
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do for i in $(seq 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.2; done; done
  # Each run leaves gigabytes of files behind (7 rounds of 256 MiB per server);
  # KEEP=1 keeps them, with the servers' logs, for a look afterwards.
  [ "${KEEP:-0}" = 1 ] || rm -rf "$W"
}
trap cleanup EXIT
if ! pgrep -x rpcbind >/dev/null; then
  (setsid rpcbind -f > $W/rpcbind.log 2>&1 & echo $! > $W/rpcbind.pid); PIDS+=($(cat $W/rpcbind.pid)); sleep 1
fi
setsid $W/semfs serve --data $W/semfs-data --index $W/semfs-index --socket $W/semfs.sock \
  --nfs 127.0.0.1:$SEMFS_PORT --9p off --model-dir "$MODEL" --log-level warn > $W/semfs.log 2>&1 &
SEMFS_PID=$!; PIDS+=($SEMFS_PID)
SERVERS="semfs ganesha gonfs nfsonly"
POLICY_PID=
if [ -n "${POLICY:-}" ]; then
  setsid $W/semfs serve --data $W/policy-data --index $W/policy-index --socket $W/policy.sock \
    --nfs 127.0.0.1:$POLICY_PORT --9p off --model-dir "$MODEL" --log-level warn --policy "$POLICY" > $W/policy.log 2>&1 &
  POLICY_PID=$!; PIDS+=($POLICY_PID); SERVERS="$SERVERS policy"
fi
SEMFS_NFS_SERVE=$W/nfsonly-data,$W/nfsonly-state,127.0.0.1:$NFSONLY_PORT \
  setsid $W/nfs.test -test.run TestManualServe > $W/nfsonly.log 2>&1 &
NFSONLY_PID=$!; PIDS+=($NFSONLY_PID)
setsid $W/gonfsraw $W/gonfs-data $GONFS_PORT > $W/gonfs.log 2>&1 &
GONFS_PID=$!; PIDS+=($GONFS_PID)
setsid ganesha.nfsd -F -L $W/ganesha.log -f $W/ganesha.conf -N NIV_WARN -p $W/ganesha.lockpid > $W/ganesha.out 2>&1 &
GANESHA_PID=$!; PIDS+=($GANESHA_PID)
sleep 5
if [ -n "${PIN_SERVER:-}" ]; then
  for p in $SEMFS_PID $NFSONLY_PID $GONFS_PID $GANESHA_PID $POLICY_PID; do taskset -apc "$PIN_SERVER" $p >/dev/null; done
fi
CLIENT=()
[ -n "${PIN_CLIENT:-}" ] && CLIENT=(taskset -c "$PIN_CLIENT")

url() {
  case $1 in
  semfs)   echo "nfs://127.0.0.1/@bench?nfsport=$SEMFS_PORT&mountport=$SEMFS_PORT&version=3" ;;
  policy)  echo "nfs://127.0.0.1/@bench?nfsport=$POLICY_PORT&mountport=$POLICY_PORT&version=3" ;;
  nfsonly) echo "nfs://127.0.0.1/@bench?nfsport=$NFSONLY_PORT&mountport=$NFSONLY_PORT&version=3" ;;
  gonfs)   echo "nfs://127.0.0.1/?nfsport=$GONFS_PORT&mountport=$GONFS_PORT&version=3&auto-traverse-mounts=0" ;;
  ganesha) echo "nfs://127.0.0.1$W/ganesha-data?nfsport=$GANESHA_NFS&mountport=$GANESHA_MNT&version=3&auto-traverse-mounts=0" ;;
  esac
}
dir() { case $1 in policy) echo $W/policy-data;; semfs) echo $W/semfs-data;; nfsonly) echo $W/nfsonly-data;; gonfs) echo $W/gonfs-data;; ganesha) echo $W/ganesha-data;; esac; }
pid() { case $1 in policy) echo $POLICY_PID;; semfs) echo $SEMFS_PID;; nfsonly) echo $NFSONLY_PID;; gonfs) echo $GONFS_PID;; ganesha) echo $GANESHA_PID;; esac; }
cpu() { awk '{print $14+$15}' /proc/$1/stat; }   # utime+stime, clock ticks
TCK=$(getconf CLK_TCK)

# run SERVER TEST ROUND: prints "SERVER TEST ROUND wall_s srv_cpu_s [median_us]"
run() {
  local s=$1 t=$2 r=$3 u; u=$(url $s); local p; p=$(pid $s)
  # Untimed: the file the read row reads, then the earlier runs' dirty data
  # to the disk.
  [ $t = read ] && "${CLIENT[@]}" $W/nfsload "$u" write rd$r 256 >/dev/null
  sync
  local c0; c0=$(cpu $p); local t0; t0=$(date +%s.%N)
  local out
  case $t in
  write)  out=$("${CLIENT[@]}" $W/nfsload "$u" write big$r 256); truncate -s 0 "$(dir $s)/big$r" ;;
  read)   out=$("${CLIENT[@]}" $W/nfsload "$u" read rd$r); truncate -s 0 "$(dir $s)/rd$r" ;;
  create) out=$("${CLIENT[@]}" $W/nfsload "$u" create many$r 2000) ;;
  list)   out=$("${CLIENT[@]}" $W/nfsload "$u" list many$r) ;;
  getattr) out=$("${CLIENT[@]}" $W/nfsload "$u" stat big$r $GETATTR_N) ;;
  getattr-near|getattr-apart)
    local on=0; [ $t = getattr-apart ] && on=1
    taskset -apc $on $p >/dev/null
    out=$(taskset -c 0 $W/nfsload "$u" fstat big$r $GETATTR_N)
    taskset -apc "${PIN_SERVER:-0-$(( $(nproc) - 1 ))}" $p >/dev/null ;;
  par)    out=$("${CLIENT[@]}" $W/nfspar "$u" par$r); for f in "$(dir $s)/par$r"/[rw]*; do truncate -s 0 "$f"; done ;;
  esac
  local t1; t1=$(date +%s.%N); local c1; c1=$(cpu $p)
  local extra=""
  if [ $t = par ]; then extra=$(echo "$out" | sed -n 's/^par .*secs=\([0-9.]*\) .*/\1/p'); echo "$out" >&2; fi
  if [ ${t%%-*} = getattr ]; then extra=$(echo "$out" | sed -n 's/^fstat(GETATTR).*median_us=\([0-9.]*\).*/\1/p'); fi
  if [ $t = list ]; then
    n=$(echo "$out" | sed -n 's/^listed \([0-9]*\) .*/\1/p')
    [ "$n" -ge 2000 ] || { echo "list on $s gave $n entries" >&2; exit 1; }
  fi
  echo "$s $t $r $(echo "$t1 - $t0" | bc) $(echo "scale=3; ($c1 - $c0) / $TCK" | bc) $extra"
}

RES=$W/results.txt
for r in $(seq $ROUNDS); do
  for t in $TESTS; do
    # rotate the order each round so no server always runs first
    set -- $SERVERS; local_n=$#
    order=""; for k in $(seq 0 $((local_n - 1))); do
      i=$(( (k + r) % local_n + 1 )); order="$order ${!i}"
    done
    for s in $order; do run $s $t $r | tee -a $RES; done
  done
done

echo "pin_server=${PIN_SERVER:-no} pin_client=${PIN_CLIENT:-no} getattr_n=$GETATTR_N load=$(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$RES" "$ROUNDS" "$TESTS" <<'PY'
import sys, statistics as st, collections
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
# value per (server, test, round): getattr is the median latency, par the driver's
# own elapsed time (setup excluded), every other test the wall time of the run.
val = lambda r: float(r[5]) / 1e6 if r[1].startswith("getattr") else float(r[5]) if r[1] == "par" else float(r[3])
v = {(r[0], r[1], int(r[2])): (val(r), float(r[4])) for r in rows}
tests = [t for t in ["write", "read", "create", "list", "getattr", "getattr-near", "getattr-apart", "par"] if t in sys.argv[3].split()]
label = {"write": "write 256 MiB (s)", "read": "read 256 MiB (s)", "create": "create 2,000 x 4 KiB (s)",
         "list": "list 2,000 (s)", "getattr": "GETATTR median (us)",
         "getattr-near": "GETATTR median, pinned, server on the client's CPU (us)",
         "getattr-apart": "GETATTR median, pinned, server on another CPU (us)", "par": "8 streams, one connection (s)"}
servers = tuple(s for s in ("semfs", "nfsonly", "ganesha", "gonfs", "policy") if any(k[0] == s for k in v))
def ratios(s, t, i=0):  # i=0: the measured value; i=1: the server's CPU
    return [v[(s, t, k)][i] / v[("ganesha", t, k)][i] for (x, tt, k) in v
            if x == s and tt == t and ("ganesha", t, k) in v and v[("ganesha", t, k)][i] > 0]
print(f"rounds={sys.argv[2]}")
print()
pol = "policy" in servers
print("| test | semfs (daemon) | nfs/ only | ganesha | go-nfs raw | semfs/ganesha (median, min-max of rounds) | nfs/ only/ganesha | met (<= 1.0) | server CPU semfs/ganesha (median, min-max) |"
      + (" semfs+policy/ganesha (median, min-max) | server CPU semfs+policy/ganesha |" if pol else ""))
print("|---|---|---|---|---|---|---|---|---|" + ("---|---|" if pol else ""))
for t in tests:
    m = {s: st.median([x[0] for (a, b, _), x in v.items() if a == s and b == t]) for s in servers}
    c = {s: st.median([x[1] for (a, b, _), x in v.items() if a == s and b == t]) for s in servers}
    f = (lambda x: f"{x*1e6:.0f}") if t.startswith("getattr") else (lambda x: f"{x:.3f}")
    cell = lambda s: f"{f(m[s])} (srv {c[s]:.2f} s)"
    rs, r2, rc = ratios("semfs", t), ratios("nfsonly", t), ratios("semfs", t, 1)
    med = st.median(rs)
    cpu = f"{st.median(rc):.2f} ({min(rc):.2f}-{max(rc):.2f})" if rc else "n/a (ganesha used < 1 tick)"
    print(f"| {label[t]} | {cell('semfs')} | {cell('nfsonly')} | {cell('ganesha')} | {cell('gonfs')} | "
          f"{med:.2f} ({min(rs):.2f}-{max(rs):.2f}) | {st.median(r2):.2f} | {'yes' if med <= 1.0 else 'no'} | {cpu} |"
          + ((lambda p, pc: f" {st.median(p):.2f} ({min(p):.2f}-{max(p):.2f}) | {st.median(pc) if pc else float('nan'):.2f} |")(ratios("policy", t), ratios("policy", t, 1)) if pol else ""))
print()
print("per-round ratios semfs/ganesha:")
for t in tests:
    print(f"  {t}: " + " ".join(f"{x:.2f}" for x in ratios("semfs", t)))
if pol:
    print("per-round ratios semfs+policy/ganesha:")
    for t in tests:
        print(f"  {t}: " + " ".join(f"{x:.2f}" for x in ratios("policy", t)))
PY
