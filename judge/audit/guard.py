"""The held-out guard of ``judge align``: a prompt variant against the current prompt on the
same held-out labels, and whether it is adopted.

Each row is one human label of a held-out item with the current prompt's scores and the
variant's for that item (``None``: that prompt's verdict was not ok). The statistics, per
axis:

- exact agreement, a verdict that is not ok counted as a miss (a variant that breaks the
  reply format is worse, not excused);
- quadratic κ and balanced accuracy, over the labels that prompt gave an ok verdict for.

Each has its value and 95 % interval for both prompts and the paired difference's interval,
all by a bootstrap that resamples whole items (two labellers of one item share its verdict).

The primary statistic is exact agreement over both axes. The paired test is an exact
one-sided sign test over items: per item, the axes the variant matches minus the axes the
current prompt matches, summed over the item's labels; items with no difference are left
out. A variant is adopted only when

1. its sign test's p-value is below ``level`` divided by the number of variants tried
   (Bonferroni: trying more variants does not raise the chance of a false adoption), and
2. it is no worse on any other statistic: no difference interval (exact agreement, κ and
   balanced accuracy of each axis) lies wholly below 0.

Among the variants that pass, the one with the largest gain on the primary statistic is
adopted (the first listed on a tie). Otherwise the current prompt is kept, and the guard that
decided is named. ``bench/align_sim.py`` measures how often this adopts a variant that is not
truly better (docs/align.md).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import NamedTuple

from judge.audit.stats import balanced_accuracy, cluster_bootstrap_ci, quadratic_kappa
from judge.audit.types import Interval
from judge.axes import AXES

Scores = tuple[int, ...]
"""One score per axis of ``judge.axes.AXES``."""

GUARD_ALPHA = 0.05


class HeldOutLabel(NamedTuple):
    """One held-out label, and both prompts' scores for its item."""

    question_id: str
    human: Scores
    current: Scores | None
    variant: Scores | None


Which = Callable[[HeldOutLabel], Scores | None]


def _current(row: HeldOutLabel) -> Scores | None:
    return row.current


def _variant(row: HeldOutLabel) -> Scores | None:
    return row.variant


def _exact(rows: Sequence[HeldOutLabel], which: Which, axis: int) -> float | None:
    if not rows:
        return None
    return sum((s := which(r)) is not None and s[axis] == r.human[axis] for r in rows) / len(rows)


def _ok_pairs(rows: Sequence[HeldOutLabel], which: Which, axis: int) -> list[tuple[int, int]]:
    return [(r.human[axis], s[axis]) for r in rows if (s := which(r)) is not None]


def _kappa(rows: Sequence[HeldOutLabel], which: Which, axis: int) -> float | None:
    return quadratic_kappa(_ok_pairs(rows, which, axis))


def _balanced(rows: Sequence[HeldOutLabel], which: Which, axis: int) -> float | None:
    return balanced_accuracy(_ok_pairs(rows, which, axis))


def _primary(rows: Sequence[HeldOutLabel], which: Which) -> float | None:
    """Exact agreement over both axes (every axis of every label counted once)."""
    values = [_exact(rows, which, axis) for axis in range(len(AXES))]
    return None if None in values else sum(v for v in values if v is not None) / len(values)


Statistic = Callable[[Sequence[HeldOutLabel], Which, int], float | None]
STATISTICS: dict[str, Statistic] = {
    "exact agreement": _exact,
    "quadratic κ": _kappa,
    "balanced accuracy": _balanced,
}


class Compared(NamedTuple):
    """One statistic of one axis for both prompts, and their paired difference."""

    statistic: str
    axis: str
    current: float | None
    current_ci: Interval | None
    variant: float | None
    variant_ci: Interval | None
    difference_ci: Interval | None

    @property
    def difference(self) -> float | None:
        if self.current is None or self.variant is None:
            return None
        return self.variant - self.current

    @property
    def worse(self) -> bool:
        """The difference's interval lies wholly below 0."""
        return self.difference_ci is not None and self.difference_ci.high < 0


class VariantComparison(NamedTuple):
    """A variant against the current prompt on the same held-out labels."""

    variant: str
    labels: int
    items: int
    current: float | None
    """The primary statistic (exact agreement over both axes) of the current prompt."""
    current_ci: Interval | None
    value: float | None
    """The primary statistic of the variant."""
    value_ci: Interval | None
    wins: int
    """Items where the variant matched more axes of the labels than the current prompt."""
    losses: int
    p_value: float
    """The exact one-sided sign test of wins against losses."""
    compared: list[Compared]

    @property
    def gain(self) -> float:
        if self.current is None or self.value is None:
            return 0.0
        return self.value - self.current


def sign_test(wins: int, losses: int) -> float:
    """P(at least ``wins`` of ``wins + losses`` fair coin flips): the one-sided exact sign
    test (1.0 with no informative items)."""
    n = wins + losses
    if n == 0:
        return 1.0
    return sum(math.comb(n, i) for i in range(wins, n + 1)) / (1 << n)


def _clusters(rows: Sequence[HeldOutLabel]) -> list[list[HeldOutLabel]]:
    grouped: dict[str, list[HeldOutLabel]] = {}
    for row in rows:
        grouped.setdefault(row.question_id, []).append(row)
    return list(grouped.values())


def _matched(row: HeldOutLabel, scores: Scores | None) -> int:
    return 0 if scores is None else sum(h == s for h, s in zip(row.human, scores, strict=True))


