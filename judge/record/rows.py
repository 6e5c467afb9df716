"""The record's per-question parts, assembled from a run's stages (reads nothing): what the
judge saw for each judged question (``item_records``), one row per golden question with its
triage, diagnosis and further judgements (``question_rows``), and the chunk grades summarised
(``chunk_summary``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from judge.audit.chunk_agreement import chunk_agreement, corrected_recall
from judge.config import Config
from judge.hashing import text_sha256
from judge.inputs.golden import GoldenSet
from judge.inputs.labels import HumanLabel, labels_by_answer
from judge.judging.items import context_for
from judge.judging.tasks.chunk import depth_of
from judge.record.model import ChunkSummary, QuestionRow
from judge.record.stages import Judged, Measured, TaskResults
from judge.results.chunk_grades import (
    RELEVANT_GRADE,
    GradedChunk,
    judged_tables,
    missing_labels,
)
from judge.results.diagnosis import diagnose
from judge.results.item_record import ItemRecord
from judge.results.review import NO_TRIAGE, position_bias, triage
from judge.results.weak_judge import replies, weak_judgements, weak_reasons
from judge.textnorm import REFUSAL_MARKERS


def chunk_summary(config: Config, golden: GoldenSet, judged: Judged) -> ChunkSummary | None:
    """The chunk grades summarised for the record (None when no chunk was graded): judged
    retrieval, possible missing labels, agreement with the golden labels, corrected recall."""
    if not judged.chunk_grades:
        return None
    graded = [
        GradedChunk(
            g.question_id, g.chunk_id, g.rank, g.grade if g.status == "ok" else None, g.reason
        )
        for q in golden.questions
        for g in judged.chunk_grades.get(q.id, ())
    ]
    depth = depth_of(config)
    types = config.data.question_types
    questions = golden.questions
    tables = judged_tables(questions, graded, config.retrieval.ks, types, depth=depth)
    k = min(config.retrieval.context_k, depth)
    missing = missing_labels(questions, graded)
    return ChunkSummary(
        depth=depth,
        relevant_grade=RELEVANT_GRADE,
        graded=len(graded),
        not_ok=sum(g.grade is None for g in graded),
        judged=tables.every,
        judged_unlabelled=tables.unlabelled,
        missing=missing,
        agreement=chunk_agreement(questions, graded, types),
        corrected_k=k,
        corrected=corrected_recall(questions, graded, k, types, depth=depth),
        # from the corpus, whatever the rank: most of these chunks are in no answer's context
        texts={
            m.chunk_id: golden.corpus[m.chunk_id].text
            for m in missing
            if m.chunk_id in golden.corpus
        },
    )


def _task_fields(tasks: Mapping[str, TaskResults], question_id: str) -> dict[str, Any]:
    """A question's results of the further judgements, as the row's fields: each in its own
    field (``chunk_grades``, ``correctness``), or by task in ``judgements``."""
    fields: dict[str, Any] = {}
    generic: dict[str, Any] = {}
    for name, done in tasks.items():
        value = done.per_question.get(question_id)
        if done.row_field != "judgements":
            fields[done.row_field] = value
        elif value is not None:
            generic[name] = value
    return fields | ({"judgements": generic} if generic else {})


def question_rows(
    config: Config,
    measured: Measured,
    items: dict[str, ItemRecord],
    judged: Judged,
    failures: dict[str, str],
    disputed: Mapping[str, Sequence[str]] | None = None,
) -> list[QuestionRow]:
    """One row per golden question, in golden-set order, with its review triage and its
    diagnosis (``judge.results.diagnosis``: computed here once; every view reads the row's);
    ``disputed``: why a ``judge panel`` disputed an answer, by question id."""
    verdicts = judged.verdicts
    out_of_scope = set(config.data.out_of_scope_types)
    refusal_phrases = config.judge.lexical.refusal_phrases or REFUSAL_MARKERS
    # Run-level: a judge citing one sentence number for most items (``judge.results.review``).
    bias = position_bias(verdicts[q.id] for q in measured.golden.questions if q.id in verdicts)
    # Run-level too: a judge repeating one reply or its prompt's example (``weak_judge``).
    found = replies(
        verdicts.values(),
        [g for grades in judged.chunk_grades.values() for g in grades],
        judged.correctness.values(),
    )
    weak = weak_reasons(found, weak_judgements(found, judged.judge.backend))
    rows = []
    for q in measured.golden.questions:
        item, verdict = items.get(q.id), verdicts.get(q.id)
        status: str = verdict.status if verdict is not None else "not_judged"
        if verdict is None and q.id in failures:
            status = "adapter_failed"
        rows.append(
            QuestionRow(
                question_id=q.id,
                type=q.type,
                split=q.split or "",
                question=q.question,
                status=status,
                item=item,
                verdict=verdict,
                failure=failures.get(q.id),
                triage=triage(
                    item, verdict, bias, weak.get(q.id, ()), (disputed or {}).get(q.id, ())
                )
                if item is not None and verdict is not None
                else NO_TRIAGE,
                diagnosis=diagnose(
                    item,
                    verdict,
                    out_of_scope=q.type in out_of_scope,
                    refusal_phrases=refusal_phrases,
                    correctness=judged.correctness.get(q.id),
                ),
                **_task_fields(judged.tasks, q.id),
            )
        )
    return rows


def item_records(
    config: Config, measured: Measured, labels: list[HumanLabel], judged: Judged
) -> list[ItemRecord]:
    """What the judge saw for each judged question, with its retrieval scores and labels."""
    verdicts, shown = judged.verdicts, judged.shown
    grouped = labels_by_answer(labels)
    scores = measured.scores
    by_question = {
        qid: {m: values[i] for m, values in scores.values.items()}
        for i, qid in enumerate(scores.question_ids)
    }
    items = []
    for q in measured.golden.questions:
        record = measured.run.records.get(q.id)
        if record is None or q.id not in verdicts:
            continue
        items.append(
            ItemRecord(
                question_id=q.id,
                type=q.type,
                split=q.split or "",
                question=q.question,
                answer=record.answer,
                reference_answer=q.reference_answer,
                context=list(
                    shown[q.id]
                    if q.id in shown
                    else context_for(record, measured.golden.corpus, config.retrieval.context_k)
                ),
                relevant_chunks=None if q.relevant_chunks is None else list(q.relevant_chunks),
                retrieval=by_question.get(q.id, {}),
                labels=[
                    label.scores() for label in grouped.get((q.id, text_sha256(record.answer)), [])
                ],
            )
        )
    return items
