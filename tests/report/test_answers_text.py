"""``judge.report.answers_text``: report.md's sections on the answers: the bad answers first
(worst first, scores written out, capped with the rest counted), what needs review, the answers
that could not be produced, and a question's scores as every table writes them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from judge.config import Config
from judge.judging.tasks.correctness import correctness_for
from judge.record.model import Record
from judge.report import answers_text
from tests.judging.tasks.samples import ANSWER_ITEM, reply


def test_bad_answers_first_worst_first_with_written_scores(
    sample_run: tuple[Record, Config, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    record, _, folder = sample_run
    report_md = (folder / "report.md").read_text(encoding="utf-8")
    section = report_md.split("## Bad answers first", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if re.match(r"\| q\d\d ", line)]
    # Below full marks: 30 answers, 10 of them at 2/2 (q23's over-refusal is at F2 R0).
    assert len(rows) == 20
    assert section.count("F0 R2") == 4 and rows[0].startswith(
        "| q14 | factual | retrieval miss | F0 R2 |"
    )
    assert [r.split(" | ")[0] for r in rows[:4]] == ["| q14", "| q18", "| q22", "| q30"]
    assert rows[4].startswith("| q07 | factual | generation | F1 R1 |")
    assert "quote (verified: exact)" in rows[0]
    assert "有料のきせかえテーマは全部で20種類あります。" in rows[0]  # the answer's excerpt
    # Capped: the rest are counted and said where to find.
    monkeypatch.setattr(answers_text, "BAD_ANSWERS_SHOWN", 5)
    capped = answers_text.bad_answer_lines(record.questions)
    assert len([line for line in capped if re.match(r"\| q\d\d ", line)]) == 5
    assert any("15 more below full marks are left out" in line for line in capped)


def test_every_answer_at_full_marks_says_so() -> None:
    assert answers_text.bad_answer_lines([]) == [
        "## Bad answers first",
        "",
        "Every judged answer has full marks (F2 R2).",
        "",
    ]
    assert answers_text.bad_answers([]) == []
    assert answers_text.diagnosis_lines([]) == []


def test_scores_are_written_out_with_correctness_when_judged(
    sample_run: tuple[Record, Config, Path],
) -> None:
    record, _, _ = sample_run
    row = next(r for r in record.questions if r.question_id == "q07")
    assert row.verdict is not None
    assert answers_text.verdict_scores(row.verdict) == "F1 R1"
    assert answers_text.row_scores(row) == "F1 R1"
    failed = row.verdict.model_copy(update={"status": "parse_error"})
    assert answers_text.verdict_scores(failed) == "parse_error"
    assert answers_text.row_scores(row.model_copy(update={"verdict": None})) == "—"
    correct = correctness_for(ANSWER_ITEM, reply('{"correctness": 0, "reason": "r"}'), False)
    assert answers_text.row_scores(row.model_copy(update={"correctness": correct})) == "F1 R1 C0"
    broken = correctness_for(ANSWER_ITEM, reply("{"), False)
    assert answers_text.row_scores(row.model_copy(update={"correctness": broken})) == "F1 R1 C–"


def test_the_answers_that_could_not_be_produced_have_their_section(
    sample_run: tuple[Record, Config, Path],
) -> None:
    record, _, _ = sample_run
    assert answers_text.failed_lines(record) == []  # every question answered
    rows = [
        r.model_copy(update={"failure": "TimeoutError: search|took too long"})
        if r.question_id in ("q02", "q05")
        else r
        for r in record.questions
    ]
    assert answers_text.failed_lines(record.model_copy(update={"questions": rows})) == [
        "## Answers that could not be produced",
        "",
        "The adapter failed for 2 question(s): they have no answer, so no verdict, and the "
        "tables count them in `adapter_failed`.",
        "",
        "- **q02** (procedural): TimeoutError: search\\|took too long",
        "- **q05** (out_of_scope): TimeoutError: search\\|took too long",
        "",
    ]


def test_quote_mode_verdicts_list_no_unsupported_sentence(
    sample_run: tuple[Record, Config, Path],
) -> None:
    record, _, _ = sample_run
    assert answers_text.unsupported_lines(record.verdicts) == []
