"""Comparing two measurements of the same thing: per-type metrics, and verdicts item by item.

Every metric here is better when higher. A move larger than the threshold is ``improved`` or
``regressed``; smaller moves are ``noise``.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

from judge.judging.verdict import Verdict

Section = Literal["retrieval", "judge"]
SECTIONS: tuple[Section, ...] = ("retrieval", "judge")
#: type → metric → value (None when undefined, e.g. retrieval of out-of-scope questions)
TypeMetrics = dict[str, dict[str, float | None]]

Direction = Literal["improved", "regressed", "noise"]


class Change(NamedTuple):
    section: Section
    type: str
    metric: str
    old: float
    new: float | None
    """None when the metric has no value any more (e.g. every verdict of the type failed)."""
    delta: float | None
    direction: Direction

    def describe(self) -> str:
        arrow = {"regressed": "▼", "improved": "▲", "noise": "·"}[self.direction]
        if self.new is None or self.delta is None:
            return f"{arrow} {self.type} {self.metric}: {self.old:.3f} → none (no value any more)"
        return f"{arrow} {self.type} {self.metric}: {self.old:.3f} → {self.new:.3f} ({self.delta:+.3f})"


class SectionComparison(NamedTuple):
    """One section compared with one earlier run (or why it was not compared)."""

    section: Section
    baseline: str | None
    """Folder of the run compared with; None when nothing compatible was found."""
    changes: list[Change]
    note: str

    @property
    def regressions(self) -> list[Change]:
        return [c for c in self.changes if c.direction == "regressed"]

    @property
    def moved(self) -> list[Change]:
        """The changes beyond the threshold, regressions first."""
        return sorted(
            (c for c in self.changes if c.direction != "noise"),
            key=lambda c: (c.direction != "regressed", c.type, c.metric),
        )


def compare_metrics(
    section: Section, old: TypeMetrics, new: TypeMetrics, threshold: float
) -> list[Change]:
    """Every metric that had a value before, with its direction (all are better when higher).

    A metric that lost its value (every verdict of a type failed) is a regression, and so is a
    fall in ``n``, the questions scored: a failing question must not make a mean look better
    by dropping out of it. ``n`` moves by whole questions, so any fall counts.
    """
    changes = []
    for type_name, metrics in new.items():
        for metric, value in metrics.items():
            before = old.get(type_name, {}).get(metric)
            if before is None:
                continue
            if value is None:
                changes.append(Change(section, type_name, metric, before, None, None, "regressed"))
                continue
            delta = value - before
            limit = 0.0 if metric == "n" else threshold
            direction: Direction = (
                "noise" if abs(delta) <= limit else "improved" if delta > 0 else "regressed"
            )
            changes.append(Change(section, type_name, metric, before, value, delta, direction))
    return changes


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
