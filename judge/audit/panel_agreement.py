"""A panel of judges against the human labels and against each other (``judge panel``).

Per member and for the panel's vote: the audit's statistics per axis (``agreement.axis_stats``:
exact agreement and quadratic κ with their intervals, balanced accuracy, n) over every label
given for the exact answer judged, where that member's verdict is ok. Between members: the
quadratic κ of each pair per axis, with its bootstrap interval, over the answers both judged.
Two members of one family making the same mistakes agree with each other more than with people:
the κ between members next to each one's κ with the humans shows it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import combinations
from typing import NamedTuple

from judge.audit.agreement import axis_stats
from judge.audit.stats import bootstrap_ci, quadratic_kappa
from judge.audit.types import AxisStats, Interval
from judge.axes import AXES
from judge.hashing import text_sha256
from judge.inputs.labels import HumanLabel
from judge.judging.items import JudgeItem
from judge.judging.panel import PanelVote, scores_of
from judge.judging.types import Verdict

#: The row of the panel's own vote among the members'.
PANEL = "panel vote"


class MemberAgreement(NamedTuple):
    """One member's (or the vote's) agreement with the labels, per axis."""

    member: str
    per_axis: dict[str, AxisStats]


class PairKappa(NamedTuple):
    """Two members' quadratic κ on one axis, over the answers both judged."""

    first: str
    second: str
    axis: str
    n: int
    kappa: float | None
    interval: Interval | None


def _labelled(
    items: Sequence[JudgeItem], labels: Sequence[HumanLabel]
) -> list[tuple[str, HumanLabel]]:
    hashes = {item.question_id: text_sha256(item.record.answer) for item in items}
    return [
        (lab.question_id, lab) for lab in labels if hashes.get(lab.question_id) == lab.answer_sha256
    ]


def _agreement(
    name: str,
    labelled: list[tuple[str, HumanLabel]],
    scores: Mapping[str, tuple[int, ...] | None],
) -> MemberAgreement:
    per_axis: dict[str, AxisStats] = {}
    for index, axis in enumerate(AXES):
        pairs = [
            (getattr(label, axis), judged[index])
            for qid, label in labelled
            if (judged := scores.get(qid)) is not None
        ]
        per_axis[axis] = axis_stats(pairs)
    return MemberAgreement(name, per_axis)


def members_agreement(
    items: Sequence[JudgeItem],
    labels: Sequence[HumanLabel],
    members: Mapping[str, Mapping[str, Verdict]],
    votes: Sequence[PanelVote],
) -> list[MemberAgreement]:
    """Each member's agreement with the labels, in panel order, then the vote's."""
    labelled = _labelled(items, labels)
    rows = [
        _agreement(name, labelled, {qid: scores_of(v) for qid, v in verdicts.items()})
        for name, verdicts in members.items()
    ]
    rows.append(_agreement(PANEL, labelled, {v.question_id: v.scores for v in votes}))
    return rows


def members_kappa(votes: Sequence[PanelVote]) -> list[PairKappa]:
    """Every pair of members' quadratic κ per axis, over the answers both voted on."""
    if not votes:
        return []
    names = list(votes[0].by_member)
    pairs = []
    for first, second in combinations(names, 2):
        for index, axis in enumerate(AXES):
            scored = [
                (a[index], b[index])
                for vote in votes
                if (a := vote.by_member[first]) is not None
                and (b := vote.by_member[second]) is not None
            ]
            pairs.append(
                PairKappa(
                    first,
                    second,
                    axis,
                    len(scored),
                    quadratic_kappa(scored),
                    bootstrap_ci(scored, quadratic_kappa),
                )
            )
    return pairs


def _figure(value: float | None, interval: Interval | None) -> str:
    shown = "–" if value is None else f"{value:.2f}"
    if interval is None:
        return shown
    return f"{shown} [{interval.low:.2f}, {interval.high:.2f}]"


def agreement_lines(rows: Sequence[MemberAgreement], pairs: Sequence[PairKappa]) -> list[str]:
    """Each member's and the vote's agreement with the labels, then the members' κ with each
    other: every figure with its 95 % interval and n."""
    lines = ["agreement with the human labels (exact, quadratic κ; 95 % intervals):"]
    for row in rows:
        cells = [
            f"{axis} exact {_figure(s.exact, s.exact_ci)}, κ {_figure(s.kappa, s.kappa_ci)}, "
            f"n = {s.n}"
            for axis, s in row.per_axis.items()
        ]
        lines.append(f"  {row.member}: " + "; ".join(cells))
    if pairs:
        lines.append("members with each other (quadratic κ; 95 % intervals):")
        lines += [
            f"  {p.first} · {p.second}, {p.axis}: κ {_figure(p.kappa, p.interval)}, n = {p.n}"
            for p in pairs
        ]
    return lines


class PanelSummary(NamedTuple):
    """A ``judge panel`` of a run's answers, as the run's views show it: the members, each
    one's quadratic κ with the humans per axis (the vote's last), the members' κ with each
    other, and the run's answers the members disputed (question id → why)."""

    members: tuple[str, ...]
    with_humans: list[PairKappa]
    """Per member (and ``PANEL``) and axis: ``first`` the member, ``second`` "humans"."""
    between: list[PairKappa]
    disputed: dict[str, tuple[str, ...]]
    answers: int
    """The run's answers the panel judged (its exact answers)."""
    report: str
    """The account's file name under ``reports/panel/``."""


def with_humans(rows: Sequence[MemberAgreement]) -> list[PairKappa]:
    """Each member's (and the vote's) quadratic κ with the humans per axis, as pairs."""
    return [
        PairKappa(row.member, "humans", axis, s.n, s.kappa, s.kappa_ci)
        for row in rows
        for axis, s in row.per_axis.items()
    ]
