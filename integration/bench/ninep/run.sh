#!/usr/bin/env bash
# Side-by-side 9P2000.L benchmark: semfs as users run it (`semfs serve`, the real
# daemon with its index on and the USE-lite model loaded) against diod, same
# client (p9load: hugelgupf/p9's client speaking plain 9P2000.L with a real
# n_uname, on one proc like a kernel client's one request at a time) and same
# data, on loopback. msize 64 KiB for both (diod's cap), plus the daemon at msize
# 1 MiB, plus a second column "adapter": semfs9p, the 9P adapter over the core
# without the index. Rows: write, read, create, list with attributes, getattr
# latency, and "par", eight streams at once on ONE connection (reads, writes,
# creates, stats; p9load par). Rounds alternate the servers (the order rotates
# each round, reversed every other round) so machine drift hits each alike; medians per row, and ratios as
# the median of same-round pairs with their spread (min-max). A second table
# gives the server's CPU time (user+system, from /proc) for the same runs.
#
#   bash integration/bench/ninep/run.sh            # ROUNDS=7 SIZE_MIB=256 FILES=2000 STATS=2000
#
# POLICY=FILE adds a target "policy": a second daemon, the same as "semfs" but
# with --policy FILE and attached as app "bench" (aname @bench), in the same
# rotation, so a policy's cost is read in the same run (issue 26; see
# ../policy.json, deploy's example plus rules for @bench).
#
# BASE=BIN adds a target "base": the daemon built from another commit (e.g.
# `git worktree add /tmp/old C && (cd /tmp/old && go build -o /tmp/semfs-old
# ./cmd/semfs)`), started as "semfs" is, in the same rotation; a last table gives
# semfs/base per row, wall and server CPU, paired by round: the same-run
# before/after of a change (issue 30), as ../nfs/ab.sh gives for NFS.
#
# Needs: go, diod (Debian package "diod"). Exit 3 when a prerequisite is missing.
set -euo pipefail

ROUNDS=${ROUNDS:-7}
SIZE_MIB=${SIZE_MIB:-256}
FILES=${FILES:-2000}
STATS=${STATS:-2000}
SEMFS_PORT=${SEMFS_PORT:-15640}
DIOD_PORT=${DIOD_PORT:-15641}
ADAPTER_PORT=${ADAPTER_PORT:-15642}
POLICY_PORT=${POLICY_PORT:-15643}
BASE_PORT=${BASE_PORT:-15644}

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
repo=$(cd "$here/../../.." && pwd)
command -v diod >/dev/null || { echo "diod is not installed (apt-get install diod)" >&2; exit 3; }
command -v go >/dev/null || { echo "go is not installed" >&2; exit 3; }

MODEL=${MODEL:-$repo/embed/model/dist}
[ -f "$MODEL/model.json" ] || { echo "no model in $MODEL: run make model" >&2; exit 3; }

work=$(mktemp -d /tmp/ninep-bench.XXXXXX)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do
		for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
	done
	rm -rf "$work"
}
trap cleanup EXIT

mkdir -p "$work/bin" "$work/diod" "$work/semfs" "$work/index" "$work/adapter" "$work/policy" "$work/policy-index" \
	"$work/base" "$work/base-index"
(cd "$repo" && go build -o "$work/bin/semfs9p" ./integration/bench/ninep/semfs9p \
	&& go build -o "$work/bin/semfs" ./cmd/semfs \
	&& go build -o "$work/bin/p9load" ./integration/bench/ninep/p9load)

diod -f -n -l "127.0.0.1:$DIOD_PORT" -e "$work/diod" -L "$work/diod.log" &
pids+=($!)
"$work/bin/semfs" serve --data "$work/semfs" --index "$work/index" --socket "$work/semfs.sock" \
	--nfs off --9p "127.0.0.1:$SEMFS_PORT" --model-dir "$MODEL" --log-level warn 2>"$work/semfs.log" &
pids+=($!)
"$work/bin/semfs9p" -dir "$work/adapter" -addr "127.0.0.1:$ADAPTER_PORT" 2>"$work/adapter.log" &
pids+=($!)
ports=("$DIOD_PORT" "$SEMFS_PORT" "$ADAPTER_PORT")
if [ -n "${POLICY:-}" ]; then
	"$work/bin/semfs" serve --data "$work/policy" --index "$work/policy-index" --socket "$work/policy.sock" \
		--nfs off --9p "127.0.0.1:$POLICY_PORT" --model-dir "$MODEL" --log-level warn --policy "$POLICY" 2>"$work/policy.log" &
	pids+=($!)
	ports+=("$POLICY_PORT")
