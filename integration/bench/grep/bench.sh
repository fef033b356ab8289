#!/bin/bash
# Grep benchmark (issue 25): /v1/grep against ripgrep over the backing
# directory and GNU grep -r, on a corpus of >= 50,000 real text files built
# from local sources (never committed): /usr/share/doc, /usr/include, the Go
# module cache and the Go tree, copied (not linked) into a fresh backing
# directory, until FILES files.
#
#   bash integration/bench/grep/bench.sh [FILES] [ROUNDS]
#
# Prints, per pattern: the answer's match count (all three must agree, or the
# row says so), and the p50 and p90 wall time of ROUNDS runs of each tool; then
# the content index's build rate (bytes indexed / seconds until health says
# nothing is pending), its size on disk against the bytes indexed, and the
# daemon's resident memory per GB indexed. Needs ripgrep (apt-get install
# ripgrep), GNU grep and curl with Unix sockets. Do not run it on a shared
# machine if the numbers are to mean anything.
#
# NFS=1 also times GNU grep -r through a kernel NFS mount of the daemon
# (needs root and mount.nfs).
set -eu
FILES=${1:-60000} ROUNDS=${2:-21}
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
W=$(mktemp -d /tmp/semfs-grepbench.XXXXXX)
DATA=$W/data IDX=$W/index SOCK=$W/semfs.sock
PID=
cleanup() { [ -n "$PID" ] && kill "$PID" 2>/dev/null; wait 2>/dev/null; mountpoint -q $W/mnt 2>/dev/null && umount -l $W/mnt; rm -rf "$W"; }
trap cleanup EXIT
command -v rg >/dev/null || { echo "ripgrep missing: apt-get install ripgrep" >&2; exit 2; }

