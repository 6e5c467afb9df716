"""The statistics of a paired comparison: the mean change over questions, its bootstrap
interval, and the rule that calls a change a regression.

Two runs of the same golden set are compared question by question: for one (section, type,
metric), ``d_j = new_j - old_j`` over the questions that have a value in both runs. The mean of
``d`` is the change; its 95 % interval is the percentile bootstrap (resample the n changes with
replacement, take the mean, 2.5th and 97.5th percentiles of those means). A mean of a mean on
five questions is noise; the paired interval says how much.

The evidence is an exact test, not the interval: the paired sign-flip test
(``sign_flip_tails``), whose p-value depends on the changes alone, so a decision never depends
on a type's name, the order of the questions or a seed. The interval is for reading (it is
drawn with one fixed seed from the sorted changes, so it too is a function of the changes).
The rule (``classify``, then ``judge.results.compare.decide`` over a night's family of checks
with Holm's rule, ``holm``): ``regressed`` when the fall is shown (p within the level) and the
mean fell by more than the metric's margin; ``improved`` symmetrically; ``listed``
when the mean moved beyond the margin with some evidence (p at most ``LIST_LEVEL``) but not
enough; otherwise ``noise``.

Nothing here knows about runs or files: ``judge.results.compare`` applies it per type.
"""

from __future__ import annotations

import functools
import hashlib
import math
from statistics import NormalDist
from typing import TYPE_CHECKING, Literal

# numpy is imported by the functions that compute with it: rendering a record (judge report)
# needs none of it, and it is a tenth of the command's start-up.
if TYPE_CHECKING:
    import numpy.typing as npt


Direction = Literal["collapsed", "regressed", "improved", "listed", "noise"]
#: The sums a sign-flip distribution may hold before its tails are taken from the normal
#: approximation instead (only metrics with many distinct changes, such as mrr on thousands of
#: questions, get there; 0-2 scores and 0/1 metrics never do).
EXACT_SUPPORT = 200_000

#: Bootstrap resamples per interval: enough that the 2.5th percentile moves by a small fraction
#: of the interval's width from one seed to another (tests/results/test_paired.py).
RESAMPLES = 2000
LEVEL = 0.95
#: Resampling by index draws (resamples x n) numbers: done in blocks of about this many values,
#: so that a 10,000-question run needs tens of megabytes, not gigabytes.
BLOCK_VALUES = 1_000_000
#: Changes equal to within this are equal (means of floats are not exact).
EPS = 1e-9
#: A move beyond the margin whose own one-sided p-value is at most this, but that the night's
#: family-wise level does not call, is listed ("worth a look"); above it, it is noise.
LIST_LEVEL = 0.10


