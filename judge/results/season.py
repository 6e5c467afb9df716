"""The season: tonight (and the last nights) against the runs before them, question by question.

One night against the last run cannot show a fall of a third of a point on twelve questions:
four questions falling a point is what two noisy nights also show now and then, and an exact
test on four changes can say no better than p = 1/16. What tells a real fall from noise is
time: noise moves a question tonight and puts it back tomorrow, a real fall stays. So each
(section, type, metric) is also checked against the season of earlier compatible runs:

- **reference**: each question's median over the earlier runs (up to ``WINDOW``, at least
  ``MIN_REFERENCE``); consecutive runs with the same run content (``run_hash``: the same
  answers, so cached verdicts) count once: they are one observation, not several;
- **recent**: the last ``m`` nights (tonight and the ``m - 1`` before it, ``m`` = 1, 2, 3),
  against the reference runs before them;
- **evidence**: the number of times a question was below its reference median in the recent
  nights (``b``) against the same count in the reference runs (``r``), a point of a 0-2 score
  counting once (2 → 0 is two events). When nothing changed the
  nights are exchangeable, so each of the ``b + r`` events falls in the recent nights with
  probability ``m / (m + W)``: the p-value is the binomial tail ``P(X >= b)``, ``X ~
  Binomial(b + r, m / (m + W))``, exact and a function of the counts alone. Rises likewise.
- **family**: every (type, metric, m) of a night is one test; Holm's rule over all of them keeps
  the family-wise level at ``GateRule.season_level``. A cell regresses when one of its tests is
  rejected and its recent mean is below the reference by more than the margin.

A deterministic system (the same answers every night) has one observation and no season; a
system whose answers change but whose scores do not has no events, and nothing is called.
docs/gate.md measures the false alarms over 30-night histories and the nights it takes to see a
fall.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple

from judge.axes import SCORE_METRICS
from judge.grouped import type_order as grouped_type_order
from judge.results.compare import (
    INTERVAL_SEED,
    SEASON,
    Change,
    GateRule,
    Moved,
    QuestionValues,
    Section,
    SectionComparison,
)
from judge.results.paired import EPS, LIST_LEVEL, Direction, bootstrap_interval, holm

# numpy is imported by the functions that compute with it: rendering a record (judge report)
# needs none of it, and it is a tenth of the command's start-up.
if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

#: Earlier runs a reference holds at most.
WINDOW = 20
#: Earlier runs a reference needs: fewer, and the season is not checked.
MIN_REFERENCE = 5
#: Recent nights checked together: 1, 2 and 3 (a fall that stays is seen by the third night).
RECENT = 3


def _binomial_tail(k: int, n: int, p: float) -> float:
    """P(X >= k), X ~ Binomial(n, p), exactly (n is a count of events over a few weeks)."""
    if k <= 0:
        return 1.0
    if k > n:
        return 0.0
    log_p, log_q = math.log(p), math.log1p(-p)
    head = math.lgamma(n + 1)
    terms = [
        math.exp(head - math.lgamma(i + 1) - math.lgamma(n - i + 1) + i * log_p + (n - i) * log_q)
        for i in range(k, n + 1)
    ]
    return min(1.0, math.fsum(terms))


class _Test(NamedTuple):
    """One (type, metric, m): the questions it covers, their reference medians, the recent
    nights' values (tonight last), and the p-values of a fall and of a rise."""

    ids: list[str]
    reference: npt.NDArray[np.float64]
    recent: npt.NDArray[np.float64]
    p_fall: float
    p_rise: float

    @property
    def old(self) -> float:
        return float(self.reference.mean())

    @property
    def new(self) -> float:
        return float(self.recent.mean())

    @property
    def nights(self) -> int:
        return int(self.recent.shape[0])


def _events(
    nights: npt.NDArray[np.float64], medians: npt.NDArray[np.float64], points: bool
) -> tuple[int, int]:
    """Events below and above the medians over ``nights``: one per question and night away from
    its median, a point of a 0-2 score counting once (a fall from 2 to 0 is two events: two
    questions losing two points weigh as four losing one)."""
    import numpy as np

    with np.errstate(invalid="ignore"):  # NaN compares False: a missing value is no event
        away = nights - medians
        size = np.maximum(1.0, np.rint(np.abs(away))) if points else np.ones_like(away)
        below = float(np.sum(np.where(away < -EPS, size, 0.0)))
        above = float(np.sum(np.where(away > EPS, size, 0.0)))
    return int(below), int(above)


def _test(
    ids: list[str],
    reference: npt.NDArray[np.float64],
    recent: npt.NDArray[np.float64],
    points: bool,
) -> _Test | None:
    """The test of one cell (columns: its questions; rows: runs, NaN where a question has no
    value) over the questions valued in every recent night and in at least MIN_REFERENCE
    reference runs."""
    import numpy as np

    valued = reference.shape[0] - np.count_nonzero(np.isnan(reference), axis=0)
    keep = (valued >= MIN_REFERENCE) & ~np.isnan(recent).any(axis=0)
    if not keep.any():
        return None
    reference, recent = reference[:, keep], recent[:, keep]
    missing = np.isnan(reference)
    # nanmedian is ten times slower than median on small arrays; most references miss nothing.
    medians = np.nanmedian(reference, axis=0) if missing.any() else np.median(reference, axis=0)
    below_ref, above_ref = _events(reference, medians, points)
    below, above = _events(recent, medians, points)
    share = recent.shape[0] / (recent.shape[0] + reference.shape[0])
    return _Test(
        [q for q, k in zip(ids, keep.tolist(), strict=True) if k],
        medians,
        recent,
        _binomial_tail(below, below + below_ref, share),
        _binomial_tail(above, above + above_ref, share),
    )


