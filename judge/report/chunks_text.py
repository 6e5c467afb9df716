"""The judge's chunk grades in report.md, the console and ``missing-labels.csv``: views of the
record's ``ChunkSummary`` (``judge.record.model``), which the run built once (``judge.record.rows``).

Judged retrieval numbers are always shown under their own heading and with their ``judged_``
names, never beside or inside the tables from the golden labels: they measure something else
(what the judge, not a person, found relevant among the chunks it graded).
"""

from __future__ import annotations

from collections.abc import Sequence

from judge.formatting import FEW_ITEMS, fmt_interval, fmt_number, fmt_share
from judge.formatting import markdown_text as md
from judge.grouped import ALL
from judge.record.model import ChunkSummary, Record
from judge.report.text_tables import render_markdown
from judge.report.tokens_text import cost_text
from judge.results.chunk_grades import missing_labels_csv
from judge.results.tokens import TokenCount

#: report.md lists at most this many possible missing labels (the file has them all).
SHOWN_MISSING = 20
MISSING_LABELS_FILE = "missing-labels.csv"


def _ordered(cells: Sequence[str]) -> list[str]:
    """The per-type keys in their order, ``all`` last."""
    return [t for t in cells if t != ALL] + ([ALL] if ALL in cells else [])


def missing_labels_file(report: Record) -> str | None:
    """``missing-labels.csv`` (None when no chunk was graded): every possible missing label,
    with the question and the chunk's text, and an empty ``confirmed`` column for a reviewer
    (``judge golden accept`` reads it back). Written even when empty, so that "none found"
    is a file a script can read, not a file that is missing."""
    chunks = report.chunks
    if chunks is None:
        return None
    questions = {row.question_id: row.question for row in report.questions}
    texts = {
        chunk.chunk_id: chunk.text
        for row in report.questions
        if row.item is not None
        for chunk in row.item.context
    }
    texts.update(chunks.texts)  # the corpus' text, whatever the rank (the context's is the same)
    return missing_labels_csv(chunks.missing, questions, texts)


def chunk_headline(chunks: ChunkSummary, cost: TokenCount) -> str:
    """One line on what was graded, and what it cost (``Record.further_tokens``)."""
    unusable = f", {chunks.not_ok} without a usable grade" if chunks.not_ok else ""
    return (
        f"The judge graded the top {chunks.depth} chunks of each answered question on 0-3 "
        f"({chunks.graded} grades{unusable}); a chunk graded {chunks.relevant_grade} or more "
        f"counts as relevant. Cost: {cost_text(cost)}."
    )


