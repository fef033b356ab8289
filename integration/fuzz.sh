#!/usr/bin/env bash
# Runs every Go native fuzz target in the module for a bounded time each
# (FUZZTIME, default 10s), so that the decoders and control routes that face
# hostile input are fuzzed on every CI run, not only replayed from their corpora
# (plain `go test` does that). Targets are discovered, so a new FuzzXxx needs no
# edit here. A crash fails the run; Go writes the failing input under the
# package's testdata/fuzz/FuzzXxx/, which is committed with the fix.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
FUZZTIME=${FUZZTIME:-10s}
n=0
for pkg in $($GO list ./...); do
	targets=$($GO test -list '^Fuzz' "$pkg" 2>/dev/null | grep '^Fuzz' || true)
	for t in $targets; do
		echo "fuzz: $pkg $t ($FUZZTIME)"
		# -parallel 2: the CI machine has two cores; more workers only contend.
		$GO test -run '^$' -fuzz "^${t}\$" -fuzztime "$FUZZTIME" -parallel 2 "$pkg"
		n=$((n + 1))
	done
done
echo "fuzz: $n targets ran for $FUZZTIME each without a crash"
