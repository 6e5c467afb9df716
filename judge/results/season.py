"""The season: tonight (and the last nights) against the runs before them, question by question.

One night against the last run cannot show a fall of a third of a point on twelve questions:
four questions falling a point is what two noisy nights also show now and then, and an exact
test on four changes can say no better than p = 1/16. What tells a real fall from noise is
time: noise moves a question tonight and puts it back tomorrow, a real fall stays. So each
(section, type, metric) is also checked against the season of earlier compatible runs:

- **observations**: a question's value is an observation on a night its answer is new (not the
  answer it had the night before: ``QuestionValues.answers``). A judge at temperature 0 gives
  an answer the verdict it gave it before, so a kept answer is one observation however many
  nights it stays: counting it every night would count one draw of the judge's error many
  times. Where the answers are not known (runs recorded before they were kept), every night is
  an observation, as before;
- **reference**: each question's median over its observations in the earlier runs (up to
  ``WINDOW`` runs, at least ``MIN_REFERENCE``; the answer standing at the window's first run
  counts as one);
- **recent**: the last ``m`` nights (tonight and the ``m - 1`` before it, ``m`` = 1, 2, 3),
  against the reference runs before them;
- **evidence**: the observations below the reference median in the recent nights (``b``)
  against those in the reference (``r``), a point of a 0-2 score counting once (2 → 0 is two
  events). When nothing changed a question's observations are exchangeable, so each of its
  events falls in the recent nights with probability ``k / (k + n)`` (``k`` and ``n``: its
  observations in the recent and the reference runs; ``m / (m + W)`` when every night is an
  observation); the p-value is the exact tail of the sum of these binomials. Rises likewise;
- **family**: every (type, metric, m) of a night is one test; Tarone's rule leaves out the tests
  that could not reach the level with every event in the recent nights (a cell with no events,
  a cell with two), and Bonferroni over the ``K`` tests left keeps the family-wise level at
  ``GateRule.season_level``;
- **recovery**: a cell regresses when one of its tests is rejected, its recent mean is below the
  reference by more than the margin *and so is tonight's own mean*; a cell whose values tonight
  are the pinned baseline's is never a regression. A recent night whose mean is below tonight's
  by more than ``ENDED`` margins is a fall that ended (in part): its events count only where a
  question is still below tonight, and no deeper. So a broken night in the recent nights cannot
  fail the good night after it, while a fall that stays, whose nights are alike, keeps all its
  events (clipping every night to tonight cost a third of the detection: docs/gate.md).

A deterministic system (the same answers every night) has one observation and no season; a
system whose answers change but whose scores do not has no events, and nothing is called.
docs/gate.md measures the false alarms over 30-night histories and the nights it takes to see a
fall (``bench/gate_sim.py``, which calls ``evidence`` below night by night).
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
from judge.results.paired import EPS, LIST_LEVEL, Direction, bootstrap_interval

# numpy is imported by the functions that compute with it: rendering a record (judge report)
# needs none of it, and it is a tenth of the command's start-up.
if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Floats = npt.NDArray[np.float64]
    Flags = npt.NDArray[np.bool_]

#: Earlier runs a reference holds at most.
WINDOW = 20
#: Earlier runs a reference needs: fewer, and the season is not checked.
MIN_REFERENCE = 5
#: Recent nights checked together: 1, 2 and 3 (a fall that stays is seen by the third night).
RECENT = 3
#: The judge's metrics the season decides on: the scores. ``full_marks`` follows from them,
#: ``quote_verified`` is the judge's quoting and ``ok_share`` has its own check: they are
#: compared and listed, never failed by the season, and not counted in its family (fewer
#: tests, a higher level for each: docs/gate.md measures what that buys). Retrieval's metrics
#: are all decided.
DECIDED = SCORE_METRICS
#: A recent night whose mean is below tonight's by more than this many margins is a fall that
#: ended, at least in part (a broken night, then the good answers back): its events count only
#: where a question is still below tonight. The nights of a fall that stays differ by the
#: judge's noise, about a margin (docs/gate.md measures 1, 2 and 3).
ENDED = 2.0


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


def _pmf(n: int, p: float) -> Floats:
    """Binomial(n, p)'s probabilities of 0..n (logs summed, so thousands of events are fine)."""
    import numpy as np

    if p >= 1.0:
        out = np.zeros(n + 1)
        out[n] = 1.0
        return out
    k = np.arange(1, n + 1, dtype=float)
    log_choose = np.concatenate(([0.0], np.cumsum(np.log(n - k + 1) - np.log(k))))
    i = np.arange(n + 1, dtype=float)
    return np.asarray(np.exp(log_choose + i * math.log(p) + (n - i) * math.log1p(-p)))