def _agreement_lines(chunks: ChunkSummary) -> list[str]:
    cells = chunks.agreement.types
    if not cells or all(cell.chunks == 0 for cell in cells.values()):
        return ["No labelled question had a graded chunk: nothing to compare with.", ""]
    lines = [
        "| type | chunks (questions) | agreement | always the majority label | κ | balanced accuracy |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name in _ordered(list(cells)):
        c = cells[name]
        row = [
            md(name),
            f"{c.chunks} ({c.questions})",
            fmt_share(c.exact) + fmt_interval(c.exact_ci, True),
            fmt_share(c.majority_exact) + fmt_interval(c.majority_exact_ci, True),
            fmt_number(c.kappa) + fmt_interval(c.kappa_ci, False),
            fmt_share(c.balanced_accuracy) + fmt_interval(c.balanced_accuracy_ci, True),
        ]
        if name == ALL:
            row = [f"**{cell}**" for cell in row]
        lines.append("| " + " | ".join(row) + " |")
    lines.append("")
    every = cells.get(ALL)
    if every is not None and every.grades:
        lines += [
            "The judge's grade against the golden label, every labelled question:",
            "",
            "| grade | not listed | listed |",
            "|---:|---:|---:|",
            *(f"| {grade} | {row[0]} | {row[1]} |" for grade, row in enumerate(every.grades)),
            "",
        ]
    if every is not None and every.questions < FEW_ITEMS:
        lines += [
            f"Only {every.questions} labelled questions: the intervals (95 %, resampling "
            "questions, not chunks) are wide.",
            "",
        ]
    return lines


def _corrected_lines(chunks: ChunkSummary) -> list[str]:
    cells = chunks.corrected
    if not cells:
        return []
    k = chunks.corrected_k
    lines = [
        f"### Recall@{k} corrected with the golden labels",
        "",
        f"The mean recall@{k} against the golden labels, estimated over every question from the "
        "judged recall and corrected by the labelled questions (prediction-powered; 95 % "
        "interval; n labelled, N with the judge's grades only):",
        "",
        "| type | n | N | judged | golden labels | corrected | labels alone |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name in _ordered(list(cells)):
        c = cells[name]
        corrected = (
            c.note
            if c.estimate is None
            else fmt_number(c.estimate) + fmt_interval(c.interval, False)
        )
        row = [
            md(name),
            str(c.labelled),
            str(c.unlabelled),
            fmt_number(c.judged_mean),
            fmt_number(c.labels_mean),
            corrected or "–",
            fmt_interval(c.labels_only, False).strip() or "–",
        ]
        if name == ALL:
            row = [f"**{cell}**" for cell in row]
        lines.append("| " + " | ".join(row) + " |")
    return [*lines, ""]


def _missing_lines(report: Record, chunks: ChunkSummary) -> list[str]:
    missing = chunks.missing
    lines = [f"### Possible missing labels ({len(missing)})", ""]
    if not missing:
        return [
            *lines,
            "No retrieved chunk the judge graded relevant is missing from the labels.",
            "",
        ]
    lines += [
        "Retrieved chunks the judge graded relevant that the golden set does not list for a "
        f"labelled question. Confirm or reject each in `{MISSING_LABELS_FILE}` (its `confirmed` "
        f"column), then `judge golden accept {MISSING_LABELS_FILE}` adds the confirmed ones.",
        "",
    ]
    for m in missing[:SHOWN_MISSING]:
        flag = (
            " (an out-of-scope question: a hole, or a mistyped question?)" if m.unanswerable else ""
        )
        reason = f": {md(m.reason)}" if m.reason else ""
        lines.append(
            f"- `{md(m.question_id)}` ({md(m.type)}): `{md(m.chunk_id)}` at rank {m.rank}, "
            f"grade {m.grade}{flag}{reason}"
        )
    if len(missing) > SHOWN_MISSING:
        lines.append(f"- … and {len(missing) - SHOWN_MISSING} more in `{MISSING_LABELS_FILE}`")
    return [*lines, ""]


def chunk_lines(report: Record) -> list[str]:
    """report.md's section on the chunk grades (nothing when chunk grading was off)."""
    chunks = report.chunks
    if chunks is None:
        return []
    cost = report.further_tokens["chunk grades"]
    lines = ["## Chunk grades", "", chunk_headline(chunks, cost), ""]
    unlabelled = chunks.judged_unlabelled
    if unlabelled.rows and any(r.get("n") for r in unlabelled.rows):
        lines += [
            "### Judged retrieval of the questions without chunk labels",
            "",
            "From the judge's grades alone, relative to the chunks it graded: not the golden "
            "labels' recall, and never mixed with it.",
            "",
            render_markdown(unlabelled),
            "",
        ]
    lines += [
        "### Judged retrieval of every question",
        "",
        render_markdown(chunks.judged),
        "",
        "### The judge's chunk grades against the golden labels",
        "",
        *_agreement_lines(chunks),
        *_corrected_lines(chunks),
        *_missing_lines(report, chunks),
    ]
    return lines


def chunk_console_line(report: Record) -> str | None:
    """One line for the console: how many possible missing labels, and where they are."""
    chunks = report.chunks
    if chunks is None:
        return None
    every = chunks.agreement.types.get(ALL)
    agreement = (
        f"; agreement with the golden labels {fmt_share(every.exact)}"
        f" (κ {fmt_number(every.kappa)}, {every.chunks} chunks)"
        if every is not None and every.chunks
        else ""
    )
    return (
        f"chunk grades: {chunks.graded} graded, {len(chunks.missing)} possible missing labels "
        f"({MISSING_LABELS_FILE}){agreement}"
    )