fi
if [ -n "${BASE:-}" ]; then
	"$BASE" serve --data "$work/base" --index "$work/base-index" --socket "$work/base.sock" \
		--nfs off --9p "127.0.0.1:$BASE_PORT" --model-dir "$MODEL" --log-level warn 2>"$work/base.log" &
	pids+=($!)
	ports+=("$BASE_PORT")
fi
wait_ports "${ports[@]}"

# target name -> "port aname msize backing-dir"
declare -A T=(
	[diod]="$DIOD_PORT $work/diod 65536 $work/diod"
	[semfs]="$SEMFS_PORT / 65536 $work/semfs"
	[semfs-1M]="$SEMFS_PORT / 1048576 $work/semfs"
	[adapter]="$ADAPTER_PORT / 65536 $work/adapter"
)
order=(diod semfs semfs-1M adapter)
# target name -> server pid, for the server's CPU time (user+system) per run
declare -A PID=([diod]=${pids[0]} [semfs]=${pids[1]} [semfs-1M]=${pids[1]} [adapter]=${pids[2]})
if [ -n "${POLICY:-}" ]; then
	T[policy]="$POLICY_PORT @bench 65536 $work/policy"
	PID[policy]=${pids[3]}
	order+=(policy)
fi
if [ -n "${BASE:-}" ]; then
	T[base]="$BASE_PORT / 65536 $work/base"
	PID[base]=${pids[-1]}
	order+=(base)
fi
res="$work/results"
cpures="$work/cpu"
: >"$res"
: >"$cpures"
TCK=$(getconf CLK_TCK)
cpu() { awk '{print $14+$15}' "/proc/${PID[$1]}/stat"; }
# measure TARGET OP FIELD ROUND ARGS...: one p9load run; its FIELD goes to
# $res and the server's CPU seconds over the run to $cpures.
measure() {
	local t=$1 op=$2 f=$3 r=$4 c0 c1 v
	shift 4
	c0=$(cpu "$t")
	v=$(load "$t" "$@" | field "$f")
	c1=$(cpu "$t")
	echo "$t $op $v $r" >>"$res"
	echo "$t $op $(echo "scale=3; ($c1 - $c0) / $TCK" | bc) $r" >>"$cpures"
}

load() { # target op args...
	local t=$1; shift
	read -r port aname msize _ <<<"${T[$t]}"
	"$work/bin/p9load" -addr "127.0.0.1:$port" -aname "$aname" -msize "$msize" "$@"
}
field() { sed -n "s/.*$1=\([0-9.]*\).*/\1/p"; }

