"""The interval the side-by-side scripts give beside a median of same-round ratios.

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
import math
import statistics


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
