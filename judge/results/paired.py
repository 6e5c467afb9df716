"""The statistics of a paired comparison: the mean change over questions, its bootstrap
interval, and the rule that calls a change a regression.

Two runs of the same golden set are compared question by question: for one (section, type,
metric), ``d_j = new_j - old_j`` over the questions that have a value in both runs. The mean of
``d`` is the change; its 95 % interval is the percentile bootstrap (resample the n changes with
replacement, take the mean, 2.5th and 97.5th percentiles of those means). A mean of a mean on
five questions is noise; the paired interval says how much.

The rule (``classify``): a change is ``regressed`` only when the interval lies wholly below
zero, the mean fell by more than the metric's margin, and there are at least ``min_questions``
pairs; ``improved`` symmetrically; ``too_few`` when the mean moved beyond the margin on fewer
pairs (listed, never a regression); otherwise ``noise``.

Nothing here knows about runs or files: ``judge.results.compare`` applies it per type.
"""

from __future__ import annotations

import hashlib
from typing import Literal

import numpy as np
import numpy.typing as npt

Direction = Literal["improved", "regressed", "too_few", "noise"]

#: Bootstrap resamples per interval: enough that the 2.5th percentile moves by a small fraction
#: of the interval's width from one seed to another (tests/results/test_paired.py).
RESAMPLES = 2000
LEVEL = 0.95
#: Resampling by index draws (resamples x n) numbers: done in blocks of about this many values,
#: so that a 10,000-question run needs tens of megabytes, not gigabytes.
BLOCK_VALUES = 1_000_000
#: Changes equal to within this are equal (means of floats are not exact).
EPS = 1e-9


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
    d = np.asarray(changes, dtype=float)
    n = d.size
    if n == 0:
        raise ValueError("bootstrap_interval needs at least one change")
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


def classify(
    delta: float, low: float, high: float, n: int, margin: float, min_questions: int
) -> Direction:
    """The rule: see the module's docstring."""
    beyond = abs(delta) > margin + EPS
    if not beyond:
        return "noise"
    if n < min_questions:
        return "too_few"
    if delta < 0 and high < 0:
        return "regressed"
    if delta > 0 and low > 0:
        return "improved"
    return "noise"