def sum_tail(recent: int, groups: dict[float, int]) -> float:
    """P(X_1 + X_2 + ... >= recent), X_g ~ Binomial(n_g, share_g) for ``groups`` (share →
    events), exactly: one group is ``_binomial_tail``, several are convolved."""
    import numpy as np

    live = {share: n for share, n in groups.items() if n > 0 and share > 0.0}
    if recent <= 0:
        return 1.0
    if len(live) <= 1:
        ((share, n),) = live.items() if live else ((0.5, 0),)
        return _binomial_tail(recent, n, share)
    pmf = np.ones(1)
    for share, n in live.items():
        pmf = np.convolve(pmf, _pmf(n, share))
    return min(1.0, math.fsum(pmf[recent:].tolist()))


def least_p(groups: dict[float, int]) -> float:
    """The smallest p-value ``sum_tail`` can give these events: all of them in the recent
    nights (Tarone's bound: a test whose best is above the level cannot be rejected)."""
    total = sum(groups.values())
    if total == 0:
        return 1.0
    logs = [n * math.log(share) if share > 0 else -math.inf for share, n in groups.items() if n]
    return math.exp(sum(logs))


class Evidence(NamedTuple):
    """One (type, metric, m) test over the questions valued in every recent night and in at
    least MIN_REFERENCE reference runs (``keep``)."""

    keep: Flags
    reference: Floats
    """Each kept question's reference median."""
    recent: Floats
    """The recent nights' values of the kept questions (rows, tonight last)."""
    p_fall: float
    p_rise: float
    least_fall: float
    least_rise: float

    @property
    def old(self) -> float:
        return float(self.reference.mean())

    @property
    def new(self) -> float:
        return float(self.recent.mean())

    @property
    def tonight(self) -> float:
        return float(self.recent[-1].mean())

    @property
    def nights(self) -> int:
        return int(self.recent.shape[0])


