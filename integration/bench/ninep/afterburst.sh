#!/usr/bin/env bash
# A/B of semfs builds on what follows a burst of writes: each round starts a
# fresh daemon of each build in turn (the order rotating each round), creates
# FILES files of 4 KiB over 9P (p9load create), then lists them with their
# attributes at once (p9load listl), while the daemon's background indexers
# have the new files to read. Per build and round it prints the create and
# listing times and the daemon's CPU ticks over each; a summary gives the
# medians and, against the first build, the median of the same-round ratios
# with their spread. run.sh's create and list rows measure the same steps on a
# daemon that has served earlier rows; this isolates them.
#
#   bash integration/bench/ninep/afterburst.sh ROUNDS NAME=BIN NAME=BIN...
#
# BIN is a semfs executable (go build -o /tmp/semfs-x ./cmd/semfs in a worktree
# of the commit). MODEL sets the model directory (default embed/model/dist),
# FILES the burst (default 2000), PORT the 9P port (default 15692).
set -eu
[ $# -ge 3 ] || { echo "usage: afterburst.sh ROUNDS NAME=BIN NAME=BIN..." >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
MODEL=${MODEL:-$repo/embed/model/dist}
FILES=${FILES:-2000}
PORT=${PORT:-15692}
[ -f "$MODEL/model.json" ] || { echo "no model in $MODEL: run make model" >&2; exit 3; }
R=$1
shift
names=() bins=()
for a in "$@"; do names+=("${a%%=*}"); bins+=("${a#*=}"); done
work=$(mktemp -d /tmp/afterburst.XXXXXX)
pid=
cleanup() {
	[ -z "$pid" ] || kill "$pid" 2>/dev/null || true
	wait 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
(cd "$repo" && go build -o "$work/p9load" ./integration/bench/ninep/p9load)
ticks() { awk '{print $14+$15}' "/proc/$pid/stat"; }
secs() { sed -n 's/.*secs=\([0-9.]*\).*/\1/p'; }
load() { "$work/p9load" -addr "127.0.0.1:$PORT" -aname / -msize 65536 "$@"; }
one() { # BIN NAME ROUND
	local d=$work/run t0 t1 t2 c l
	rm -rf "$d"
	mkdir -p "$d/data" "$d/index"
	"$1" serve --data "$d/data" --index "$d/index" --socket "$d/s.sock" --nfs off \
		--9p "127.0.0.1:$PORT" --model-dir "$MODEL" --log-level warn >"$d/log" 2>&1 &
	pid=$!
	# The daemon listens once the model is in and the start-up reconcile is
	# done (serve opens the index, which waits for the model, then reconciles,
	# then listens): a first connection means it is ready.
	for _ in $(seq 300); do (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break; sleep 0.1; done
	t0=$(ticks)
	c=$(load create c "$FILES" | secs)
	t1=$(ticks)
	l=$(load listl c | secs)
	t2=$(ticks)
	echo "$2 $3 create=$c list=$l create_ticks=$((t1 - t0)) list_ticks=$((t2 - t1))"
	kill "$pid"
	wait "$pid" 2>/dev/null || true
	pid=
}
n=${#names[@]}
for r in $(seq "$R"); do
	for k in $(seq 0 $((n - 1))); do
		j=$(((k + r) % n))
		one "${bins[$j]}" "${names[$j]}" "$r"
	done
done | tee "$work/results"
awk -v base="${names[0]}" '
	{ for (i = 3; i <= NF; i++) { split($i, kv, "="); v[$1, $2, kv[1]] = kv[2]; keys[kv[1]] = 1 }
	  b[$1] = 1; rounds[$2] = 1 }
	function median(a, n,   i, j, t) {
		for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] > a[j]; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
		return n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2
	}
	END {
		for (x in b) for (k in keys) {
			n = 0; m = 0; delete a; delete q
			for (r in rounds) if ((x, r, k) in v) {
				a[++n] = v[x, r, k]
				if (x != base && (base, r, k) in v && v[base, r, k] > 0) q[++m] = v[x, r, k] / v[base, r, k]
			}
			line = sprintf("%s %s median %.4g", x, k, median(a, n))
			if (m > 0) { med = median(q, m); line = line sprintf(", /%s %.3f (%.2f-%.2f)", base, med, q[1], q[m]) }
			print line
		}
	}' "$work/results" | sort