def primary_test(rows: Sequence[HeldOutLabel]) -> tuple[int, int, float]:
    """The paired test of the primary statistic alone: items where the variant matched more
    axes of their labels than the current prompt (wins), fewer (losses), and the one-sided
    sign test's p-value."""
    wins = losses = 0
    for cluster in _clusters(rows):
        change = sum(_matched(r, r.variant) - _matched(r, r.current) for r in cluster)
        wins += change > 0
        losses += change < 0
    return wins, losses, sign_test(wins, losses)


def compare(
    name: str, rows: Sequence[HeldOutLabel], resamples: int = 2000, seed: int = 0
) -> VariantComparison:
    """The variant ``name`` against the current prompt on ``rows`` (module docstring)."""
    clusters = _clusters(rows)
    wins, losses, p_value = primary_test(rows)

    def interval(statistic: Callable[[list[HeldOutLabel]], float | None]) -> Interval | None:
        return cluster_bootstrap_ci(clusters, statistic, resamples, seed=seed)

    compared = []
    for axis_index, axis in enumerate(AXES):
        for statistic_name, statistic in STATISTICS.items():

            def of(
                which: Which, s: Statistic = statistic, a: int = axis_index
            ) -> Callable[[list[HeldOutLabel]], float | None]:
                return lambda sample: s(sample, which, a)

            def difference(
                sample: list[HeldOutLabel], s: Statistic = statistic, a: int = axis_index
            ) -> float | None:
                before, after = s(sample, _current, a), s(sample, _variant, a)
                return None if before is None or after is None else after - before

            compared.append(
                Compared(
                    statistic_name,
                    axis,
                    statistic(rows, _current, axis_index),
                    interval(of(_current)),
                    statistic(rows, _variant, axis_index),
                    interval(of(_variant)),
                    interval(difference),
                )
            )
    return VariantComparison(
        name,
        len(rows),
        len(clusters),
        _primary(rows, _current),
        interval(lambda sample: _primary(sample, _current)),
        _primary(rows, _variant),
        interval(lambda sample: _primary(sample, _variant)),
        wins,
        losses,
        p_value,
        compared,
    )


class GuardDecision(NamedTuple):
    """The guard's decision over every variant tried."""

    adopted: VariantComparison | None
    """The variant adopted; None: keep the current prompt."""
    guard: str
    """Which guard decided, in one line."""
    threshold: float
    """The p-value a variant's sign test had to be below (``level`` / variants)."""


def _worse(comparison: VariantComparison) -> list[Compared]:
    return [c for c in comparison.compared if c.worse]


def guard_decision(
    comparisons: Sequence[VariantComparison], level: float = GUARD_ALPHA
) -> GuardDecision:
    """Adopt the best variant that passes both guards, or keep the current prompt and say
    which guard decided (module docstring)."""
    threshold = level / max(1, len(comparisons))
    if not comparisons:
        return GuardDecision(None, "keep the current prompt: no variant could be built", threshold)
    beat = [c for c in comparisons if c.gain > 0 and c.p_value < threshold]
    if not beat:
        best = min(comparisons, key=lambda c: (c.p_value, -c.gain))
        return GuardDecision(
            None,
            f"keep the current prompt: guard 1 (primary) decided: no variant beat it on "
            f"held-out exact agreement beyond the guard (best {best.variant}: "
            f"{_signed(best.gain)}, sign test p = {best.p_value:.3f}, needed < "
            f"{threshold:.3f} = {level} / {len(comparisons)} variant(s))",
            threshold,
        )
    passing = [c for c in beat if not _worse(c)]
    if not passing:
        first = beat[0]
        worse = _worse(first)[0]
        return GuardDecision(
            None,
            f"keep the current prompt: guard 2 (no worse) decided: {first.variant} beat it on "
            f"exact agreement (p = {first.p_value:.3f}) but is worse on {worse.statistic} of "
            f"{worse.axis} ({_signed(worse.difference)} {_interval(worse.difference_ci)})",
            threshold,
        )
    adopted = max(passing, key=lambda c: c.gain)  # max keeps the first of equal gains
    return GuardDecision(
        adopted,
        f"adopt {adopted.variant}: held-out exact agreement {_signed(adopted.gain)} (sign test "
        f"p = {adopted.p_value:.3f} < {threshold:.3f}) and no worse on any other statistic",
        threshold,
    )


def _signed(value: float | None) -> str:
    if value is None:
        return "n/a"
    return ("+" if value >= 0 else "−") + f"{abs(value):.3f}"


def _value(value: float | None, interval: Interval | None) -> str:
    number = "n/a" if value is None else f"{value:.2f}"
    return f"{number} {_interval(interval)}"


def _interval(interval: Interval | None) -> str:
    if interval is None:
        return "[n/a]"
    low = ("−" if interval.low < 0 else "") + f"{abs(interval.low):.2f}"
    high = ("−" if interval.high < 0 else "") + f"{abs(interval.high):.2f}"
    return f"[{low}, {high}]"


def variant_lines(comparison: VariantComparison) -> list[str]:
    """A variant beside the current prompt: the primary statistic and each axis' statistics,
    each with its 95 % interval and n."""
    lines = [
        f"{comparison.variant}: exact agreement (both axes) "
        f"{_value(comparison.value, comparison.value_ci)} vs current "
        f"{_value(comparison.current, comparison.current_ci)}; n = {comparison.labels} "
        f"labels on {comparison.items} held-out items; better on {comparison.wins}, worse on "
        f"{comparison.losses}, sign test p = {comparison.p_value:.3f}"
    ]
    for c in comparison.compared:
        lines.append(
            f"  {c.axis} {c.statistic}: {_value(c.variant, c.variant_ci)} vs current "
            f"{_value(c.current, c.current_ci)}; difference {_signed(c.difference)} "
            f"{_interval(c.difference_ci)}"
        )
    return lines
