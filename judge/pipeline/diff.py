"""``judge diff A B``: two report folders' records compared question by question."""

from __future__ import annotations

from typing import NamedTuple

from judge.record.model import Record, RunDiff
from judge.results.compare import (
    SECTIONS,
    GateRule,
    SectionComparison,
    compare_values,
    decide,
)
from judge.results.flips import changed_verdicts

#: Fingerprint → what it stands for, in the order a difference is noted.
_PARTS = (
    ("golden", "golden set"),
    ("corpus", "corpus"),
    ("judge", "judge configuration"),
    ("retrieval", "retrieval settings"),
    ("run", "RAG output"),
)


def diff_records(old: Record, new: Record, rule: GateRule) -> RunDiff:
    """``new`` against ``old`` with the gate's rule, in the type order of ``new``'s
    configuration."""
    values_old, values_new = old.values(), new.values()
    types = new.manifest.config.data.question_types
    fa = old.manifest.fingerprints.model_dump()
    fb = new.manifest.fingerprints.model_dump()
    comparisons = decide(
        [
            SectionComparison(
                section,
                old.manifest.folder,
                compare_values(section, values_old, values_new, rule, types),
                "",
            )
            for section in SECTIONS
        ],
        rule,
    )
    flips = changed_verdicts(
        {v.question_id: v for v in old.verdicts}, {v.question_id: v for v in new.verdicts}
    )
    changed = changed_answers(old, new)
    return RunDiff(
        old.manifest.folder,
        new.manifest.folder,
        [what for key, what in _PARTS if fa[key] != fb[key]],
        rule,
        comparisons,
        flips,
        tuple(changed.answers),
        tuple(changed.retrieval),
    )


class ChangedAnswers(NamedTuple):
    """The questions whose inputs to the judge differ between two runs, in ``new``'s golden
    order: what a changed verdict or a moved mean may come from."""

    answers: list[str]
    """Question ids whose answer text differs (or that have an answer in one run only)."""
    retrieval: list[str]
    """Question ids whose context chunks (ids, in rank order) differ."""


def changed_answers(old: Record, new: Record) -> ChangedAnswers:
    """The questions of both runs whose answer or retrieved context changed.

    Read from the records' items (what the judge saw): a question without an item in a run
    (the adapter failed) counts as a changed answer when the other run has one. Questions in
    one run only are not compared (the golden sets differ, which ``diff_records`` notes).
    """
    before = {row.question_id: row.item for row in old.questions}
    answers: list[str] = []
    retrieval: list[str] = []
    for row in new.questions:
        if row.question_id not in before:
            continue
        was, now = before[row.question_id], row.item
        if was is None or now is None:
            if (was is None) != (now is None):
                answers.append(row.question_id)
            continue
        if was.answer != now.answer:
            answers.append(row.question_id)
        if [c.chunk_id for c in was.context] != [c.chunk_id for c in now.context]:
            retrieval.append(row.question_id)
    return ChangedAnswers(answers, retrieval)
