#!/bin/bash
# A/B of two semfs builds over 9P: both daemons run at once (index on, model
# loaded), and the same p9load rows alternate between them ROUNDS times (the
# order flips every round), each on its own empty backing directory. Per row:
# the median over rounds of B/A's same-round ratio with its quartiles, a 95 %
# interval of that median (abstat.py: a row whose interval holds 1 is not told
# apart from A by the run), the mean, and the ratio of the daemons' summed CPU
# (user+system) over the row. AB_RESULTS=FILE keeps the per-round lines, so
# that runs taken apart can be pooled (abstat.py FILE FILE...). A row's
# CPU leaves out what a daemon does after it answered (indexing the files just
# written, the host's rm of them): the last line, "round", is each daemon's
# whole CPU over each round (its rows and the other's, and 5 s after a slot's
# last round), background work included. Where run.sh's BASE=
# puts a base build among five targets, this gives two builds more rounds in
# the same time: a change's before/after on a busy machine.
#
#   bash integration/bench/ninep/ab.sh OLD_BIN NEW_BIN [ROUNDS]    # default 20
#
# OPS picks rows among "write read create listl getattr" (default all; create
# always runs, as listl and getattr need its files): write 256 MiB, read it back
# (hot cache), create 2,000 files of 4 KiB, list them with attributes, 2,000
# getattrs of one file. A_ARGS and B_ARGS add flags to each daemon's serve
# command (an A/B of one setting with one binary, e.g. B_ARGS="--content-max 0").
# AB_DIR (default /tmp) holds the backing directories: /dev/shm takes the host
# file system's allocator out of the create row (on an ext4 without a journal,
# a create's inode search swings 2x with what was deleted minutes before). A
# ratio within a few % of 1 is within one run's spread on a shared VM, and a
# slot (port, tree, start order) may favour its daemon by as much: run it
# again with the slots swapped: SLOTS=both runs N rounds as above, then N
# more with each build's daemon started afresh in the other's slot, and
# reports all 2N rounds (BENCHMARKS.md).
# Ports 15710 and 15711. Needs go; exit 3 without the model (make model).
set -euo pipefail
A=$(realpath "$1") B=$(realpath "$2") N=${3:-20}
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
repo=$(cd "$here/../../.." && pwd)
MODEL=${MODEL:-$repo/embed/model/dist}
[ -f "$MODEL/model.json" ] || { echo "no model in $MODEL: run make model" >&2; exit 3; }
OPS=${OPS:-write read create listl getattr}

W=$(mktemp -d "${AB_DIR:-/tmp}/ninep-ab.XXXXXX")
pids=()
stop() { # the daemons running, if any
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	pids=()
}
cleanup() {
	stop
	rm -rf "$W"
}
trap cleanup EXIT
(cd "$repo" && go build -o "$W/p9load" ./integration/bench/ninep/p9load)

# Slot 0 (port 15710) and slot 1 (15711): a daemon's port, backing tree and
# start order. A's daemon is in slot 0 and B's in slot 1; with SLOTS=both the
# daemons are then started afresh the other way round for N rounds more, so
# that what a slot costs falls on both builds alike.
declare -A slot
start() { # start BUILD_IN_SLOT0 BUILD_IN_SLOT1
	local i x bin extra
	stop
	for i in 0 1; do
		if [ $i = 0 ]; then x=$1; else x=$2; fi
		slot[$x]=$i
		if [ "$x" = a ]; then bin=$A extra=${A_ARGS:-}; else bin=$B extra=${B_ARGS:-}; fi
		rm -rf "${W:?}/s$i"
		mkdir -p "$W/s$i/data" "$W/s$i/index"
		# shellcheck disable=SC2086 # extra is a list of flags
		"$bin" serve --data "$W/s$i/data" --index "$W/s$i/index" --socket "$W/s$i/semfs.sock" --nfs off \
			--9p "127.0.0.1:1571$i" --model-dir "$MODEL" --log-level warn $extra >>"$W/$x.log" 2>&1 &
		pids+=($!)
	done
	wait_ports 15710 15711
}

has() { case " $OPS " in *" $1 "*) return 0 ;; esac; return 1; }
cpu() { awk '{print $14+$15}' "/proc/$1/stat"; }
cpu_of() { cpu "${pids[${slot[$1]}]}"; } # cpu_of BUILD: its daemon's CPU ticks so far
# measure X OP FIELD ARGS...: one p9load run against daemon X; "X OP value cpu-ticks round"
measure() {
	local x=$1 op=$2 f=$3 c0 c1 v
	shift 3
	c0=$(cpu_of "$x")
	v=$("$W/p9load" -addr "127.0.0.1:1571${slot[$x]}" "$@" | sed -n "s/.*$f=\([0-9.]*\).*/\1/p")
	c1=$(cpu_of "$x")
	echo "$x $op $v $((c1 - c0)) $r"
}
passes=1
case ${SLOTS:-one} in
one) ;;
both) passes=2 ;;
*) echo "SLOTS is one or both" >&2; exit 2 ;;
esac
for pass in $(seq $passes); do
	if [ "$pass" = 1 ]; then start a b; else start b a; fi
	for r in $(seq $(((pass - 1) * N + 1)) $((pass * N))); do
		if ((r % 2)); then order="a b"; else order="b a"; fi
		ca=$(cpu_of a) cb=$(cpu_of b)
		for x in $order; do
			d=$W/s${slot[$x]}/data
			if has write; then measure "$x" write secs write "big$r.bin" 256; fi
			if has read; then measure "$x" read secs read "big$r.bin"; fi
			rm -f "$d/big$r.bin" # frees its page cache (see ../nfs/bench.sh)
			measure "$x" create secs create "c$r" 2000
			if has listl; then measure "$x" listl secs listl "c$r"; fi
			if has getattr; then measure "$x" getattr median_us getattr "c$r/f00000" 2000; fi
			rm -rf "${d:?}/c$r"
		done
		if [ "$r" = $((pass * N)) ]; then sleep 5; fi # the slot's last round: its background work
		echo "a round 1 $(($(cpu_of a) - ca)) $r"
		echo "b round 1 $(($(cpu_of b) - cb)) $r"
	done
done >"$W/results"

echo "rounds=$((N * passes)) slots=${SLOTS:-one} ops=\"$OPS\" A=$A${A_ARGS:+ ($A_ARGS)} B=$B${B_ARGS:+ ($B_ARGS)} load=$(cut -d' ' -f1-3 /proc/loadavg)"
if [ -n "${AB_RESULTS:-}" ]; then cp "$W/results" "$AB_RESULTS"; fi
python3 "$here/abstat.py" "$W/results"
