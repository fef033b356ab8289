"""The summary the side-by-side scripts give: medians of same-round ratios, each
with a 95 % interval.

    python3 integration/bench/median.py ROUNDS_FILE [SKIP_KEY...]

summarises the "BUILD round=R key=value ..." lines nfs/ab.sh and mixed/ab.sh
write (BUILD a or b): per key, the medians of a and of b and the median of the
same-round ratios b/a, with their min-max and interval; SKIP_KEY names keys
that are not measurements (a round's number, a load's fixed settings).
ninep/abstat.py reads ninep/ab.sh's own lines through interval.

The rounds' ratios on a shared VM are skewed and heavy-tailed, so a normal
interval of their mean would claim more than the data say. The median's
distribution-free interval needs nothing but independent rounds: the order
statistics whose ranks a binomial(n, 1/2) puts 1.96 standard deviations either
side of n/2 hold the median with probability at least 0.95 (0.967-0.988 for
20-160 rounds; 1 - 2^(1-n) below 6 rounds, where it is the whole range). A row
whose interval holds 1 is not told apart from its base by the run. An interval
that excludes 1 tells two binaries apart, not why: the rounds of one daemon's
life share what it happened to get (a slot, a heap, where its threads run), and
two builds of near-identical code can differ by a few % on a shared VM
(docs/benchmarks-history.md, 2026-12-06 04:21 UTC); a null A/B, one binary as
both A and B, shows a run's own floor.
"""
import collections
import math
import statistics
import sys


def interval(values):
    """(low, high): a 95 % interval of the median of values (at least one)."""
    s = sorted(values)
    n = len(s)
    half = 0.98 * math.sqrt(n)  # 1.96 * sqrt(n) / 2
    lo = max(0, math.floor(n / 2 - half) - 1)  # 0-based ranks
    hi = min(n - 1, math.ceil(n / 2 + half))
    return s[lo], s[hi]


def describe(ratios):
    """'median (min-max; 95 % low-high)' of same-round ratios (at least one)."""
    lo, hi = interval(ratios)
    return f"{statistics.median(ratios):.3f} ({min(ratios):.3f}-{max(ratios):.3f}; 95 % {lo:.3f}-{hi:.3f})"


def summarize(path, skip=("round",)):
    """Print the summary of the round lines in path, leaving out the keys in skip."""
    rows = collections.defaultdict(dict)  # (build, key) -> {round: value}
    keys = []
    for line in open(path):
        f = line.split()
        kv = dict(x.split("=", 1) for x in f[1:] if "=" in x)
        for k, v in kv.items():
            if k in skip:
                continue
            try:
                rows[(f[0], k)][int(kv["round"])] = float(v)
            except ValueError:
                continue  # not a number: a label, not a measurement
            if k not in keys:
                keys.append(k)
    print("summary: median a | median b | b/a same-round (median (min-max; 95 % interval of the median))")
    for k in keys:
        a, b = rows.get(("a", k), {}), rows.get(("b", k), {})
        if not a or not b:
            continue
        rs = [b[r] / a[r] for r in a if r in b and a[r] > 0]
        ra = describe(rs) if rs else "-"
        print(f"  {k}: {statistics.median(a.values()):.6g} | {statistics.median(b.values()):.6g} | {ra}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    summarize(sys.argv[1], ("round", *sys.argv[2:]))