def seed_for(*names: str) -> int:
    """A seed from names (section, type, metric): the same comparison always draws the same
    resamples, so re-rendering a report gives the same interval."""
    digest = hashlib.sha256("\x1f".join(names).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big")


def bootstrap_interval(
    changes: npt.ArrayLike, seed: int, resamples: int = RESAMPLES, level: float = LEVEL
) -> tuple[float, float]:
    """The percentile bootstrap interval of the mean of ``changes`` (at least one value).

    Scores and 0/1 metrics change by a handful of distinct amounts (mostly 0), so when the
    distinct changes are few the resampling draws how many times each one is picked (one
    multinomial per resample: the same distribution as drawing indices, k numbers instead of
    n); otherwise it draws indices, a block of resamples at a time.
    """
    import numpy as np

    d = np.asarray(changes, dtype=float)
    if d.size == 0:
        raise ValueError("bootstrap_interval needs at least one change")
    return _interval(d.tobytes(), seed, resamples, level)


@functools.lru_cache(maxsize=8192)
def _interval(data: bytes, seed: int, resamples: int, level: float) -> tuple[float, float]:
    """``bootstrap_interval`` of the changes whose float64 bytes are ``data``, remembered: a
    night's cells repeat a few multisets of changes (one question losing a point among twelve)
    and the gate's simulation drew 8,600 intervals of 502 distinct ones. The interval is a
    function of its arguments alone (a seeded generator), so a remembered one is the same."""
    import numpy as np

    d = np.frombuffer(data, dtype=float)
    n = d.size
    values, counts = np.unique(d, return_counts=True)
    if values.size == 1:  # every resample has the same mean
        return float(values[0]), float(values[0])
    rng = np.random.default_rng(seed)
    if values.size * 10 < n:
        picked = rng.multinomial(n, counts / n, size=resamples)
        means = picked @ values / n
    else:
        means = np.empty(resamples)
        block = max(1, BLOCK_VALUES // n)
        for start in range(0, resamples, block):
            stop = min(resamples, start + block)
            means[start:stop] = d[rng.integers(0, n, size=(stop - start, n))].mean(axis=1)
    tail = (1.0 - level) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    # Rounded: a sum of floats can land a hair below 0 where the exact mean is 0.
    return round(float(low), 12), round(float(high), 12)


def sign_flip_tails(changes: npt.ArrayLike) -> tuple[float, float]:
    """The exact one-sided p-values of the paired sign-flip (randomization) test of the mean
    change: ``(P(S* <= S), P(S* >= S))`` where ``S`` is the sum of the changes and ``S*`` the
    sum with each change's sign flipped at random (what "nothing changed" means for two runs of
    the same system: either run could have been the first).

    Exact, not resampled: the changes are grouped by size, a group of ``c`` changes of size ``m``
    adds ``m (2k - c)`` with ``k ~ Binomial(c, 1/2)``, and the groups are convolved. It depends
    on the multiset of changes only (not on names, order or a seed), so a decision never flips
    between two renderings or two names of a type. Changes of 0 carry no information and are
    left out (n only matters through the changes that happened). When the distribution would
    hold more than ``EXACT_SUPPORT`` distinct sums, its normal approximation is used.
    """
    import numpy as np

    d = np.asarray(changes, dtype=float)
    d = d[np.abs(d) > EPS]
    if d.size == 0:
        return 1.0, 1.0
    observed = float(d.sum())
    sizes, counts = np.unique(np.round(np.abs(d), 9), return_counts=True)
    support = 1.0
    for c in counts:
        support *= float(c) + 1.0
    if support > EXACT_SUPPORT:
        sd = math.sqrt(float((d * d).sum()))
        z = observed / sd
        below = NormalDist().cdf(z)
        return below, 1.0 - below
    dist: dict[float, float] = {0.0: 1.0}
    for size, count in zip(sizes.tolist(), counts.tolist(), strict=True):
        head = math.lgamma(count + 1) - count * math.log(2.0)
        weights = [
            math.exp(head - math.lgamma(k + 1) - math.lgamma(count - k + 1))
            for k in range(count + 1)
        ]
        steps = [round(size * (2 * k - count), 9) for k in range(count + 1)]
        merged: dict[float, float] = {}
        for total, p in dist.items():
            for step, w in zip(steps, weights, strict=True):
                key = round(total + step, 9)
                merged[key] = merged.get(key, 0.0) + p * w
        dist = merged
    tolerance = 1e-7
    total = math.fsum(dist.values())  # 1 up to rounding: dividing by it keeps 1 exact
    below = math.fsum(p for s, p in dist.items() if s <= observed + tolerance) / total
    above = math.fsum(p for s, p in dist.items() if s >= observed - tolerance) / total
    return min(1.0, below), min(1.0, above)


def holm(p_values: list[float], level: float) -> list[bool]:
    """Holm's step-down rule over a family of p-values: which are rejected at family-wise
    ``level`` (the smallest p against level/m, the next against level/(m-1), ...; stop at the
    first that fails). Ties are broken by position, which cannot change a decision (equal
    p-values pass or fail together up to the step that stops)."""
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    rejected = [False] * len(p_values)
    m = len(p_values)
    for rank, index in enumerate(order):
        if p_values[index] > level / (m - rank):
            break
        rejected[index] = True
    return rejected


def classify(delta: float, p_fall: float, p_rise: float, margin: float, level: float) -> Direction:
    """One change on its own: ``regressed`` when its fall has an exact p-value of at most
    ``level`` and the mean fell by more than ``margin``; ``improved`` symmetrically;
    ``listed`` when the mean moved beyond the margin with a p-value of at most
    ``LIST_LEVEL`` but not ``level``; otherwise ``noise``. A night's changes are decided
    together (``judge.results.compare.decide``)."""
    if abs(delta) <= margin + EPS:
        return "noise"
    p = p_fall if delta < 0 else p_rise
    if p <= level:
        return "regressed" if delta < 0 else "improved"
    return "listed" if p <= LIST_LEVEL + EPS else "noise"
