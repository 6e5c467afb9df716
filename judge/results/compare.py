"""Comparing two measurements of the same thing: per type and metric question by question
(paired), and verdicts item by item.

Every metric here is better when higher. For one (section, type, metric) the change is the mean
of ``new - old`` over the questions with a value in both runs, with a bootstrap interval; the
rule that calls it ``regressed``, ``improved``, ``too_few`` or ``noise`` is
``judge.results.paired.classify``, with a margin on the metric's scale (``GateRule``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, NamedTuple

import numpy as np

from judge.axes import SCORE_METRICS
from judge.config import ReportsConfig
from judge.grouped import type_order as grouped_type_order
from judge.judging.verdict import Verdict
from judge.results.paired import Direction, bootstrap_interval, classify, seed_for

Section = Literal["retrieval", "judge"]
SECTIONS: tuple[Section, ...] = ("retrieval", "judge")
#: type → metric → value (None when undefined, e.g. retrieval of out-of-scope questions)
TypeMetrics = dict[str, dict[str, float | None]]
#: metric → question id → value
MetricValues = dict[str, dict[str, float]]
#: How many questions a one-line message names.
FIRST_IDS = 5


class GateRule(NamedTuple):
    """When a paired change counts (``reports.margin_share``, ``margin_score``,
    ``min_questions``)."""

    margin_share: float = 0.05
    """How far the mean of a 0-1 metric must move."""
    margin_score: float = 0.10
    """How far the mean of a 0-2 score must move."""
    min_questions: int = 8
    """Fewer pairs than this: listed, never a regression."""

    @classmethod
    def from_config(cls, reports: ReportsConfig) -> GateRule:
        return cls(reports.margin_share, reports.margin_score, reports.min_questions)

    def margin(self, metric: str) -> float:
        return self.margin_score if metric in SCORE_METRICS else self.margin_share

    def describe(self) -> str:
        return (
            f"margin {self.margin_share:g} on 0-1 metrics, {self.margin_score:g} on 0-2 scores; "
            f"at least {_questions(self.min_questions)}"
        )


class QuestionValues(NamedTuple):
    """One run's values, question by question: what paired comparisons are made of."""

    types: dict[str, str]
    """Question id → type."""
    values: dict[Section, MetricValues]
    """Section → metric → question id → value (a question without a value is absent)."""


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

    def describe(self, first: int = FIRST_IDS) -> str:
        """e.g. ``▼ factual faithfulness: 2.000 → 1.667 (-0.333 [-0.583, -0.083], 12
        questions); moved: q01 2→1, …``; at most ``first`` questions are named."""
        arrow = {"regressed": "▼", "improved": "▲", "noise": "·"}.get(self.direction)
        if arrow is None:  # too_few: a move too small a type can call
            arrow = "▽" if self.delta < 0 else "△"
        text = (
            f"{arrow} {self.type} {self.metric}: {self.old:.3f} → {self.new:.3f} "
            f"({self.delta:+.3f} [{self.low:+.3f}, {self.high:+.3f}], {_questions(self.n)})"
        )
        if self.direction == "too_few":
            text += ", too few questions to call"
        if self.moved:
            text += f"; moved: {moved_list(self.moved, first)}"
        return text

    def headline(self) -> str:
        """e.g. ``judge factual faithfulness -0.333 [-0.583, -0.083] over 12 questions``."""
        return (
            f"{self.section} {self.type} {self.metric} {self.delta:+.3f} "
            f"[{self.low:+.3f}, {self.high:+.3f}] over {_questions(self.n)}"
        )

    def to_json(self) -> dict[str, Any]:
        """Every field; ``moved`` in full, as objects."""
        data = self._asdict()
        data["moved"] = [m._asdict() for m in self.moved]
        return data


def _questions(n: int) -> str:
    return f"{n} question" + ("" if n == 1 else "s")


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
        return [c for c in self.changes if c.direction == "regressed"]

    @property
    def listed(self) -> list[Change]:
        """Moves beyond the margin in types with too few questions to call."""
        return [c for c in self.changes if c.direction == "too_few"]

    @property
    def moved(self) -> list[Change]:
        """The changes that are not noise: regressions, then improvements, then listed."""
        order = {"regressed": 0, "improved": 1, "too_few": 2}
        return sorted(
            (c for c in self.changes if c.direction != "noise"),
            key=lambda c: order[c.direction],
        )

    def counts(self) -> dict[Direction, int]:
        counts: dict[Direction, int] = {"regressed": 0, "improved": 0, "too_few": 0, "noise": 0}
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
) -> Change:
    """One (section, type, metric) over its pairs (at least one)."""
    before = np.asarray(old, dtype=float)
    after = np.asarray(new, dtype=float)
    d = after - before
    delta = float(d.mean())
    low, high = bootstrap_interval(d, seed_for(section, type_name, metric))
    margin = rule.margin(metric)
    direction = classify(delta, low, high, len(d), margin, rule.min_questions)
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
    )


def compare_values(
    section: Section,
    old: QuestionValues,
    new: QuestionValues,
    rule: GateRule,
    type_order: Sequence[str] = (),
) -> list[Change]:
    """Every (type, metric) of ``section`` with at least one question valued in both runs;
    types in ``type_order`` (then as found), metrics in the new run's order.

    Per type only, not pooled over all questions: on simulated nights with nothing changed, a
    pooled row per metric more than doubled the nights with a false alarm (docs/gate.md). A
    question's type is the new run's (compared runs share the golden set). A question with a
    value in one run only is no pair: a question that failed is a failure of its own (the
    gate's "answers were produced" and "answers were judged"), never a smaller mean.
    """
    old_metrics, new_metrics = old.values.get(section, {}), new.values.get(section, {})
    types = {**old.types, **new.types}
    order = grouped_type_order(types, type_order)
    position = {t: i for i, t in enumerate(order)}
    changes: list[tuple[int, int, Change]] = []
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
            )
            changes.append((position.get(type_name, len(order)), metric_index, change))
    changes.sort(key=lambda item: (item[0], item[1]))
    return [c for _, _, c in changes]


class Flip(NamedTuple):
    """A verdict that changed between two runs of the same items."""

    question_id: str
    old: Verdict
    new: Verdict

    def describe(self) -> str:
        o, n = self.old, self.new
        return (
            f"{self.question_id}: F{o.faithfulness} R{o.relevance} ({o.status}) → "
            f"F{n.faithfulness} R{n.relevance} ({n.status})"
        )


def changed_verdicts(old: dict[str, Verdict], new: dict[str, Verdict]) -> list[Flip]:
    """Verdicts whose status or scores differ, for the questions judged in both."""

    def outcome(v: Verdict) -> tuple[str, int | None, int | None]:
        return v.status, v.faithfulness, v.relevance

    return [
        Flip(qid, old[qid], verdict)
        for qid, verdict in new.items()
        if qid in old and outcome(old[qid]) != outcome(verdict)
    ]