def _medians(reference: Floats, observed: Flags) -> Floats:
    """Each question's median over its observations (NaN and kept answers left out; NaN for a
    question with none). Sorted once, NaN last: ``nanmedian`` is ten times slower on the
    small arrays of a season."""
    import numpy as np

    values = np.sort(np.where(observed, reference, np.nan), axis=0)
    n = np.count_nonzero(~np.isnan(values), axis=0)
    low = np.maximum(0, (n - 1) // 2)[None, :]
    high = np.maximum(0, n // 2)[None, :]
    middle = (np.take_along_axis(values, low, 0) + np.take_along_axis(values, high, 0)) / 2
    return np.asarray(np.where(n > 0, middle[0], np.nan))


def evidence(
    reference: Floats, recent: Floats, new: Flags, points: bool, ended: float | None
) -> Evidence | None:
    """The test of one cell: ``reference`` and ``recent`` hold its questions' values (columns)
    in the reference runs and the recent nights (rows, oldest first, NaN where a question has
    no value); ``new`` (rows of both, stacked) is True where a question's answer is an
    observation (new that night); ``ended``: how far a recent night's mean may be from
    tonight's before its move counts as ended (``_ended``; None: every night's). None when no
    question is valued enough."""
    import numpy as np

    valued = reference.shape[0] - np.count_nonzero(np.isnan(reference), axis=0)
    keep = (valued >= MIN_REFERENCE) & ~np.isnan(recent).any(axis=0)
    if not keep.any():
        return None
    reference, recent = reference[:, keep], recent[:, keep]
    observed = new[:, keep].copy()
    observed[0] = True  # the answer standing when the window opens is one observation
    observed &= ~np.isnan(np.vstack([reference, recent]))
    medians = _medians(reference, observed[: reference.shape[0]])
    away = np.vstack([reference, recent]) - medians
    with np.errstate(invalid="ignore"):
        size = np.maximum(1.0, np.rint(np.abs(away))) if points else np.ones_like(away)
        below = np.where(observed & (away < -EPS), size, 0.0)
        above = np.where(observed & (away > EPS), size, 0.0)
    split = reference.shape[0]
    _ended(below[split:], recent, away[-1], size[-1], None if ended is None else -ended)
    _ended(above[split:], recent, -away[-1], size[-1], ended)
    share = recent.shape[0] / (recent.shape[0] + split)
    fall = {share: int(below.sum())}
    rise = {share: int(above.sum())}
    # Tonight must bring a new answer on the side of the move: answers judged before (the good
    # answers back after a broken night) are no new evidence, whatever the nights before did.
    b = int(below[split:].sum()) if below[-1].any() else 0
    a = int(above[split:].sum()) if above[-1].any() else 0
    return Evidence(
        keep,
        medians,
        recent,
        sum_tail(b, fall),
        sum_tail(a, rise),
        least_p(fall),
        least_p(rise),
    )


def _ended(events: Floats, recent: Floats, away: Floats, size: Floats, ended: float | None) -> None:
    """A move that ended is no evidence: on a recent night whose mean is beyond tonight's by
    more than ``ended`` on the move's side (negative: below; None: every recent night), a
    question's events count only while it is still on that side tonight (``away``: tonight
    from the reference medians, with the sign of the move), and no deeper than tonight (a
    broken night, then the good answers back: the broken night's zeros do not outweigh
    tonight's one noisy point). ``events`` (the recent rows) is changed in place. The nights of
    a fall that stays are alike and keep every event: a fallen answer judged at its old score
    tonight, or another question's noise on an earlier night, is still evidence of the fall."""
    import numpy as np

    means = recent.mean(axis=1)
    if ended is None:  # every recent night (the first version of the rule, for the bench)
        rows = np.arange(recent.shape[0])
    elif ended < 0:
        rows = np.flatnonzero(means < means[-1] + ended - EPS)
    else:
        rows = np.flatnonzero(means > means[-1] + ended + EPS)
    with np.errstate(invalid="ignore"):
        events[rows] = np.minimum(events[rows], np.where(away < -EPS, size, 0.0))


def tarone(least: Sequence[float], level: float) -> float:
    """Tarone's level for one test of a family of discrete tests: ``level / K``, ``K`` the
    smallest number such that at most ``K`` tests could reach ``level / K`` at all (``least``:
    each test's smallest possible p-value). A test that could never be rejected does not dilute
    the others; Bonferroni over the ``K`` left keeps the family-wise level."""
    for k in range(1, len(least) + 1):
        if sum(1 for x in least if x <= level / k + 1e-300) <= k:
            return level / k
    return level / max(1, len(least))


class _Test(NamedTuple):
    """One (type, metric, m): the questions it covers and its evidence."""

    ids: list[str]
    evidence: Evidence


class _Cell(NamedTuple):
    """One (type, metric) of a section with its tests, and where it goes in the comparison."""

    position: int  # the type's place in the per-type order (unknown types last)
    metric_index: int  # the metric's place in tonight's values
    type_name: str
    metric: str
    tests: list[_Test]  # one per number of recent nights that could be tested
    pinned: bool  # tonight's values are the pinned baseline's: never a regression


def cell_tests(
    cell: Floats, new: Flags, points: bool, margin: float, ended: float | None = ENDED
) -> list[Evidence]:
    """The tests of one cell (rows: the earlier runs, oldest first, then tonight; ``new``: where
    an answer is new) for the last 1, 2, ... RECENT nights, as long as MIN_REFERENCE runs come
    before them; a recent night more than ``ended`` margins from tonight is a move that ended
    (None: every recent night is clipped to tonight, as the first version of the rule did)."""
    tests = []
    for m in range(1, RECENT + 1):
        split = cell.shape[0] - m  # rows before it: the reference; from it: recent
        if split < MIN_REFERENCE:
            break
        start = max(0, split - WINDOW)
        gap = None if ended is None else ended * margin
        test = evidence(cell[start:split], cell[split:], new[start:], points, gap)
        if test is not None:
            tests.append(test)
    return tests


def answer_changes(runs: Sequence[QuestionValues], ids: Sequence[str]) -> Flags:
    """Rows of ``runs``, columns of ``ids``: True where the question's answer is one it had not
    given in any run before (an answer given before has the verdict it had then), or is
    unknown (every night an observation, as before answers were kept); the first row True."""
    import numpy as np

    new = np.ones((len(runs), len(ids)), dtype=bool)
    for i, q in enumerate(ids):
        seen: set[str] = set()
        for t, run in enumerate(runs):
            answer = run.answers.get(q)
            if answer is not None and answer in seen:
                new[t, i] = False
            elif answer is not None:
                seen.add(answer)
    return new


def _cells(
    section: Section,
    earlier: Sequence[QuestionValues],
    current: QuestionValues,
    type_order: Sequence[str],
    pinned: QuestionValues | None,
    rule: GateRule,
) -> list[_Cell]:
    """Every (type, metric) of ``section`` tonight that has a test, metric by metric and type by
    type in the order tonight's values meet them."""
    import numpy as np

    tonight = current.values.get(section, {})
    types = dict(current.types)
    order = grouped_type_order(types, type_order)
    position = {t: i for i, t in enumerate(order)}
    cells: list[_Cell] = []
    base = pinned.values.get(section, {}) if pinned is not None else {}
    for metric_index, (metric, values) in enumerate(tonight.items()):
        ids = list(values)
        runs = [run.values.get(section, {}).get(metric, {}) for run in earlier]
        nan = float("nan")
        matrix = np.asarray(
            [[run.get(q, nan) for q in ids] for run in runs] + [[values[q] for q in ids]],
            dtype=float,
        )
        new = answer_changes([*earlier, current], ids)
        groups: dict[str, list[int]] = {}
        for column, qid in enumerate(ids):
            groups.setdefault(types.get(qid, "?"), []).append(column)
        for type_name, columns in groups.items():
            cell_ids = [ids[c] for c in columns]
            found = cell_tests(
                matrix[:, columns], new[:, columns], metric in SCORE_METRICS, rule.margin(metric)
            )
            tests = [
                _Test([q for q, k in zip(cell_ids, e.keep.tolist(), strict=True) if k], e)
                for e in found
            ]
            if tests:
                same = pinned is not None and all(
                    base.get(metric, {}).get(q) == values[q] for q in cell_ids
                )
                where = position.get(type_name, len(order))
                cells.append(_Cell(where, metric_index, type_name, metric, tests, same))
    return cells


def _shown(cell: _Cell, levels: tuple[float, float], margin: float) -> tuple[Direction, _Test]:
    """A cell's direction and the test that shows it: the most significant fall rejected at
    Tarone's level (``levels``: falls, rises) beyond the margin tonight and over its nights (and tonight not the
    pinned baseline's), else such a rise, else the cell's most significant test (``listed``
    when it is beyond the margin, tonight too, at LIST_LEVEL, otherwise ``noise``)."""
    tests = cell.tests
    fall_level, rise_level = levels

    def beyond(e: Evidence, sign: float) -> bool:
        return sign * (e.new - e.old) > margin + EPS and sign * (e.tonight - e.old) > margin + EPS

    called = [t for t in tests if t.evidence.p_fall <= fall_level and beyond(t.evidence, -1.0)]
    improved = [t for t in tests if t.evidence.p_rise <= rise_level and beyond(t.evidence, 1.0)]
    if called and not cell.pinned:
        return "regressed", min(called, key=lambda t: (t.evidence.p_fall, t.evidence.nights))
    if improved:
        return "improved", min(improved, key=lambda t: (t.evidence.p_rise, t.evidence.nights))
    shown = min(tests, key=lambda t: (min(t.evidence.p_fall, t.evidence.p_rise), t.evidence.nights))
    e = shown.evidence
    sign = -1.0 if e.new < e.old else 1.0
    p = e.p_fall if sign < 0 else e.p_rise
    listed = beyond(e, sign) and p <= LIST_LEVEL + EPS and not (sign < 0 and cell.pinned)
    return ("listed" if listed else "noise"), shown


def season_comparison(
    section: Section,
    earlier: Sequence[QuestionValues],
    current: QuestionValues,
    rule: GateRule,
    type_order: Sequence[str] = (),
    pinned: QuestionValues | None = None,
) -> SectionComparison | None:
    """``section`` tonight against the season of ``earlier`` runs (compatible with tonight,
    oldest first, consecutive runs of the same content already counted once); None when there
    are fewer than MIN_REFERENCE of them. ``pinned``: the pinned baseline's values (a cell
    whose values tonight are the baseline's is never a regression)."""
    if len(earlier) < MIN_REFERENCE:
        return None
    cells = _cells(section, earlier, current, type_order, pinned, rule)
    decided = [c for c in cells if section == "retrieval" or c.metric in DECIDED]
    in_family = {id(c) for c in decided}
    flat = [t.evidence for cell in decided for t in cell.tests]
    level_fall = tarone([e.least_fall for e in flat], rule.season_level)
    level_rise = tarone([e.least_rise for e in flat], rule.season_level)
    changes: list[tuple[int, int, Change]] = []
    for cell in cells:
        margin = rule.margin(cell.metric)
        levels = (level_fall, level_rise) if id(cell) in in_family else (0.0, 0.0)
        direction, shown = _shown(cell, levels, margin)
        change = _change(section, cell.type_name, cell.metric, shown, margin, direction)
        changes.append((cell.position, cell.metric_index, change))
    changes.sort(key=lambda item: (item[0], item[1]))
    note = f"each question's median over {min(len(earlier), WINDOW)} earlier compatible runs"
    return SectionComparison(section, SEASON, [c for _, _, c in changes], note)


def _change(
    section: Section, type_name: str, metric: str, test: _Test, margin: float, direction: Direction
) -> Change:
    import numpy as np

    e = test.evidence
    tonight = e.recent[-1]
    d = np.sort(e.recent.mean(axis=0) - e.reference)
    low, high = bootstrap_interval(d, INTERVAL_SEED)
    delta = e.new - e.old
    step = tonight - e.reference
    sign = 1.0 if delta <= 0 else -1.0
    moved_at = sorted(
        (i for i in range(len(test.ids)) if abs(step[i]) > EPS), key=lambda i: sign * step[i]
    )
    moved = tuple(Moved(test.ids[i], float(e.reference[i]), float(tonight[i])) for i in moved_at)
    return Change(
        section,
        type_name,
        metric,
        len(test.ids),
        e.old,
        e.new,
        delta,
        low,
        high,
        margin,
        direction,
        moved,
        e.p_fall,
        e.p_rise,
        e.nights,
    )
