"""Agreement statistics for 0-2 ordinal scores: judge vs human, and human vs human.

Every function returns ``None`` (never NaN) when its value is undefined, and the docstring says
when that is. Scores are integers on ``SCALE`` (the judge's scale, ``judge.axes``).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import TypeVar

from judge.audit.types import Interval

# AXES and Axis are re-exported for ``judge.audit.agreement`` and ``judge.audit.ppi``, which
# import them from here; their home is ``judge.axes``.
from judge.axes import AXES as AXES
from judge.axes import SCALE
from judge.axes import Axis as Axis

Pairs = Sequence[tuple[int, int]]
"""(human, judge) score pairs for one axis."""


def confusion(pairs: Pairs) -> list[list[int]]:
    """3×3 counts: rows are the human's score, columns the judge's."""
    matrix = [[0] * len(SCALE) for _ in SCALE]
    for human, judge in pairs:
        matrix[human][judge] += 1
    return matrix


def exact_agreement(pairs: Pairs) -> float | None:
    """Share of pairs with equal scores; None for no pairs."""
    return sum(h == j for h, j in pairs) / len(pairs) if pairs else None


def within_one(pairs: Pairs) -> float | None:
    """Share of pairs at most one point apart; None for no pairs."""
    return sum(abs(h - j) <= 1 for h, j in pairs) / len(pairs) if pairs else None


def majority_class(pairs: Pairs) -> tuple[int, float] | None:
    """The trivial baseline: always answer the human score most common in ``pairs``.

    (score, its exact agreement = that score's share of the human scores). A tie goes to the
    higher score (the share is the same either way). None for no pairs.
    """
    if not pairs:
        return None
    counts = [0] * len(SCALE)
    for human, _ in pairs:
        counts[human] += 1
    best = max(SCALE, key=lambda score: (counts[score], score))
    return best, counts[best] / len(pairs)


def balanced_accuracy(pairs: Pairs) -> float | None:
    """Mean over the human scores present of the judge's recall on that score.

    A judge that always answers the majority score gets 1 / (number of human scores present),
    however lopsided the labels are, where its exact agreement can look high. None for no pairs.
    """
    if not pairs:
        return None
    matrix = confusion(pairs)
    recalls = [row[h] / sum(row) for h, row in enumerate(matrix) if sum(row)]
    return sum(recalls) / len(recalls)


def quadratic_kappa(pairs: Pairs) -> float | None:
    """Cohen's kappa with quadratic weights w = (i - j)² / (k - 1)².

    κ = 1 − Σ w·observed / Σ w·expected, with expected from the two raters' marginals.
    None when there are no pairs, or when the expected disagreement is 0 (both raters gave one
    and the same score to every item: there is no variation to agree on).
    """
    if not pairs:
        return None
    n = len(pairs)
    k = len(SCALE)
    observed = confusion(pairs)
    rows = [sum(observed[i]) for i in range(k)]
    cols = [sum(observed[i][j] for i in range(k)) for j in range(k)]
    weight = [[(i - j) ** 2 / (k - 1) ** 2 for j in range(k)] for i in range(k)]
    disagreement = sum(weight[i][j] * observed[i][j] for i in range(k) for j in range(k)) / n
    expected = sum(weight[i][j] * rows[i] * cols[j] for i in range(k) for j in range(k)) / n**2
    if expected == 0:
        return None
    return 1 - disagreement / expected


def bootstrap_ci(
    pairs: Pairs,
    statistic: Callable[[Pairs], float | None],
    resamples: int = 2000,
    level: float = 0.95,
    seed: int = 0,
) -> Interval | None:
    """Percentile bootstrap interval of ``statistic`` over items (resampled with replacement).

    Resamples where the statistic is undefined are skipped; None when there are fewer than 2
    pairs or fewer than half the resamples gave a value. Seeded: the same data gives the same
    interval. With 30 items the interval is wide, as it should be.
    """
    if len(pairs) < 2:
        return None
    rng = random.Random(seed)
    values = []
    for _ in range(resamples):
        sample = [pairs[rng.randrange(len(pairs))] for _ in pairs]
        value = statistic(sample)
        if value is not None:
            values.append(value)
    return _percentile_interval(values, resamples, level)


def _percentile_interval(values: list[float], resamples: int, level: float) -> Interval | None:
    """The percentile interval of the resamples' values (None when fewer than half the
    resamples gave one): the convention every bootstrap here shares."""
    if len(values) < resamples / 2:
        return None
    values.sort()
    tail = (1 - level) / 2
    low = values[int(tail * (len(values) - 1))]
    high = values[int((1 - tail) * (len(values) - 1) + 0.5)]
    return Interval(low, high)


_Item = TypeVar("_Item")


def cluster_bootstrap_ci(
    clusters: Sequence[Sequence[_Item]],
    statistic: Callable[[list[_Item]], float | None],
    resamples: int = 2000,
    level: float = 0.95,
    seed: int = 0,
) -> Interval | None:
    """Percentile bootstrap interval of ``statistic`` resampling whole clusters (here: the
    chunks of one question) with replacement, then pooling their items.

    ``bootstrap_ci`` with clusters for items, and its conventions: resamples
    where the statistic is undefined are skipped; None with fewer than 2 clusters or when fewer
    than half the resamples gave a value; the same percentile indices; seeded. Items of one
    cluster are correlated (one question's chunks share its difficulty and its wording), so
    resampling items would make the interval too narrow.
    """
    if len(clusters) < 2:
        return None
    rng = random.Random(seed)
    values = []
    for _ in range(resamples):
        sample = [item for _ in clusters for item in clusters[rng.randrange(len(clusters))]]
        value = statistic(sample)
        if value is not None:
            values.append(value)
    return _percentile_interval(values, resamples, level)


def krippendorff_alpha_ordinal(units: Sequence[Sequence[int]]) -> float | None:
    """Krippendorff's alpha, ordinal metric, for any number of raters per unit.

    ``units`` holds the scores each item received (one per rater who scored it). Items with
    fewer than two scores are not pairable and are left out. α = 1 − D_o / D_e over the
    coincidence matrix, with δ²(c, k) = (Σ_{g=c..k} n_g − (n_c + n_k)/2)². None when fewer than
    two pairable values exist or every pairable value is the same (D_e = 0).
    """
    coincidence: dict[tuple[int, int], float] = {}
    for scores in units:
        m = len(scores)
        if m < 2:
            continue
        for a in range(m):
            for b in range(m):
                if a != b:
                    key = (scores[a], scores[b])
                    coincidence[key] = coincidence.get(key, 0.0) + 1 / (m - 1)
    totals = dict.fromkeys(SCALE, 0.0)
    for (c, _), count in coincidence.items():
        totals[c] += count
    n = sum(totals.values())
    if n < 2:
        return None

    def delta(c: int, k: int) -> float:
        low, high = min(c, k), max(c, k)
        inner = sum(totals[g] for g in SCALE if low <= g <= high)
        return (inner - (totals[c] + totals[k]) / 2) ** 2

    observed = sum(count * delta(c, k) for (c, k), count in coincidence.items())
    expected = sum(totals[c] * totals[k] * delta(c, k) for c in SCALE for k in SCALE) / (n - 1)
    if expected == 0:
        return None
    return 1 - observed / expected
