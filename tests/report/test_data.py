"""``judge.report.data``: verdicts.csv, the run record's questions for spreadsheets: a BOM, the
columns in their order (a retrieval metric each, sorted), one row per verdict in golden order,
and no data cell a spreadsheet would read as a formula. (The correctness columns, present only
for a run that judged correctness: tests/results/test_correctness_axis.py.)"""

from __future__ import annotations

import copy
import csv
import io
from collections.abc import Callable

from judge.config import Config
from judge.pipeline.evaluate import evaluate
from judge.record.store import ReportsDir
from judge.report.data import reference_answer, verdicts_csv
from judge.results.item_record import ItemRecord
from tests.conftest import QUESTIONS, RUN, run_lexical

Tiny = Callable[..., Config]
METRICS = ["hit@1", "hit@10", "hit@5", "mrr", "ndcg@1", "ndcg@10", "ndcg@5"]
METRICS += ["recall@1", "recall@10", "recall@5"]
HEADER = [
    "question_id",
    "type",
    "split",
    "status",
    "diagnosis",
    "faithfulness",
    "relevance",
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
    *METRICS,
    "prompt_tokens",
    "completion_tokens",
    "latency_s",
    "cached",
]


def _rows(text: str) -> list[list[str]]:
    assert text.startswith("\ufeff")  # spreadsheets read the Japanese right
    return list(csv.reader(io.StringIO(text.removeprefix("\ufeff"))))


def test_verdicts_csv_is_one_row_per_verdict_in_its_columns(tiny: Tiny) -> None:
    run = copy.deepcopy(RUN)
    run[1]["answer"] = "=1+1 円です。"  # q1's answer: a formula, to a spreadsheet
    config = tiny(run=run)
    assert run_lexical(config) == 0
    folder = ReportsDir(config.reports.dir).folder(None)
    text = verdicts_csv(folder.record())
    assert (folder.path / "verdicts.csv").read_bytes() == text.encode("utf-8")  # as written
    header, *rows = _rows(text)
    assert header == HEADER
    assert [row[0] for row in rows] == ["q1", "q2", "q3", "q4"]
    cells = {row[0]: dict(zip(header, row, strict=True)) for row in rows}
    q1 = cells["q1"]
    assert (q1["type"], q1["split"], q1["status"]) == ("factual", "tune", "ok")
    assert q1["question"] == "年額プランはいくらですか？"
    assert q1["answer"] == "'=1+1 円です。"  # kept as text
    assert (q1["match_kind"], q1["chunk_id"], q1["span_start"]) == ("exact", "pricing/plans", "0")
    assert (q1["recall@5"], q1["reference_answer"], q1["cached"]) == ("1.0", "", "False")
    assert q1["prompt_tokens"] == q1["completion_tokens"] == ""  # the baseline counts none
    q4 = cells["q4"]
    assert (q4["type"], q4["match_kind"], q4["chunk_id"]) == ("out_of_scope", "empty", "")
    assert all(q4[m] == "" for m in METRICS)  # no relevant chunks: no retrieval value
    assert all(float(c["latency_s"]) == round(float(c["latency_s"]), 3) for c in cells.values())


def test_a_cached_run_says_so_in_every_row(tiny: Tiny) -> None:
    config = tiny()
    assert run_lexical(config) == 0
    assert run_lexical(config) == 0  # everything from the cache the second time
    record = ReportsDir(config.reports.dir).folder(None).record()
    header, *rows = _rows(verdicts_csv(record))
    assert [row[header.index("cached")] for row in rows] == ["True"] * 4


def test_the_reference_answer_is_empty_when_there_is_none(tiny: Tiny) -> None:
    config = tiny()
    assert run_lexical(config) == 0
    item = next(iter(ReportsDir(config.reports.dir).folder(None).items().values()))
    assert reference_answer(None) == ""
    assert reference_answer(item.model_copy(update={"reference_answer": None})) == ""
    with_reference = item.model_copy(update={"reference_answer": "3,800円です。"})
    assert isinstance(with_reference, ItemRecord)
    assert reference_answer(with_reference) == "3,800円です。"


def test_a_formula_in_a_question_or_answer_stays_text_in_the_csv(tiny: Tiny) -> None:
    questions = [dict(q) for q in QUESTIONS]
    questions[0]["question"] = "=HYPERLINK(1)"
    run = [dict(r) for r in RUN]
    run[1]["answer"] = "+cmd|' /C calc'!A0"
    result = evaluate(tiny(questions=questions, run=run), backend="lexical")
    text = (result.folder.path / "verdicts.csv").read_bytes().decode("utf-8-sig")
    assert "'=HYPERLINK(1)" in text and "'+cmd|" in text
