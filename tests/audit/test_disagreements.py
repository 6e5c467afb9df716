"""The full list of disagreements as a spreadsheet file (judge.audit.disagreements): one row per
disagreement in the order given, every column named and filled from the item, the label and the
verdict, formula-safe text, and the file written whole in the audited folder."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from judge.audit.disagreements import (
    DISAGREEMENTS_FILE,
    HEADER,
    disagreements_csv,
    write_disagreements,
)
from judge.audit.types import Disagreement
from judge.hashing import text_sha256
from judge.inputs.labels import HumanLabel
from judge.judging.types import ContextChunk, EvidenceMatch, Verdict
from judge.results.item_record import ItemRecord


def _disagreement(
    qid: str,
    question: str,
    human: tuple[int, int],
    judged: tuple[int, int],
    match: EvidenceMatch | None = None,
    human_note: str = "",
) -> Disagreement:
    answer = f"年額3,800円です（{qid}）。"
    item = ItemRecord(
        question_id=qid,
        type="factual",
        split="dev",
        question=question,
        answer=answer,
        context=[ContextChunk(1, "pricing/plans", "年額プランは3,800円です。")],
        retrieval={},
        labels=[],
    )
    label = HumanLabel(
        question_id=qid,
        faithfulness=human[0],
        relevance=human[1],
        labeller="ana",
        note=human_note,
        answer_sha256=text_sha256(answer),
    )
    verdict = Verdict(
        question_id=qid,
        item_key="k",
        status="ok",
        faithfulness=judged[0],
        relevance=judged[1],
        evidence="年額プランは3,800円です。",
        note="quoted",
        match=match,
    )
    return Disagreement(item, label, verdict)


def _rows(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text.removeprefix("\ufeff"))))


def test_the_header_names_every_column_in_order() -> None:
    assert HEADER == (
        "question_id",
        "type",
        "labeller",
        "human_faithfulness",
        "human_relevance",
        "judge_faithfulness",
        "judge_relevance",
        "gap",
        "question",
        "answer",
        "judge_note",
        "evidence",
        "match",
        "human_note",
    )
    # No disagreement: the header alone, with the BOM spreadsheets need for Japanese.
    assert disagreements_csv([]) == "\ufeff" + ",".join(HEADER) + "\r\n"


def test_one_row_per_disagreement_in_the_order_given() -> None:
    exact = EvidenceMatch(kind="exact", chunk_id="pricing/plans", start=0, end=12, coverage=1.0)
    rows = _rows(
        disagreements_csv(
            [
                # |2 - 0| + |1 - 2| = 3 points apart
                _disagreement(
                    "q2", "年額プランはいくらですか？", (2, 1), (0, 2), exact, "見落とし"
                ),
                # |0 - 2| + |2 - 2| = 2
                _disagreement("q1", "How much?", (0, 2), (2, 2)),
            ]
        )
    )
    assert rows[0] == list(HEADER)
    assert rows[1] == [
        "q2",
        "factual",
        "ana",
        "2",
        "1",
        "0",
        "2",
        "3",
        "年額プランはいくらですか？",
        "年額3,800円です（q2）。",
        "quoted",
        "年額プランは3,800円です。",
        "exact",
        "見落とし",
    ]
    # No match and no note: empty cells, not "None".
    assert rows[2][0] == "q1" and rows[2][7] == "2"
    assert rows[2][-2:] == ["", ""]


def test_text_that_a_spreadsheet_would_run_as_a_formula_is_quoted() -> None:
    [_, row] = _rows(disagreements_csv([_disagreement("q1", "=HYPERLINK(1)", (2, 2), (1, 2))]))
    assert row[HEADER.index("question")] == "'=HYPERLINK(1)"


def test_the_file_is_written_whole_in_the_folder_and_replaced_by_the_next_audit(
    tmp_path: Path,
) -> None:
    first = [_disagreement("q1", "How much?", (0, 2), (2, 2))]
    path = write_disagreements(first, tmp_path)
    assert path == tmp_path / DISAGREEMENTS_FILE == tmp_path / "disagreements.csv"
    assert path.read_bytes() == disagreements_csv(first).encode("utf-8")
    assert path.read_bytes().startswith(b"\xef\xbb\xbf")
    write_disagreements([], tmp_path)
    assert _rows(path.read_text(encoding="utf-8")) == [list(HEADER)]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["disagreements.csv"]  # no temp file left