class _Cell(NamedTuple):
    """One (type, metric) of a section with its tests, and where it goes in the comparison."""

    position: int  # the type's place in the per-type order (unknown types last)
    metric_index: int  # the metric's place in tonight's values
    type_name: str
    metric: str
    tests: list[_Test]  # one per number of recent nights that could be tested


def _cell_tests(cell: npt.NDArray[np.float64], ids: list[str], points: bool) -> list[_Test]:
    """The tests of one cell (rows: the earlier runs, oldest first, then tonight) for the last
    1, 2, ... RECENT nights, as long as MIN_REFERENCE runs come before them."""
    tests = []
    for m in range(1, RECENT + 1):
        split = cell.shape[0] - m  # rows before it: the reference; from it: recent
        if split < MIN_REFERENCE:
            break
        test = _test(ids, cell[max(0, split - WINDOW) : split], cell[split:], points)
        if test is not None:
            tests.append(test)
    return tests


def _cells(
    section: Section,
    earlier: Sequence[QuestionValues],
    current: QuestionValues,
    type_order: Sequence[str],
) -> list[_Cell]:
    """Every (type, metric) of ``section`` tonight that has a test, metric by metric and type by
    type in the order tonight's values meet them."""
    import numpy as np

    tonight = current.values.get(section, {})
    types = dict(current.types)
    order = grouped_type_order(types, type_order)
    position = {t: i for i, t in enumerate(order)}
    cells: list[_Cell] = []
    for metric_index, (metric, values) in enumerate(tonight.items()):
        ids = list(values)
        runs = [run.values.get(section, {}).get(metric, {}) for run in earlier]
        nan = float("nan")
        matrix = np.asarray(
            [[run.get(q, nan) for q in ids] for run in runs] + [[values[q] for q in ids]],
            dtype=float,
        )
        groups: dict[str, list[int]] = {}
        for column, qid in enumerate(ids):
            groups.setdefault(types.get(qid, "?"), []).append(column)
        for type_name, columns in groups.items():
            cell_ids = [ids[c] for c in columns]
            tests = _cell_tests(matrix[:, columns], cell_ids, metric in SCORE_METRICS)
            if tests:
                where = position.get(type_name, len(order))
                cells.append(_Cell(where, metric_index, type_name, metric, tests))
    return cells


def _shown(
    tests: list[_Test], fell: set[int], rose: set[int], margin: float
) -> tuple[Direction, _Test]:
    """A cell's direction and the test that shows it: the most significant rejected fall beyond
    the margin, else such a rise, else the cell's most significant test (``listed`` when it is
    beyond the margin at LIST_LEVEL, otherwise ``noise``). ``fell`` and ``rose`` hold the ids of
    the tests Holm's rule rejected."""
    called = [t for t in tests if id(t) in fell and t.new - t.old < -margin - EPS]
    improved = [t for t in tests if id(t) in rose and t.new - t.old > margin + EPS]
    if called:
        return "regressed", min(called, key=lambda t: (t.p_fall, t.nights))
    if improved:
        return "improved", min(improved, key=lambda t: (t.p_rise, t.nights))
    shown = min(tests, key=lambda t: (min(t.p_fall, t.p_rise), t.nights))
    p = shown.p_fall if shown.new < shown.old else shown.p_rise
    beyond = abs(shown.new - shown.old) > margin + EPS
    return ("listed" if beyond and p <= LIST_LEVEL + EPS else "noise"), shown


def season_comparison(
    section: Section,
    earlier: Sequence[QuestionValues],
    current: QuestionValues,
    rule: GateRule,
    type_order: Sequence[str] = (),
) -> SectionComparison | None:
    """``section`` tonight against the season of ``earlier`` runs (compatible with tonight,
    oldest first, consecutive runs of the same content already counted once); None when there
    are fewer than MIN_REFERENCE of them."""
    if len(earlier) < MIN_REFERENCE:
        return None
    cells = _cells(section, earlier, current, type_order)
    flat = [t for cell in cells for t in cell.tests]
    falls = holm([t.p_fall for t in flat], rule.season_level)
    rises = holm([t.p_rise for t in flat], rule.season_level)
    fell = {id(t) for t, rejected in zip(flat, falls, strict=True) if rejected}
    rose = {id(t) for t, rejected in zip(flat, rises, strict=True) if rejected}
    changes: list[tuple[int, int, Change]] = []
    for cell in cells:
        margin = rule.margin(cell.metric)
        direction, shown = _shown(cell.tests, fell, rose, margin)
        change = _change(section, cell.type_name, cell.metric, shown, margin, direction)
        changes.append((cell.position, cell.metric_index, change))
    changes.sort(key=lambda item: (item[0], item[1]))
    note = f"each question's median over {min(len(earlier), WINDOW)} earlier compatible runs"
    return SectionComparison(section, SEASON, [c for _, _, c in changes], note)


def _change(
    section: Section, type_name: str, metric: str, test: _Test, margin: float, direction: Direction
) -> Change:
    import numpy as np

    tonight = test.recent[-1]
    d = np.sort(test.recent.mean(axis=0) - test.reference)
    low, high = bootstrap_interval(d, INTERVAL_SEED)
    delta = test.new - test.old
    step = tonight - test.reference
    sign = 1.0 if delta <= 0 else -1.0
    moved_at = sorted(
        (i for i in range(len(test.ids)) if abs(step[i]) > EPS), key=lambda i: sign * step[i]
    )
    moved = tuple(Moved(test.ids[i], float(test.reference[i]), float(tonight[i])) for i in moved_at)
    return Change(
        section,
        type_name,
        metric,
        len(test.ids),
        test.old,
        test.new,
        delta,
        low,
        high,
        margin,
        direction,
        moved,
        test.p_fall,
        test.p_rise,
        test.nights,
    )