for r in $(seq "$ROUNDS"); do
	for k in "${!order[@]}"; do
		# Rotated each round, and reversed every other round: a rotation
		# alone keeps each target after the same one (which has just removed
		# its files: the file system's allocator can carry that over).
		n=${#order[@]}
		if (( r % 2 )); then t=${order[$(( (k + r) % n ))]}; else t=${order[$(( (n - 1 - k + r) % n ))]}; fi
		dir=$(awk '{print $4}' <<<"${T[$t]}")
		echo "round $r: $t" >&2
		measure "$t" write secs "$r" write "big$r.bin" "$SIZE_MIB"
		measure "$t" read secs "$r" read "big$r.bin"
		# rm frees the file's page cache: write(2) into a page cache filled by
		# earlier files costs several times the system CPU (see ../nfs/bench.sh)
		rm -f "$dir/big$r.bin"
		measure "$t" create secs "$r" create "c$r" "$FILES"
		measure "$t" listl secs "$r" listl "c$r"
		measure "$t" getattr_us median_us "$r" getattr "c$r/f00000" "$STATS"
		rm -rf "${dir:?}/c$r"
		measure "$t" par secs "$r" par "p$r"
		rm -rf "${dir:?}/p$r"
	done
done

median() { sort -n | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else printf "%.4f\n", (a[NR/2]+a[NR/2+1])/2}'; }
# ratio TARGET OP: the median over rounds of TARGET's value / diod's in the same
# round (pairs taken minutes apart drift less than medians of each).
ratio() { # TARGET OP [REFERENCE, default diod]
	awk -v t="$1" -v o="$2" -v ref="${3:-diod}" '$2==o && $1==ref {d[$4]=$3} $2==o && $1==t {v[$4]=$3}
		END {for (r in v) if (d[r] > 0) print v[r]/d[r]}' "$res" | median
}
spread() { # TARGET OP [REFERENCE [DIGITS]]: "min-max" of the same-round ratios
	awk -v t="$1" -v o="$2" -v ref="${3:-diod}" '$2==o && $1==ref {d[$4]=$3} $2==o && $1==t {v[$4]=$3}
		END {for (r in v) if (d[r] > 0) print v[r]/d[r]}' "$res" | sort -n |
		awk -v n="${4:-2}" 'NR==1 {lo=$1} {hi=$1} END {printf "%." n "f-%." n "f", lo, hi}'
}
row() { # op label unit
	local d s s1 a
	d=$(awk -v o="$1" '$1=="diod" && $2==o {print $3}' "$res" | median)
	s=$(awk -v o="$1" '$1=="semfs" && $2==o {print $3}' "$res" | median)
	s1=$(awk -v o="$1" '$1=="semfs-1M" && $2==o {print $3}' "$res" | median)
	a=$(awk -v o="$1" '$1=="adapter" && $2==o {print $3}' "$res" | median)
	printf "| %s | %s %s | %s %s | %.2f× (%s) | %s %s | %.2f× (%s) | %s %s | %.2f× |\n" "$2" "$d" "$3" "$s" "$3" \
		"$(ratio semfs "$1")" "$(spread semfs "$1")" "$s1" "$3" "$(ratio semfs-1M "$1")" "$(spread semfs-1M "$1")" \
		"$a" "$3" "$(ratio adapter "$1")"
}
echo
echo "rounds=$ROUNDS size=${SIZE_MIB}MiB files=$FILES stats=$STATS load=$(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| test | diod (64 KiB) | semfs daemon (64 KiB) | semfs/diod (paired, min-max) | semfs daemon (1 MiB) | semfs-1M/diod (paired, min-max) | adapter only (64 KiB) | adapter/diod |"
echo "|---|---|---|---|---|---|---|---|"
row write "write $SIZE_MIB MiB" s
row read "read $SIZE_MIB MiB (hot cache)" s
row create "create $FILES × 4 KiB" s
row listl "list $FILES with attributes" s
row getattr_us "getattr latency (median, same fid)" µs
row par "8 streams on one connection" s
echo
echo "Server CPU (user+system) per run, seconds; ratios paired as above. On a busy"
echo "machine these move far less than the wall times."
echo
echo "| test | diod (64 KiB) | semfs daemon (64 KiB) | semfs/diod (paired, min-max) | semfs daemon (1 MiB) | semfs-1M/diod (paired, min-max) | adapter only (64 KiB) | adapter/diod |"
echo "|---|---|---|---|---|---|---|---|"
wall=$res
res=$cpures
row write "write $SIZE_MIB MiB" s
row read "read $SIZE_MIB MiB (hot cache)" s
row create "create $FILES × 4 KiB" s
row listl "list $FILES with attributes" s
row getattr_us "$STATS getattr" s
row par "8 streams on one connection" s
# against TARGET REFERENCE DIGITS TITLE HEADER: a table of TARGET/REFERENCE per
# row, wall and server CPU, paired by round.
against() {
	local t=$1 ref=$2 n=$3 op label
	echo
	echo "$4"
	echo
	echo "| test | $5 wall (min-max) | $5 server CPU (min-max) |"
	echo "|---|---|---|"
	while IFS='|' read -r op label; do
		printf "| %s | %.${n}f× (%s) | %.${n}f× (%s) |\n" "$label" \
			"$(res=$wall ratio "$t" "$op" "$ref")" "$(res=$wall spread "$t" "$op" "$ref" "$n")" \
			"$(res=$cpures ratio "$t" "$op" "$ref")" "$(res=$cpures spread "$t" "$op" "$ref" "$n")"
	done <<-ROWS
		write|write $SIZE_MIB MiB
		read|read $SIZE_MIB MiB (hot cache)
		create|create $FILES × 4 KiB
		listl|list $FILES with attributes
		getattr_us|getattr latency (median, same fid)
		par|8 streams on one connection
	ROWS
}
if [ -n "${POLICY:-}" ]; then
	against policy diod 2 "With --policy $POLICY (aname @bench), paired with diod in the same rounds:" "semfs+policy/diod"
fi
if [ -n "${BASE:-}" ]; then
	against semfs base 3 "Against BASE=$BASE (msize 64 KiB both), paired in the same rounds:" "semfs/base"
fi
echo
echo "raw results (target op value round):"
cat "$wall"
echo "raw server CPU (target op seconds round):"
cat "$cpures"
