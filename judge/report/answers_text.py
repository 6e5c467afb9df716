"""report.md's sections on the answers: where they went wrong (the diagnosis per type), the bad
answers first, the answers that could not be produced, what needs review and the unsupported
sentences; and a question's scores as every table writes them."""

from __future__ import annotations

import re
from collections.abc import Sequence

from judge.formatting import markdown_text as md
from judge.judging.types import Verdict
from judge.record.model import QuestionRow, Record
from judge.report.evidence_text import CITED_CAVEAT, SENTENCES_CAVEAT, evidence_origin
from judge.results.diagnosis import CORRECTNESS_DIAGNOSES, DIAGNOSES, TypeDiagnosis
from judge.results.review import unsupported

#: Rows of the "Bad answers first" table; the rest are in verdicts.csv and review.html.
BAD_ANSWERS_SHOWN = 25
#: Characters of a question or an answer in that table.
EXCERPT_CHARS = 80


def _count_share(k: int, n: int) -> str:
    return f"{k} ({k / n:.0%})" if n and k else "0"


#: Under the judge table of a run that judged correctness: what the column measures.
CORRECTNESS_NOTE = (
    "*correctness*: the answer against the question's reference answer (0–2; a refusal of an "
    "out-of-scope question is correct), the mean over the questions the judge gave an ok "
    "correctness verdict; questions without a reference answer are not scored "
    "(*correctness_asked* counts the questions scored, *correctness_not_ok* those whose "
    "verdict failed)."
)


def diagnosis_lines(
    diagnoses: Sequence[TypeDiagnosis], with_correctness: bool = False
) -> list[str]:
    """The "Where it went wrong" section: per type, how many answers got each diagnosis
    (``judge.results.diagnosis``, the rule) with its share, and which layer to fix first.
    The diagnoses only correctness gives (``wrong per reference``) have a column when the
    run judged correctness (``with_correctness``)."""
    if not diagnoses:
        return []
    shown = [
        name
        for name in DIAGNOSES
        if name not in CORRECTNESS_DIAGNOSES
        or with_correctness
        or any(d.counts[name] for d in diagnoses)
    ]
    lines = [
        "## Where it went wrong",
        "",
        "Each answer's diagnosis (`docs/reports.md` has the rule): a retrieval miss had no "
        "relevant chunk among the chunks the generator saw; a generation failure had one.",
        "",
        "| type | n | " + " | ".join(shown) + " |",
        "|---|---:|" + "---:|" * len(shown),
    ]
    for d in diagnoses:
        cells = [_count_share(d.counts[name], d.total) for name in shown]
        lines.append(f"| {md(d.type)} | {d.total} | " + " | ".join(cells) + " |")
    total = sum(d.total for d in diagnoses)
    sums = [sum(d.counts[name] for d in diagnoses) for name in shown]
    lines.append(
        f"| **all** | **{total}** | "
        + " | ".join(f"**{_count_share(k, total)}**" for k in sums)
        + " |"
    )
    lines += ["", *[f"- {md(d.sentence)}" for d in diagnoses], ""]
    return lines


def _below_full_marks(row: QuestionRow) -> bool:
    """An ok verdict below 2/2, or an answer diagnosed as gone wrong whatever its scores."""
    verdict = row.verdict
    if verdict is None or verdict.status != "ok":
        return False
    full = verdict.faithfulness == 2 and verdict.relevance == 2
    return not full or row.diagnosis not in ("ok", "not judged")


def bad_answers(rows: Sequence[QuestionRow]) -> list[QuestionRow]:
    """The answers below full marks, worst first: lowest faithfulness plus relevance, then
    lowest faithfulness (an invented fact before an off-topic answer), then golden-set order."""
    bad = [row for row in rows if _below_full_marks(row)]

    def worst(row: QuestionRow) -> tuple[int, int]:
        verdict = row.verdict
        assert verdict is not None
        f, r = verdict.faithfulness or 0, verdict.relevance or 0
        return f + r, f

    return sorted(bad, key=worst)  # stable: golden-set order among equals


def _excerpt(text: str, most: int = EXCERPT_CHARS) -> str:
    """Text cut for a table cell, on one line (cut before escaping, so no escape is cut)."""
    text = re.sub("[ \t\r\n]+", " ", text).strip(" ")
    return md(text[:most] + "…" if len(text) > most else text) or "—"


