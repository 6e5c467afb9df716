"""A panel of judges: several backends judge the same answers, and their verdicts are voted.

The vote, per axis, is the median of the members' scores, a tie going to the lower score: with
an even number of voters the lower of the two middle scores (2 and 1 give 1; 2, 2, 1, 1 give 1).
The panel votes, it never debates: members do not see each other's verdicts.

Only a member whose verdict is ok votes. A member that failed on an item (a parse error, a
timeout, a prompt too long) leaves the others' vote, marked with how many voted out of how many
members (``PanelVote.voters``, ``members``); a panel verdict is never silently a full panel's. An
item no member judged has no vote.

An item is flagged for a person's look when, on either axis, the members' scores are 2 points
apart (a 0 beside a 2), or split: no score has more than half of the votes (two members who
differ, or three who each say something else). Flagged items are shown with the panel's
figures and taken first into the next ``judge audit sample``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import NamedTuple

from judge.axes import AXES
from judge.judging.types import Verdict


def vote(scores: Sequence[int]) -> int:
    """The median of ``scores``, a tie to the lower score (module docstring)."""
    if not scores:
        raise ValueError("a vote needs at least one score")
    ordered = sorted(scores)
    return ordered[(len(ordered) - 1) // 2]


def split(scores: Sequence[int]) -> bool:
    """No score has more than half of the votes (one voter is never split)."""
    if len(scores) < 2:
        return False
    return Counter(scores).most_common(1)[0][1] * 2 <= len(scores)


class PanelVote(NamedTuple):
    """The panel's verdict on one answer."""

    question_id: str
    scores: tuple[int, ...] | None
    """One voted score per axis of ``judge.axes.AXES``; None when no member voted."""
    voters: int
    members: int
    by_member: dict[str, tuple[int, ...] | None]
    """Each member's scores (None: its verdict was not ok, or it has none)."""
    flags: tuple[str, ...]
    """Why a person should look ("faithfulness 2 points apart", "relevance split", "1 of 3
    voted"); empty when the members agree."""

    @property
    def full(self) -> bool:
        return self.voters == self.members

    @property
    def disputed(self) -> bool:
        """The members' scores are 2 points apart or split on an axis."""
        return any(not flag.endswith("voted") for flag in self.flags)


def scores_of(verdict: Verdict | None) -> tuple[int, ...] | None:
    """A verdict's scores per axis, or None when it is not ok."""
    if verdict is None or verdict.status != "ok":
        return None
    scores = tuple(getattr(verdict, axis) for axis in AXES)
    return None if None in scores else tuple(int(s) for s in scores)


def panel_vote(question_id: str, verdicts: Mapping[str, Verdict | None]) -> PanelVote:
    """The vote of one answer from each member's verdict (by member name, in panel order)."""
    by_member = {name: scores_of(verdict) for name, verdict in verdicts.items()}
    voting = [s for s in by_member.values() if s is not None]
    flags: list[str] = []
    voted: tuple[int, ...] | None = None
    if voting:
        voted = tuple(vote([s[i] for s in voting]) for i in range(len(AXES)))
        for i, axis in enumerate(AXES):
            column = [s[i] for s in voting]
            if max(column) - min(column) >= 2:
                flags.append(f"{axis} 2 points apart")
            elif split(column):
                flags.append(f"{axis} split")
    if len(voting) < len(by_member):
        flags.append(f"{len(voting)} of {len(by_member)} voted")
    return PanelVote(question_id, voted, len(voting), len(by_member), by_member, tuple(flags))


def panel_votes(
    members: Mapping[str, Mapping[str, Verdict]], question_ids: Sequence[str]
) -> list[PanelVote]:
    """The vote on every answer, in ``question_ids`` order, from each member's verdicts by
    question id (a member with no verdict for an answer did not vote on it)."""
    return [
        panel_vote(qid, {name: verdicts.get(qid) for name, verdicts in members.items()})
        for qid in question_ids
    ]
