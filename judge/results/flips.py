"""The verdicts that changed between two runs of the same items, question by question.

``judge diff`` lists them, and a run re-judged after a prompt edit lists the verdicts the edit
changed (the record's prompt-edit section, ``judge.record.build``): a change of status or of a score is a flip; a new note or
quote with the same scores is not.
"""

from __future__ import annotations

from typing import NamedTuple

from judge.judging.types import Verdict


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