echo "building the corpus ($FILES files) in $DATA" >&2
mkdir -p "$DATA"
n=0
for src in /usr/share/doc /usr/include "$(go env GOMODCACHE)" "$(go env GOROOT)/src"; do
  [ -d "$src" ] || continue
  while IFS= read -r -d '' f; do
    rel=${f#/}
    mkdir -p "$DATA/$(dirname "$rel")"
    cp "$f" "$DATA/$rel" 2>/dev/null || continue
    n=$((n+1))
    [ $n -ge $FILES ] && break 2
  done < <(find "$src" -type f -size -4M \( -name '*.go' -o -name '*.h' -o -name '*.c' -o -name '*.md' -o -name '*.txt' -o -name '*.html' -o -name 'README*' -o -name '*.json' -o -name '*.py' -o -name '*.s' \) -print0 2>/dev/null)
done
BYTES=$(du -sb "$DATA" | cut -f1)
echo "corpus: $n files, $BYTES bytes" >&2

go build -o $W/semfs "$ROOT/cmd/semfs"
T0=$(date +%s.%N)
$W/semfs serve --data "$DATA" --index "$IDX" --socket "$SOCK" --model-dir off --9p off --nfs 127.0.0.1:0 >$W/out 2>$W/log &
PID=$!
until [ -S "$SOCK" ]; do sleep 0.1; done
health() { curl -s --unix-socket "$SOCK" http://semfs/v1/health; }
until health | python3 -c 'import json,sys; c=json.load(sys.stdin).get("content") or {}; sys.exit(0 if c.get("files",0)>0 and c.get("pending",1)==0 else 1)'; do sleep 0.5; done
T1=$(date +%s.%N)
health | python3 -c '
import json,sys,os
c=json.load(sys.stdin)["content"]; t='"$T1"'-'"$T0"'
size=os.path.getsize("'"$IDX"'/content.idx") if os.path.exists("'"$IDX"'/content.idx") else 0
print(f"index: {c[\"files\"]} files, {c[\"bytes\"]/1e6:.0f} MB of text in {t:.1f} s = {c[\"bytes\"]/1e6/t:.1f} MB/s (start-up reconcile included); skipped {c[\"skipped\"]}")'
kill -TERM $PID; wait $PID || true   # a clean stop saves content.idx
$W/semfs serve --data "$DATA" --index "$IDX" --socket "$SOCK" --model-dir off --9p off --nfs 127.0.0.1:0 >$W/out 2>>$W/log &
PID=$!
until [ -S "$SOCK" ] && health >/dev/null 2>&1; do sleep 0.1; done
python3 - "$IDX" "$PID" "$SOCK" <<'PY'
import json, os, sys, subprocess
idx, pid, sock = sys.argv[1], sys.argv[2], sys.argv[3]
size = os.path.getsize(os.path.join(idx, "content.idx"))
h = json.loads(subprocess.check_output(["curl", "-s", "--unix-socket", sock, "http://semfs/v1/health"]))
b = h["content"]["bytes"]
rss = int([l for l in open(f"/proc/{pid}/status") if l.startswith("VmRSS")][0].split()[1]) * 1024
print(f"on disk: {size/1e6:.1f} MB = {size/b:.2f}x the indexed bytes; resident {rss/1e6:.0f} MB = {rss/1e6/(b/1e9):.0f} MB per GB indexed")
PY

# Patterns: a selective literal, a regex with a required literal, a common word.
PATTERNS=("ENOTRECOVERABLE" "func [A-Z][a-zA-Z]*Timeout\\(" "errno.*EAGAIN" "(?i)copyright")
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)], a[int(NR*0.9+0.5)]}'; }
printf "%-32s %8s %14s %14s %14s\n" pattern matches "semfs p50/p90" "rg p50/p90" "grep p50/p90"
for p in "${PATTERNS[@]}"; do
  gp=${p#(?i)}; gflag=; [ "$gp" != "$p" ] && gflag=-i
  body=$(python3 -c 'import json,sys; p=sys.argv[1]; print(json.dumps({"pattern":p,"limit":1000000}))' "$p")
  sm=$(curl -s --unix-socket "$SOCK" -d "$body" http://semfs/v1/grep | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["matches"]))')
  rm_=$( (cd "$DATA" && rg -n --no-messages $gflag -e "$gp" . | wc -l) )
  gm=$( (cd "$DATA" && LC_ALL=C.UTF-8 grep -rnE $gflag -e "$gp" . 2>/dev/null | wc -l) )
  agree=""; [ "$sm" = "$gm" ] || agree=" (grep $gm, rg $rm_)"
  ts=$(for i in $(seq $ROUNDS); do /usr/bin/time -f %e curl -s -o /dev/null --unix-socket "$SOCK" -d "$body" http://semfs/v1/grep 2>&1; done | median)
  tr=$(for i in $(seq $ROUNDS); do (cd "$DATA" && /usr/bin/time -f %e rg -n --no-messages $gflag -e "$gp" . >/dev/null) 2>&1; done | median)
  tg=$(for i in $(seq $ROUNDS); do (cd "$DATA" && LC_ALL=C.UTF-8 /usr/bin/time -f %e grep -rnE $gflag -e "$gp" . >/dev/null 2>&1) 2>&1 | tail -1; done | median)
  printf "%-32s %8s %14s %14s %14s%s\n" "$p" "$sm" "$ts" "$tr" "$tg" "$agree"
done
if [ "${NFS:-0}" = 1 ]; then
  port=$(grep -o 'nfs *127.0.0.1:[0-9]*' $W/out | grep -o '[0-9]*$')
  mkdir -p $W/mnt && mount -t nfs -o vers=3,proto=tcp,port=$port,mountport=$port,nolock 127.0.0.1:/ $W/mnt
  for p in "${PATTERNS[@]}"; do
    gp=${p#(?i)}; gflag=; [ "$gp" != "$p" ] && gflag=-i
    tn=$(for i in $(seq 3); do (cd $W/mnt && LC_ALL=C.UTF-8 /usr/bin/time -f %e grep -rnE $gflag -e "$gp" . >/dev/null 2>&1) 2>&1 | tail -1; done | median)
    printf "%-32s GNU grep -r over kernel NFS p50/p90: %s\n" "$p" "$tn"
  done
fi
