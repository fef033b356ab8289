#!/usr/bin/env python3
"""Summarise ab.sh's per-round results (one file, or several runs pooled).

    python3 integration/bench/ninep/abstat.py RESULTS [RESULTS...]

Each line is "BUILD ROW VALUE CPU_TICKS ROUND" (BUILD a or b). Per row: the
median over rounds of B/A's same-round ratio, its quartiles, a 95 % interval
of that median (../median.py: a row whose interval holds 1 is not told apart
from its base by the run), the mean, and B/A of the summed CPU. Files given
together are pooled: a round is keyed by file and round number, so runs taken
apart in time add up (each still pairs its own A and B).
"""
import os
import statistics as st
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from median import interval  # noqa: E402


def spread(ratios):
    q = st.quantiles(ratios, n=4) if len(ratios) > 1 else [ratios[0]] * 3
    lo, hi = interval(ratios)
    return f"{st.median(ratios):.3f} ({q[0]:.3f}-{q[2]:.3f}) | {lo:.3f}-{hi:.3f} | {st.mean(ratios):.3f}"


def main(paths):
    rows = {}
    for k, path in enumerate(paths):
        for line in open(path):
            x, op, v, c, r = line.split()
            rows.setdefault(op, {}).setdefault((k, r), {})[x] = (float(v), int(c))
    print("| row | pairs | B/A wall, median (quartiles) | 95 % interval of the median | mean | B/A server CPU (sums) |")
    print("|---|---|---|---|---|---|")
    for op, rounds in rows.items():
        pairs = [v for v in rounds.values() if "a" in v and "b" in v and v["a"][0] > 0]
        if not pairs:
            continue
        cpu = sum(v["b"][1] for v in pairs) / max(1, sum(v["a"][1] for v in pairs))
        if op == "round":  # no wall time: the CPU ratio's own spread instead
            ratios = [v["b"][1] / v["a"][1] for v in pairs if v["a"][1] > 0]
            if not ratios:
                continue
            print(f"| round (CPU) | {len(ratios)} | {spread(ratios)} | {cpu:.3f} |")
            continue
        print(f"| {op} | {len(pairs)} | {spread([v['b'][0] / v['a'][0] for v in pairs])} | {cpu:.3f} |")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
