"""The chunk grades in report.md, the console and missing-labels.csv (judge.report.chunks_text),
on a lexical run of the tiny set with chunk grading on and on hand-made variations of its
summary: the headline and its cost, the agreement and corrected-recall tables, the list of
possible missing labels (at most 20, data escaped), the console line, and nothing at all when
chunk grading was off."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable

import pytest

from judge.audit.chunk_agreement import ChunkAgreement
from judge.config import Config
from judge.pipeline.evaluate import evaluate
from judge.record.model import ChunkSummary, Record
from judge.report.chunks_text import (
    MISSING_LABELS_FILE,
    SHOWN_MISSING,
    chunk_console_line,
    chunk_headline,
    chunk_lines,
    missing_labels_file,
)
from judge.results.chunk_grades import MISSING_LABELS_COLUMNS, MissingLabel
from judge.results.tokens import TokenCount
from tests.conftest import CORPUS, QUESTIONS, REPO

Tiny = Callable[..., Config]


def _graded(tiny: Tiny, **changes: object) -> Record:
    """A lexical run of the tiny set (questions changed by ``changes``) with chunk grading on."""
    questions = [q | dict(changes.get(q["id"], {})) for q in QUESTIONS]  # type: ignore[arg-type]
    config = tiny(questions=questions).with_overrides(
        judge={"chunks": {"enabled": True, "prompt": REPO / "prompts" / "chunk.v1.md"}}
    )
    return evaluate(config, backend="lexical", progress=False).report


@pytest.fixture
def report(tiny: Tiny) -> Record:
    return _graded(tiny)


def _summary(report: Record) -> ChunkSummary:
    assert report.chunks is not None
    return report.chunks


def _with(report: Record, **summary: object) -> Record:
    return report.model_copy(update={"chunks": _summary(report).model_copy(update=summary)})


def _missing(qid: str, chunk: str, rank: int, **changes: object) -> MissingLabel:
    fields: dict[str, object] = {
        "question_id": qid,
        "type": "factual",
        "chunk_id": chunk,
        "rank": rank,
        "grade": 3,
        "reason": "",
        "unanswerable": False,
    }
    return MissingLabel.model_validate(fields | changes)


def _section(lines: list[str], heading: str) -> list[str]:
    """The lines under ``heading`` up to the next heading."""
    start = lines.index(heading) + 1
    end = next((i for i in range(start, len(lines)) if lines[i].startswith("#")), len(lines))
    return lines[start:end]


def test_without_chunk_grading_there_is_no_section_line_or_file(tiny: Tiny) -> None:
    report = evaluate(tiny(), backend="lexical", progress=False).report
    assert report.chunks is None
    assert chunk_lines(report) == []
    assert chunk_console_line(report) is None
    assert missing_labels_file(report) is None


def test_the_headline_says_what_was_graded_and_what_it_cost(report: Record) -> None:
    summary = _summary(report).model_copy(update={"graded": 10, "not_ok": 2})
    cost = TokenCount(items=10, counted=10, prompt_tokens=5000, completion_tokens=200, cached=3)
    assert chunk_headline(summary, cost) == (
        "The judge graded the top 5 chunks of each answered question on 0-3 (10 grades, 2 "
        "without a usable grade); a chunk graded 2 or more counts as relevant. Cost: 10 calls "
        "(3 from the cache), 5,000 prompt + 200 completion tokens."
    )
    clean = summary.model_copy(update={"not_ok": 0})
    assert "(10 grades); a chunk graded 2" in chunk_headline(clean, TokenCount(items=10))


def test_the_section_of_a_run_in_order_with_the_grades_against_the_labels(
    report: Record,
) -> None:
    lines = chunk_lines(report)
    headings = [line for line in lines if line.startswith("#")]
    assert headings == [
        "## Chunk grades",
        "### Judged retrieval of every question",
        "### The judge's chunk grades against the golden labels",
        "### Recall@5 corrected with the golden labels",
        "### Possible missing labels (0)",
    ]
    assert lines[2] == chunk_headline(_summary(report), report.further_tokens["chunk grades"])
    agreement = _section(lines, "### The judge's chunk grades against the golden labels")
    assert agreement[:3] == [
        "",
        "| type | chunks (questions) | agreement | always the majority label | κ | balanced accuracy |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    # The tiny set's 8 retrieved chunks over its 4 labelled questions: q1 2, q2 3, q3 2, q4 1.
    assert [row.split(" | ")[1] for row in agreement[3:7]] == ["2 (1)", "3 (1)", "2 (1)", "1 (1)"]
    assert agreement[7].startswith("| **all** | **8 (4)** | **100.0% [")
    # Grades against labels: the 5 unlisted chunks graded 0; the 3 listed ones 2, 2 and 3.
    grades = agreement[agreement.index("| grade | not listed | listed |") + 2 :][:4]
    assert grades == ["| 0 | 5 | 0 |", "| 1 | 0 | 0 |", "| 2 | 0 | 2 |", "| 3 | 0 | 1 |"]
    assert (
        "Only 4 labelled questions: the intervals (95 %, resampling questions, not chunks) are "
        "wide." in agreement
    )
    corrected = _section(lines, "### Recall@5 corrected with the golden labels")
    assert "| out_of_scope | 0 | 0 | – | – | no labelled question: no corrected value | – |" in (
        corrected
    )
    assert any(
        line.startswith("| **all** | **3** | **0** | **0.67** | **0.67** |") for line in corrected
    )
    assert _section(lines, "### Possible missing labels (0)") == [
        "",
        "No retrieved chunk the judge graded relevant is missing from the labels.",
        "",
    ]


def test_questions_without_chunk_labels_get_a_table_of_their_own_first(tiny: Tiny) -> None:
    lines = chunk_lines(_graded(tiny, q1={"relevant_chunks": None}))
    headings = [line for line in lines if line.startswith("### ")]
    assert headings[:2] == [
        "### Judged retrieval of the questions without chunk labels",
        "### Judged retrieval of every question",
    ]
    own = _section(lines, "### Judged retrieval of the questions without chunk labels")
    assert own[1] == (
        "From the judge's grades alone, relative to the chunks it graded: not the golden "
        "labels' recall, and never mixed with it."
    )


def test_no_labelled_graded_chunk_says_so_instead_of_a_table(report: Record) -> None:
    lines = chunk_lines(_with(report, agreement=ChunkAgreement(types={}), corrected={}))
    assert _section(lines, "### The judge's chunk grades against the golden labels") == [
        "",
        "No labelled question had a graded chunk: nothing to compare with.",
        "",
    ]
    assert not any(line.startswith("### Recall@") for line in lines)  # nothing corrected
    assert chunk_console_line(_with(report, agreement=ChunkAgreement(types={}))) == (
        f"chunk grades: 8 graded, 0 possible missing labels ({MISSING_LABELS_FILE})"
    )


def test_possible_missing_labels_listed_up_to_twenty_with_the_data_escaped(
    report: Record,
) -> None:
    missing = [
        _missing("q1", "a*b", 1, reason="quotes the *price*"),
        _missing("o|1", "faq/1", 2, type="out_of_scope", grade=2, unanswerable=True),
        *(_missing(f"q{i}", f"c{i}", 3) for i in range(20)),
    ]
    lines = chunk_lines(_with(report, missing=missing))
    listed = _section(lines, "### Possible missing labels (22)")
    assert listed[1] == (
        "Retrieved chunks the judge graded relevant that the golden set does not list for a "
        "labelled question. Confirm or reject each in `missing-labels.csv` (its `confirmed` "
        "column), then `judge golden accept missing-labels.csv` adds the confirmed ones."
    )
    items = [line for line in listed if line.startswith("- ")]
    assert len(items) == SHOWN_MISSING + 1  # 20 shown, then one line for the rest
    assert items[0] == "- `q1` (factual): `a\\*b` at rank 1, grade 3: quotes the \\*price\\*"
    assert items[1] == (
        "- `o\\|1` (out_of_scope): `faq/1` at rank 2, grade 2 (an out-of-scope question: a "
        "hole, or a mistyped question?)"
    )
    assert items[2] == "- `q0` (factual): `c0` at rank 3, grade 3"
    assert items[-1] == "- … and 2 more in `missing-labels.csv`"
    line = chunk_console_line(_with(report, missing=missing))
    assert line == (
        "chunk grades: 8 graded, 22 possible missing labels (missing-labels.csv); agreement "
        "with the golden labels 100.0% (κ 1.00, 8 chunks)"
    )


def test_the_missing_labels_file_carries_the_question_and_the_chunk_text(
    report: Record,
) -> None:
    empty = missing_labels_file(report)
    assert empty == "\ufeff" + ",".join(MISSING_LABELS_COLUMNS) + "\r\n"  # written, though empty
    # q3 retrieved pricing/plans at rank 2; its labels list widgets/sizes only.
    found = _missing("q3", "pricing/plans", 2, type="negative", grade=2, reason="price")
    text = missing_labels_file(_with(report, missing=[found]))
    assert text is not None
    rows = list(csv.reader(io.StringIO(text.lstrip("\ufeff"))))
    chunk_text = next(c["text"] for c in CORPUS if c["chunk_id"] == "pricing/plans")
    assert rows == [
        list(MISSING_LABELS_COLUMNS),
        [
            "q3",
            "negative",
            "pricing/plans",
            "2",
            "2",
            "price",
            QUESTIONS[2]["question"],
            chunk_text,
            "",
        ],
    ]


def test_chunks_graded_below_the_context_have_their_corpus_text_in_the_file_and_the_page(
    tiny: Tiny,
) -> None:
    """With ``[judge.chunks] depth`` beyond ``context_k``, the chunks below it are in no
    answer's context: their text comes from the corpus (it was empty for 325 of 585 rows)."""
    from judge.report.review_page import page_data

    # q2's label leaves out backup/restore, which its run ranks third
    questions = [
        q | ({"relevant_chunks": ["backup/auto"]} if q["id"] == "q2" else {}) for q in QUESTIONS
    ]
    config = tiny(questions=questions).with_overrides(
        retrieval={"context_k": 1},
        judge={"chunks": {"enabled": True, "prompt": REPO / "prompts" / "chunk.v1.md", "depth": 5}},
    )
    report = evaluate(config, backend="lexical", progress=False).report
    assert report.chunks is not None
    deep = [m for m in report.chunks.missing if m.rank > 1]
    assert deep, "the case this test is about: a possible missing label below context_k"
    corpus = {c["chunk_id"]: c["text"] for c in CORPUS}
    assert report.chunks.texts == {m.chunk_id: corpus[m.chunk_id] for m in report.chunks.missing}
    text = missing_labels_file(report)
    assert text is not None
    rows = list(csv.DictReader(io.StringIO(text.lstrip("\ufeff"))))
    assert rows and all(row["chunk_text"] == corpus[row["chunk_id"]] for row in rows)
    data = page_data(report)
    shown = [
        (item["question_id"], c["chunk_id"], data["chunk_texts"][c["text"]])
        for item in data["items"]
        for c in item["beyond_context"]
    ]
    assert shown == [(m.question_id, m.chunk_id, corpus[m.chunk_id]) for m in deep]
