"""Is the RAG system deterministic? Answers that change while their inputs do not.

"Same configuration, same numbers" holds only when the RAG system gives the same answer to the
same question from the same chunks (temperature 0 on its generator, a fixed seed, no sampling
re-ranker). A season of nights measures the judge and the RAG system together: a generator
that samples makes the gate see answers move, and a moving answer is scored anew, so its noise
cannot be told apart from a fall. ``judge stability`` measures the judge only; this module
measures the other half, in two places:

- ``judge check --repeat N`` asks the adapter N times and counts, per question type, the
  questions whose retrieval order changed between the asks and those whose answer text changed
  (``repeated``);
- the nightly compares tonight's answers with the last compatible run's and notes those that
  changed although their question text and retrieved chunk ids (in order, within
  ``context_k``: what the generator saw) did not (``steady_inputs`` and ``steady_note``).

Answers are compared after ``judge.textnorm.normalise`` (NFKC, case folding, quote marks and
all whitespace dropped), the normalisation the evidence check and the lexical judge use: a
trailing space, a full-width letter or a changed line break is no change; any other character
is. Retrieval order is the ranked list of chunk ids; scores and chunk texts are not compared.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import NamedTuple

from judge.inputs.golden import GoldenQuestion
from judge.inputs.runs import Run, RunRecord
from judge.results.item_record import ItemRecord
from judge.textnorm import normalise

#: Where the docs say why this comes first when scores wobble.
DOCS = "docs/gate.md#when-scores-wobble-is-the-rag-system-deterministic"
#: Question ids named in a line, at most.
FIRST = 3


def same_answer(one: str, other: str) -> bool:
    """Whether two answer texts are the same once normalised (a trailing space is no change)."""
    return normalise(one) == normalise(other)


def _ranking(record: RunRecord) -> tuple[str, ...]:
    return tuple(chunk.chunk_id for chunk in record.retrieved)


def _names(ids: Sequence[str], first: int = FIRST) -> str:
    more = len(ids) - first
    return ", ".join(ids[:first]) + (f" and {more} more" if more > 0 else "")


# --- judge check --repeat ---------------------------------------------------------------------


class Shares(NamedTuple):
    """One question type's questions compared over the asks, and how many of them changed."""

    type: str
    n: int
    retrieval: int
    """Questions whose ranked chunk ids differed between two of the asks."""
    answers: int
    """Questions whose normalised answer text differed between two of the asks."""


class Repeated(NamedTuple):
    """What asking the adapter the same questions ``asks`` times showed."""

    asks: int
    per_type: list[Shares]
    """In the order of the types given to ``repeated`` (types without questions left out)."""
    retrieval_changed: list[str]
    answers_changed: list[str]
    changed: list[str]
    """Questions whose retrieval order or answer changed, in golden-set order."""
    left_out: list[str]
    """Questions without a usable answer in one of the asks (the adapter failed, or the answer
    was invalid): not compared."""

    @property
    def compared(self) -> int:
        return sum(shares.n for shares in self.per_type)

    def summary(self) -> str:
        """e.g. ``reproducibility over 2 asks: retrieval order changed for 0 of 30, answers
        changed for 7 of 30``."""
        n = self.compared
        return (
            f"reproducibility over {self.asks} asks: retrieval order changed for "
            f"{len(self.retrieval_changed)} of {n}, answers changed for "
            f"{len(self.answers_changed)} of {n}"
        )

    def _what_changed(self, qid: str) -> str:
        parts = [
            part
            for part, ids in (
                ("retrieval order", self.retrieval_changed),
                ("answer", self.answers_changed),
            )
            if qid in ids
        ]
        return " and ".join(parts)

    def lines(self) -> list[str]:
        """The summary, then per type, the questions that changed, and what it means."""
        per_type = [
            (
                "retrieval order changed",
                [f"{s.type} {s.retrieval} of {s.n}" for s in self.per_type],
            ),
            ("answers changed", [f"{s.type} {s.answers} of {s.n}" for s in self.per_type]),
        ]
        width = max(len(what) for what, _ in per_type)
        lines = [self.summary()]
        lines += [f"  {what + ':':<{width + 1}} {', '.join(parts)}" for what, parts in per_type]
        lines.append(
            "  answers are compared normalised (judge.textnorm: width, case, whitespace and "
            "quote marks ignored), so a trailing space is no change"
        )
        if self.changed:
            shown = [f"{qid} ({self._what_changed(qid)})" for qid in self.changed]
            lines.append(f"  changed: {_names(shown, 5)}")
            lines.append(
                "  the RAG system does not answer the same questions the same way: scores will "
                f"wobble with it; make it deterministic first (temperature 0?): {DOCS}"
            )
        if self.left_out:
            lines.append(
                f"  not compared ({len(self.left_out)}, no usable answer in every ask): "
                f"{_names(self.left_out, 5)}"
            )
        return lines