def _evidence_status(verdict: Verdict) -> str:
    """What the evidence is, short: ``evidence_origin`` without its caveat."""
    said = evidence_origin(verdict)
    for caveat in (CITED_CAVEAT, SENTENCES_CAVEAT):
        said = said.replace(f" ({caveat})", "")
    return said or "—"


def bad_answer_lines(rows: Sequence[QuestionRow]) -> list[str]:
    """The "Bad answers first" table: every answer below full marks (``bad_answers``), up to
    ``BAD_ANSWERS_SHOWN``; scores written out (F0 R2), never shown by colour alone."""
    bad = bad_answers(rows)
    lines = ["## Bad answers first", ""]
    if not bad:
        return [*lines, "Every judged answer has full marks (F2 R2).", ""]
    lines += [
        f"{len(bad)} answers below full marks (or diagnosed as gone wrong), worst first "
        "(lowest F + R, then lowest F):",
        "",
        "| question | type | diagnosis | scores | question text | answer | evidence |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in bad[:BAD_ANSWERS_SHOWN]:
        verdict = row.verdict
        assert verdict is not None and row.item is not None
        lines.append(
            f"| {md(row.question_id)} | {md(row.type)} | {md(row.diagnosis)} "
            f"| {row_scores(row)} | {_excerpt(row.question)} "
            f"| {_excerpt(row.item.answer)} | {md(_evidence_status(verdict))} |"
        )
    left = len(bad) - BAD_ANSWERS_SHOWN
    if left > 0:
        lines += [
            "",
            f"{left} more below full marks are left out here: `verdicts.csv` has every answer "
            "with its question, answer and diagnosis, and `review.html` lists them all.",
        ]
    return [*lines, ""]


def needs_review_lines(rows: Sequence[QuestionRow]) -> list[str]:
    """One line per question to look at, with its reasons: the questions the record says need
    review (``judge.results.review``), which the console and review.html count too.

    A cited sentence's line says what it is (``evidence_origin``): it points at real text, and
    that is all it proves. Quote-mode lines are the reasons alone, which say what the quote is.
    """
    lines = []
    for row in rows:
        verdict = row.verdict
        said = list(row.triage.reasons)
        if verdict is not None and verdict.status == "ok" and verdict.mode == "cited":
            said.append(f"evidence: {evidence_origin(verdict)}")
        lines.append(f"- **{md(row.question_id)}**: {md('; '.join(said))}")
    return lines or ["Nothing flagged."]


def unsupported_lines(verdicts: Sequence[Verdict]) -> list[str]:
    """Sentence mode: each verdict with unsupported answer sentences, and those sentences by
    number: the judge's finding (it lowers faithfulness), listed here with the sentences; the
    question is among those that need review too (``judge.results.review``)."""
    lines = []
    for verdict in verdicts:
        bad = unsupported(verdict)
        if not bad:
            continue
        total = len(verdict.sentences or ())
        lines.append(
            f"- **{md(verdict.question_id)}**: {len(bad)} of {total} answer sentences unsupported"
        )
        lines += [f"  - ✗ sentence {check.n}: {md(check.text) or '—'}" for check in bad]
    return lines


def failed_lines(report: Record) -> list[str]:
    """The section on the questions the RAG system gave no answer for (none when it answered
    every one): they have no verdict, so the tables count them in ``adapter_failed``."""
    if not report.adapter_failed:
        return []
    lines = [
        "## Answers that could not be produced",
        "",
        f"The adapter failed for {len(report.adapter_failed)} question(s): they have no answer, "
        "so no verdict, and the tables count them in `adapter_failed`.",
        "",
    ]
    lines += [
        f"- **{md(f.question_id)}** ({md(f.type)}): {md(f.error)}" for f in report.adapter_failed
    ]
    return [*lines, ""]


def verdict_scores(verdict: Verdict) -> str:
    if verdict.status != "ok":
        return verdict.status
    return f"F{verdict.faithfulness} R{verdict.relevance}"


def row_scores(row: QuestionRow) -> str:
    """A question's scores: ``verdict_scores``, then its correctness when the run judged it
    (``F2 R2 C0``; ``C –`` for a correctness verdict that is not ok)."""
    verdict, correctness = row.verdict, row.correctness
    text = "—" if verdict is None else verdict_scores(verdict)
    if correctness is None:
        return text
    score = correctness.correctness if correctness.status == "ok" else None
    return f"{text} C{'–' if score is None else score}"
