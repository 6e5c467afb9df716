"""``verdicts.csv``: the run record's questions for spreadsheets (``report.json`` is the record
itself: ``judge.record.store.record_json``)."""

from __future__ import annotations

from judge.formatting import bom_csv
from judge.judging.types import Verdict
from judge.record.model import CorrectnessVerdict, QuestionRow, Record
from judge.results.item_record import ItemRecord


def reference_answer(item: ItemRecord | None) -> str:
    """The golden reference answer the judge's prompt carried ("" when there is none)."""
    return "" if item is None or item.reference_answer is None else item.reference_answer


def _correctness_cells(verdict: CorrectnessVerdict | None) -> list[object]:
    """The correctness and its reason ("" where not asked; a failed verdict: no score, its
    error as the reason)."""
    if verdict is None:
        return ["", ""]
    if verdict.status != "ok":
        return ["", verdict.error or verdict.status]
    return [verdict.correctness, verdict.reason]


def _header(with_correctness: bool, metrics: list[str]) -> list[str]:
    """The columns: the correctness pair only for a run that judged it, then one column per
    retrieval metric of the run."""
    return [
        "question_id",
        "type",
        "split",
        "status",
        "diagnosis",
        "faithfulness",
        "relevance",
        *(["correctness", "correctness_reason"] if with_correctness else []),
        "evidence",
        "match_kind",
        "chunk_id",
        "span_start",
        "span_end",
        "coverage",
        "needs_review",
        "note",
        "error",
        "question",
        "answer",
        "reference_answer",
        *metrics,
        "prompt_tokens",
        "completion_tokens",
        "latency_s",
        "cached",
    ]


def _row(row: QuestionRow, v: Verdict, with_correctness: bool, metrics: list[str]) -> list[object]:
    """One question's cells, in the order of ``_header``."""
    item = row.item
    match = v.match
    return [
        v.question_id,
        item.type if item else "",
        item.split if item else "",
        v.status,
        row.diagnosis,
        v.faithfulness,
        v.relevance,
        *(_correctness_cells(row.correctness) if with_correctness else []),
        v.evidence,
        match.kind if match else "",
        match.chunk_id if match else "",
        match.start if match else "",
        match.end if match else "",
        match.coverage if match else "",
        "; ".join(row.triage.reasons),
        v.note,
        v.error or "",
        row.question,
        item.answer if item else "",
        reference_answer(item),
        *[item.retrieval.get(m, "") if item else "" for m in metrics],
        v.prompt_tokens,
        v.completion_tokens,
        round(v.latency_s, 3),
        v.cached,
    ]


def verdicts_csv(report: Record) -> str:
    """One row per question, UTF-8 with a BOM so that spreadsheets read the Japanese right.

    ``bom_csv`` keeps every text cell from being read as a formula (ids, notes, quotes, errors,
    questions, answers and reference answers all come from data). The diagnosis is the row's
    (``judge.results.diagnosis``), the same word report.md and review.html show. A run that
    judged correctness has ``correctness`` (0-2, empty where not asked or not ok) and
    ``correctness_reason`` after ``relevance``; a run without it has neither column."""
    rows_of = {row.question_id: row for row in report.questions}
    with_correctness = any(row.correctness is not None for row in report.questions)
    metrics = sorted({m for item in report.items for m in item.retrieval})
    rows = [_row(rows_of[v.question_id], v, with_correctness, metrics) for v in report.verdicts]
    return bom_csv(_header(with_correctness, metrics), rows)
