"""Comparing two measurements of the same thing: per type and metric, question by question
(paired). The verdicts that changed item by item are ``judge.results.flips``'.

Every metric here is better when higher. For one (section, type, metric) the change is the mean
of ``new - old`` over the questions with a value in both runs, with a bootstrap interval; the
rule that calls it ``regressed``, ``improved``, ``listed`` or ``noise`` is
``judge.results.paired.classify``, with a margin on the metric's scale (``GateRule``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from judge.axes import SCORE_METRICS, metric_scale
from judge.config import ReportsConfig
from judge.grouped import ALL
from judge.grouped import type_order as grouped_type_order
from judge.results.paired import (
    EPS,
    LIST_LEVEL,
    Direction,
    bootstrap_interval,
    classify,
    holm,
    sign_flip_tails,
)

# numpy is imported by the functions that compute with it: rendering a record (judge report)
# needs none of it, and it is a tenth of the command's start-up.
if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

Section = Literal["retrieval", "judge"]
SECTIONS: tuple[Section, ...] = ("retrieval", "judge")
#: type → metric → value (None when undefined, e.g. retrieval of out-of-scope questions)
TypeMetrics = dict[str, dict[str, float | None]]
#: metric → question id → value
MetricValues = dict[str, dict[str, float]]
#: How many questions a one-line message names.
FIRST_IDS = 5
#: The comparison "against" the season (``judge.results.season``).
SEASON = "season"
#: The bootstrap seed of every interval: an interval is a function of the changes alone (sorted
#: first), never of a name or an order.
INTERVAL_SEED = 20261201
#: The range of a 0-2 score.
SCALE_RANGE = 2.0
#: A collapse of one type (``collapsed``): the share of its pairs that fell to the floor.
COLLAPSE_SHARE = 0.8
#: A pooled collapse (``pooled_collapse``): how far the mean over all questions fell (on a 0-2
#: score, on a share), and how many questions must have fallen by half the range or more.
POOLED_FALL_SCORE = 0.5
POOLED_FALL_SHARE = 0.2
#: Metrics that never collapse pooled: ``full_marks`` follows from the two scores (and moves
#: with either), ``quote_verified`` is the judge's quoting rather than the answer, ``ok_share``
#: has its own check (answers were judged).
POOLED_EXEMPT = frozenset({"full_marks", "quote_verified", "ok_share"})
POOLED_MIN_FALLS = 4


class GateRule(NamedTuple):
    """When a paired change counts (``reports.margin_share``, ``margin_score``; the levels are
    the gate's, measured in docs/gate.md)."""

    margin_share: float = 0.05
    """How far the mean of a 0-1 metric must move."""
    margin_score: float = 0.10
    """How far the mean of a 0-2 score must move."""
    level: float = 0.001
    """Family-wise level of one night's paired checks (every type and metric, against the last
    run and the baseline together; Holm's rule over their exact sign-flip p-values)."""
    season_level: float = 0.01
    """Family-wise level of one night's checks against the season (``judge.results.season``)."""

    @classmethod
    def from_config(cls, reports: ReportsConfig) -> GateRule:
        return cls(reports.margin_share, reports.margin_score)

    def margin(self, metric: str) -> float:
        # The optional axes (correctness) are scores too: margin_score, like relevance.
        return self.margin_score if metric_scale(metric) == "score" else self.margin_share

    def describe(self) -> str:
        return (
            f"margin {self.margin_share:g} on 0-1 metrics, {self.margin_score:g} on 0-2 scores; "
            f"family-wise level {self.level:g} a night question by question, "
            f"{self.season_level:g} against the season; collapses always"
        )


class QuestionValues(NamedTuple):
    """One run's values, question by question: what paired comparisons are made of."""

    types: dict[str, str]
    """Question id → type."""
    values: dict[Section, MetricValues]
    """Section → metric → question id → value (a question without a value is absent)."""
    answers: Mapping[str, str] = MappingProxyType({})
    """Question id → a digest of its answer (``judge.results.values.answer_digest``): the
    season counts a kept answer once (``judge.results.season``). Empty for values saved before
    it was kept: every night is then an observation."""


class Moved(NamedTuple):
    """One question whose value changed."""

    question_id: str
    old: float
    new: float

    def describe(self) -> str:
        return f"{self.question_id} {_value(self.old)}→{_value(self.new)}"


def _value(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:.3f}"


class Change(NamedTuple):
    """One (section, type, metric) of two runs compared question by question."""

    section: Section
    type: str
    metric: str
    n: int
    """Questions with a value in both runs (the pairs)."""
    old: float
    """Mean over the pairs, before."""
    new: float
    """Mean over the pairs, now."""
    delta: float
    """Mean change (``new - old``)."""
    low: float
    high: float
    """The 95 % bootstrap interval of the mean change."""
    margin: float
    direction: Direction
    moved: tuple[Moved, ...]
    """The questions whose value changed, the largest move in the change's direction first."""
    p_fall: float = 1.0
    """The exact one-sided p-value of a fall (``judge.results.paired.sign_flip_tails``; against
    the season, ``judge.results.season``'s)."""
    p_rise: float = 1.0
    """The same for a rise."""
    nights: int = 1
    """Nights whose values make ``new`` (against the season: up to 3; otherwise 1)."""

    def describe(self, first: int = FIRST_IDS) -> str:
        """e.g. ``▼ factual faithfulness: 2.000 → 1.667 (-0.333 [-0.583, -0.083], 12
        questions); moved: q01 2→1, …``; at most ``first`` questions are named."""
        arrow = {"regressed": "▼", "collapsed": "▼▼", "improved": "▲", "noise": "·"}.get(
            self.direction
        )
        if arrow is None:  # listed: beyond the margin, not shown to be more than noise
            arrow = "▽" if self.delta < 0 else "△"
        over = _questions(self.n) + (f", {self.nights} nights" if self.nights > 1 else "")
        text = (
            f"{arrow} {self.type} {self.metric}: {self.old:.3f} → {self.new:.3f} "
            f"({self.delta:+.3f} [{self.low:+.3f}, {self.high:+.3f}], {over}, "
            f"p {p_value(self.p_fall if self.delta < 0 else self.p_rise)})"
        )
        if self.direction == "collapsed":
            text += ", collapsed"
        elif self.direction == "listed":
            text += f", {self.listed_why()}"
        if self.moved:
            text += f"; moved: {moved_list(self.moved, first)}"
        return text

    @property
    def all_moved(self) -> bool:
        """Every pair moved the way the mean did (all fell, or all rose): the most the exact
        paired test can see in ``n`` pairs (its smallest p-value, ``2 ** -n``)."""
        return (
            self.n > 0
            and len(self.moved) == self.n
            and all((m.new < m.old) == (self.delta < 0) for m in self.moved)
        )

    def listed_why(self) -> str:
        """Why a listed change was not called: "not shown to be more than noise", or, when every
        question moved (``all_moved``), too few questions for the exact test to call any move
        at tonight's level ("noise" would misread a type whose every chunk left the top k)."""
        if self.all_moved:
            went = "fell" if self.delta < 0 else "rose"
            return f"every one of its {_questions(self.n)} {went}: too few to call"
        return "not shown to be more than noise"

    def headline(self) -> str:
        """e.g. ``judge factual faithfulness -0.333 [-0.583, -0.083] over 12 questions``."""
        nights = f" and {self.nights} nights" if self.nights > 1 else ""
        return (
            f"{self.section} {self.type} {self.metric} {self.delta:+.3f} "
            f"[{self.low:+.3f}, {self.high:+.3f}] over {_questions(self.n)}{nights}"
        )

    def to_json(self) -> dict[str, Any]:
        """Every field; ``moved`` in full, as objects."""
        data = self._asdict()
        data["moved"] = [m._asdict() for m in self.moved]
        return data


def _questions(n: int) -> str:
    return f"{n} question" + ("" if n == 1 else "s")


def p_value(p: float) -> str:
    """A p-value as people read it: 0.0625, 0.0012, < 0.0001."""
    return "< 0.0001" if p < 0.0001 else f"{p:.4f}".rstrip("0").rstrip(".")


def moved_list(moved: Sequence[Moved], first: int) -> str:
    """``q01 2→1, q04 2→1, …`` (``first`` at most; 0 names them all)."""
    shown = moved if first <= 0 else moved[:first]
    more = len(moved) - len(shown)
    return ", ".join(m.describe() for m in shown) + (f", … ({more} more)" if more else "")


class SectionComparison(NamedTuple):
    """One section compared with one earlier run (or why it was not compared)."""

    section: Section
    baseline: str | None
    """Folder of the run compared with, "baseline" for the pinned baseline; None when nothing
    compatible was found."""
    changes: list[Change]
    note: str

    @property
    def regressions(self) -> list[Change]:
        """Collapses first, then the falls shown to be more than noise."""
        return [c for c in self.changes if c.direction == "collapsed"] + [
            c for c in self.changes if c.direction == "regressed"
        ]

    @property
    def listed(self) -> list[Change]:
        """Moves beyond the margin that were not shown to be more than noise."""
        return [c for c in self.changes if c.direction == "listed"]

    @property
    def moved(self) -> list[Change]:
        """The changes that are not noise: collapses, regressions, improvements, listed."""
        order = {"collapsed": 0, "regressed": 1, "improved": 2, "listed": 3}
        return sorted(
            (c for c in self.changes if c.direction != "noise"),
            key=lambda c: order[c.direction],
        )

    def counts_text(self) -> str:
        """e.g. "of 30 (type, metric) cells: 0 collapsed, 1 regressed, 0 improved, 2 listed
        (beyond the margin, not shown to be more than noise), 27 within noise": what every view
        says of a comparison (cells, not questions)."""
        counts = self.counts()
        collapsed = f"{counts['collapsed']} collapsed, " if counts["collapsed"] else ""
        return (
            f"of {len(self.changes)} (type, metric) cells: {collapsed}{counts['regressed']} "
            f"regressed, {counts['improved']} improved, {counts['listed']} listed (beyond the "
            f"margin, not shown to be more than noise), {counts['noise']} within noise"
        )

    def counts(self) -> dict[Direction, int]:
        counts: dict[Direction, int] = {
            "collapsed": 0,
            "regressed": 0,
            "improved": 0,
            "listed": 0,
            "noise": 0,
        }
        for c in self.changes:
            counts[c.direction] += 1
        return counts


def paired_change(
    section: Section,
    type_name: str,
    metric: str,
    question_ids: Sequence[str],
    old: Sequence[float],
    new: Sequence[float],
    rule: GateRule,
    can_collapse: bool = False,
) -> Change:
    """One (section, type, metric) over its pairs (at least one); ``can_collapse``: the metric
    is one a collapse is defined on (``collapsible``)."""
    import numpy as np

    before = np.asarray(old, dtype=float)
    after = np.asarray(new, dtype=float)
    d = after - before
    delta = float(d.mean())
    low, high = bootstrap_interval(np.sort(d), INTERVAL_SEED)
    p_fall, p_rise = sign_flip_tails(d)
    margin = rule.margin(metric)
    # The cell on its own; ``decide`` settles it within the night's family.
    direction = (
        "collapsed"
        if can_collapse
        and collapsed(before, after, SCALE_RANGE if metric_scale(metric) == "score" else 1.0)
        else classify(delta, p_fall, p_rise, margin, rule.level)
    )
    changed = np.flatnonzero(d != 0)
    # The largest move in the direction of the mean first (a fall: the largest falls first).
    sign = -1.0 if delta > 0 else 1.0
    order = changed[np.argsort(sign * d[changed], kind="stable")]
    moved = tuple(Moved(question_ids[i], float(before[i]), float(after[i])) for i in order)
    return Change(
        section,
        type_name,
        metric,
        len(d),
        float(before.mean()),
        float(after.mean()),
        delta,
        low,
        high,
        margin,
        direction,
        moved,
        p_fall,
        p_rise,
    )


_AT_K = re.compile(r"(hit|recall)@(\d+)")


def collapsible(metrics: Iterable[str]) -> frozenset[str]:
    """The metrics a collapse is defined on: the judge's scores (an answer gone bad; the
    optional axes' too, correctness at its floor like the others), and
    retrieval's hit and recall at the largest k measured (the relevant chunk gone from the whole
    ranking). Not ``full_marks`` (it follows from the two scores and moves with either),
    ``quote_verified`` (the judge's quoting, not the answer), ``ok_share`` (its own check:
    answers were judged), nor retrieval at smaller k, mrr or nDCG: a relevant chunk moving from
    rank 1 to rank 2 takes hit@1 to its floor, and both questions of a two-question type do
    that together on a noisy night now and then (docs/gate.md)."""
    names = set(metrics)
    ks = [int(m.group(2)) for m in map(_AT_K.fullmatch, names) if m is not None]
    top = {f"{name}@{max(ks)}" for name in ("hit", "recall")} if ks else set()
    return frozenset((names & SCORE_METRICS) | (names & top))


def collapsed(
    before: npt.NDArray[np.float64], after: npt.NDArray[np.float64], top: float = 1.0
) -> bool:
    """A collapse of one type: most of its answers failed at once, whatever the type's size.

    At least ``COLLAPSE_SHARE`` of its pairs, and at least two, are at the bottom of the scale
    now (a score of 0; hit or recall 0: the relevant chunk gone), and at least two of them fell
    there tonight, one of them from the top (``top``: 2 for a score, 1 for a share): four of five
    negative answers judged unfaithful overnight (one of them may have been at 0 already), or
    both answers of a two-question type. Verdict noise moves a score by a point: it takes a
    two-question type from 1 and 1 to 0 and 0 on a noisy night now and then, never from 2 to 0;
    docs/gate.md measures it. Only for the metrics of ``collapsible``.
    """
    import numpy as np

    if before.size == 0:
        return False
    floor = after <= EPS
    fell = (before > EPS) & floor
    whole = bool(np.any(fell & (before >= top - EPS)))
    return (
        whole
        and int(np.count_nonzero(fell)) >= 2
        and int(np.count_nonzero(floor)) >= max(2, COLLAPSE_SHARE * before.size - EPS)
    )


def pooled_collapse(
    section: Section, old: QuestionValues, new: QuestionValues, rule: GateRule
) -> list[Change]:
    """The collapse of a whole section's metric over all questions (type ``all``): its mean fell
    by ``POOLED_FALL_SCORE`` on a 0-2 score or ``POOLED_FALL_SHARE`` on a share, with at least
    ``POOLED_MIN_FALLS`` questions falling by half the range or more. It catches what no single
    type can show on a small golden set: every answer replaced by nonsense on a 10-question
    set, or a fifth of all questions losing their relevant chunk."""
    import numpy as np

    found = []
    old_metrics, new_metrics = old.values.get(section, {}), new.values.get(section, {})
    for metric, after in new_metrics.items():
        before = old_metrics.get(metric)
        if not before or metric in POOLED_EXEMPT:
            continue
        ids = [q for q in after if q in before]
        if not ids:
            continue
        d = np.asarray([after[q] - before[q] for q in ids], dtype=float)
        score = metric_scale(metric) == "score"
        scale = SCALE_RANGE if score else 1.0
        fall = POOLED_FALL_SCORE if score else POOLED_FALL_SHARE
        falls = int(np.count_nonzero(d <= -scale / 2 + EPS))
        if float(d.mean()) > -fall + EPS or falls < POOLED_MIN_FALLS:
            continue
        change = paired_change(
            section, ALL, metric, ids, [before[q] for q in ids], [after[q] for q in ids], rule
        )
        found.append(change._replace(direction="collapsed"))
    return found


def decide(comparisons: Sequence[SectionComparison], rule: GateRule) -> list[SectionComparison]:
    """One night's family of paired checks decided together: every (section, type, metric)
    against the last run and against the baseline is one test of a fall (and one of a rise),
    and Holm's rule keeps the family-wise level at ``rule.level``. A change is ``regressed``
    when its fall is rejected and the mean fell by more than the margin (``improved``
    symmetrically); a collapse stays a collapse; a move beyond the margin that is not rejected
    is listed (``listed``); the rest is noise. Comparisons against the season are decided in
    their own family (``judge.results.season``) and pass through unchanged."""
    family = [
        (ci, k)
        for ci, comp in enumerate(comparisons)
        if comp.baseline != SEASON
        for k, c in enumerate(comp.changes)
        if c.type != ALL
    ]
    falls = holm([comparisons[ci].changes[k].p_fall for ci, k in family], rule.level)
    rises = holm([comparisons[ci].changes[k].p_rise for ci, k in family], rule.level)
    decided = {
        (ci, k): (fall, rise) for (ci, k), fall, rise in zip(family, falls, rises, strict=True)
    }
    out = []
    for ci, comp in enumerate(comparisons):
        if comp.baseline == SEASON:
            out.append(comp)
            continue
        changes = []
        for k, c in enumerate(comp.changes):
            if c.direction == "collapsed" or (ci, k) not in decided:
                changes.append(c)
                continue
            fall, rise = decided[(ci, k)]
            changes.append(c._replace(direction=_direction(c, fall, rise)))
        out.append(comp._replace(changes=changes))
    return out


def _direction(c: Change, fall: bool, rise: bool) -> Direction:
    if abs(c.delta) <= c.margin + EPS:
        return "noise"
    if c.delta < 0 and fall:
        return "regressed"
    if c.delta > 0 and rise:
        return "improved"
    p = c.p_fall if c.delta < 0 else c.p_rise
    return "listed" if p <= LIST_LEVEL + EPS else "noise"


def compare_values(
    section: Section,
    old: QuestionValues,
    new: QuestionValues,
    rule: GateRule,
    type_order: Sequence[str] = (),
) -> list[Change]:
    """Every (type, metric) of ``section`` with at least one question valued in both runs;
    types in ``type_order`` (then as found), metrics in the new run's order.

    Per type; a pooled row (type ``all``) only where the whole section collapsed
    (``pooled_collapse``): a pooled row per metric tested like the types added false alarms and
    caught nothing more (docs/gate.md). Each change is decided on its own here; a night's
    changes are decided together by ``decide``. A question's type is the new run's (compared runs share the golden set). A question with a
    value in one run only is no pair: a question that failed is a failure of its own (the
    gate's "answers were produced" and "answers were judged"), never a smaller mean.
    """
    old_metrics, new_metrics = old.values.get(section, {}), new.values.get(section, {})
    types = {**old.types, **new.types}
    order = grouped_type_order(types, type_order)
    position = {t: i for i, t in enumerate(order)}
    changes: list[tuple[int, int, Change]] = []
    can = collapsible(new_metrics)
    for metric_index, (metric, after) in enumerate(new_metrics.items()):
        before = old_metrics.get(metric)
        if not before:
            continue
        groups: dict[str, list[str]] = {}
        for qid in after:
            if qid in before:
                groups.setdefault(types.get(qid, "?"), []).append(qid)
        for type_name, ids in groups.items():
            change = paired_change(
                section,
                type_name,
                metric,
                ids,
                [before[q] for q in ids],
                [after[q] for q in ids],
                rule,
                metric in can,
            )
            changes.append((position.get(type_name, len(order)), metric_index, change))
    changes.sort(key=lambda item: (item[0], item[1]))
    return [c for _, _, c in changes] + pooled_collapse(section, old, new, rule)