def repeated(
    questions: Sequence[GoldenQuestion], runs: Sequence[Run], types: Sequence[str] = ()
) -> Repeated:
    """Compare the answers of several asks of the same ``questions``, question by question.

    A question counts as changed when any two asks differ; ``left_out`` holds those without a
    record in every run (the caller leaves an invalid answer's record out). Types follow
    ``types``, then any other type in golden-set order.
    """
    order = list(dict.fromkeys([*types, *(q.type for q in questions)]))
    counts = {t: [0, 0, 0] for t in order}
    retrieval_changed: list[str] = []
    answers_changed: list[str] = []
    changed: list[str] = []
    left_out: list[str] = []
    for q in questions:
        records = [run.records.get(q.id) for run in runs]
        if any(record is None for record in records):
            left_out.append(q.id)
            continue
        present = [record for record in records if record is not None]
        first, rest = present[0], present[1:]
        ranking = any(_ranking(record) != _ranking(first) for record in rest)
        answer = any(not same_answer(record.answer, first.answer) for record in rest)
        count = counts[q.type]
        count[0] += 1
        count[1] += ranking
        count[2] += answer
        if ranking:
            retrieval_changed.append(q.id)
        if answer:
            answers_changed.append(q.id)
        if ranking or answer:
            changed.append(q.id)
    per_type = [Shares(t, *counts[t]) for t in order if counts[t][0]]
    return Repeated(len(runs), per_type, retrieval_changed, answers_changed, changed, left_out)


# --- the nightly --------------------------------------------------------------------------------


class Steady(NamedTuple):
    """Questions whose inputs were the same in two runs, and those of them whose answer was not."""

    same_inputs: int
    """Questions of both runs with the same question text and retrieved chunk ids in context."""
    changed: list[str]
    """Of those, the ones whose normalised answer text differs (in the later run's order)."""


def steady_inputs(earlier: Iterable[ItemRecord], current: Iterable[ItemRecord]) -> Steady:
    """Compare two runs' items (``judge.results.item_record``): the questions whose question
    text and context chunk ids (in rank order, the top ``context_k`` the generator saw) are the
    same in both, and of those the ones whose answer text changed. A question missing from
    either run (no answer, or not judged) is not compared."""
    before = {item.question_id: item for item in earlier}
    same, changed = 0, []
    for item in current:
        old = before.get(item.question_id)
        if old is None or old.question != item.question:
            continue
        if [c.chunk_id for c in old.context] != [c.chunk_id for c in item.context]:
            continue
        same += 1
        if not same_answer(old.answer, item.answer):
            changed.append(item.question_id)
    return Steady(same, changed)


def steady_note(steady: Steady) -> str | None:
    """The nightly's note when answers changed although their inputs did not, or None: e.g.
    ``7 of 30 answers changed although their question and retrieved chunks did not (q01, q04,
    q07 and 4 more): ...``."""
    if not steady.changed:
        return None
    return (
        f"{len(steady.changed)} of {steady.same_inputs} answers changed although their question "
        f"and retrieved chunks did not ({_names(steady.changed)}): the generator is not "
        f"deterministic (temperature 0?) or was changed; {DOCS}"
    )
