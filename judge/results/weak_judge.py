"""A weak judge, from its replies alone: one that repeats the prompt's format example, or gives
the same reply for most items of a judgement.

Real data showed both: a small model answered 80 of 80 chunk grades with
``{ "grade": 2, "reason": "..."}``, the chunk prompt's own example, and 12 of 12 correctness
replies the same way, and the run passed as ok with no warning. A reply is the format example
when its reason (or note) is a placeholder (``...``, ``…``, ``<...>``): the prompts' examples
are written with placeholders, so a judge that copies one copies a placeholder. A reply is the
same as another when their texts are equal once whitespace is collapsed.

The rule, per judgement (the answers' verdicts, the chunk grades, the correctness verdicts):
among at least ``SAME_REPLY_MIN`` ok replies, the format example in any of them, or one reply
text in at least ``SAME_REPLY_SHARE`` (three quarters, as ``judge.results.review``'s position
bias) of them. The lexical judge reads no prompt and computes its replies: never flagged.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from typing import NamedTuple

from judge.judging.types import ChunkGrade, CorrectnessVerdict, Verdict

#: A weak judge's replies: at least this share of them one text ...
SAME_REPLY_SHARE = 0.75
#: ... among at least this many ok replies of one judgement (fewer say nothing).
SAME_REPLY_MIN = 10
#: A reason or note that is only a placeholder of the prompt's format example.
_PLACEHOLDER = re.compile(r"^\s*(?:\.\.\.|…|<[^<>]*>)\s*$")
#: How much of a repeated reply a warning quotes.
SHOWN_CHARS = 60


class JudgeReply(NamedTuple):
    """One ok reply of a judgement: its raw text and its reason (or note)."""

    text: str
    reason: str


class WeakJudge(NamedTuple):
    """A judgement whose replies say the judge is not judging."""

    task: str
    """The judgement in words: "answer verdicts", "chunk grades", "correctness verdicts"."""
    reply: str
    """The most common reply, whitespace collapsed."""
    k: int
    """Replies that are that one (or, for ``example``, that carry a placeholder)."""
    n: int
    """Ok replies of the judgement."""
    example: bool
    """The replies repeat the prompt's format example (a placeholder as their reason)."""

    @property
    def warning(self) -> str:
        shown = self.reply if len(self.reply) <= SHOWN_CHARS else self.reply[:SHOWN_CHARS] + "…"
        what = (
            "repeat the prompt's format example (a placeholder as their reason)"
            if self.example
            else f"are one and the same reply ({shown})"
        )
        return (
            f"weak judge: {self.k} of {self.n} {self.task} {what}: the judge is likely not "
            "reading the items; check them by hand before trusting these scores"
        )


def _normal(text: str) -> str:
    return " ".join(text.split())


def is_format_example(reason: str) -> bool:
    """Whether a reply's reason or note is only a placeholder (``...``, ``…``, ``<...>``)."""
    return bool(_PLACEHOLDER.match(reason))


def weak_judge(task: str, replies: Iterable[JudgeReply]) -> WeakJudge | None:
    """The weak-judge finding of one judgement's ok replies, or None (the module's rule)."""
    found = list(replies)
    if len(found) < SAME_REPLY_MIN:
        return None
    texts = Counter(_normal(r.text) for r in found)
    reply, k = min(texts.items(), key=lambda pair: (-pair[1], pair[0]))
    examples = sum(is_format_example(r.reason) for r in found)
    if examples:
        return WeakJudge(task, reply, examples, len(found), True)
    if k >= SAME_REPLY_SHARE * len(found):
        return WeakJudge(task, reply, k, len(found), False)
    return None


def is_repeated(finding: WeakJudge | None, reply: JudgeReply) -> bool:
    """Whether one reply is what made its judgement weak (the review queue's ``weak_judge``)."""
    if finding is None:
        return False
    if finding.example:
        return is_format_example(reply.reason)
    return _normal(reply.text) == finding.reply


class Judgements(NamedTuple):
    """A run's ok replies per judgement, by question id (chunk grades: several a question)."""

    answers: dict[str, JudgeReply]
    chunks: dict[str, list[JudgeReply]]
    correctness: dict[str, JudgeReply]


def replies(
    verdicts: Iterable[Verdict],
    chunk_grades: Iterable[ChunkGrade],
    correctness: Iterable[CorrectnessVerdict],
) -> Judgements:
    """The ok replies of each judgement (a verdict's reason is its note)."""
    chunks: dict[str, list[JudgeReply]] = {}
    for g in chunk_grades:
        if g.status == "ok":
            chunks.setdefault(g.question_id, []).append(JudgeReply(g.raw_reply, g.reason))
    return Judgements(
        {v.question_id: JudgeReply(v.raw_reply, v.note) for v in verdicts if v.status == "ok"},
        chunks,
        {c.question_id: JudgeReply(c.raw_reply, c.reason) for c in correctness if c.status == "ok"},
    )


def weak_judgements(found: Judgements, backend: str) -> list[WeakJudge]:
    """Every judgement of the run whose replies make the judge weak (none for the lexical
    judge, which computes its replies)."""
    if backend == "lexical":
        return []
    findings = [
        weak_judge("answer verdicts", found.answers.values()),
        weak_judge("chunk grades", [r for rs in found.chunks.values() for r in rs]),
        weak_judge("correctness verdicts", found.correctness.values()),
    ]
    return [f for f in findings if f is not None]


def weak_reasons(found: Judgements, weak: list[WeakJudge]) -> dict[str, list[str]]:
    """Per question id, why its replies are among those that made the judge weak (the review
    queue's ``weak_judge`` reasons)."""
    by_task = {w.task: w for w in weak}
    reasons: dict[str, list[str]] = {}

    def add(qid: str, said: str) -> None:
        reasons.setdefault(qid, []).append(f"weak judge: {said}")

    for qid, reply in found.answers.items():
        if is_repeated(by_task.get("answer verdicts"), reply):
            add(qid, "this verdict's reply is the run's repeated one")
    for qid, chunk_replies in found.chunks.items():
        k = sum(is_repeated(by_task.get("chunk grades"), r) for r in chunk_replies)
        if k:
            add(qid, f"{k} of its chunk grades are the run's repeated reply")
    for qid, reply in found.correctness.items():
        if is_repeated(by_task.get("correctness verdicts"), reply):
            add(qid, "its correctness reply is the run's repeated one")
    return reasons
