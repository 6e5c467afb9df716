"""The labelling sheet: blind, Excel-ready, and imported back whole or not at all."""

import copy
import csv
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from judge.cli import main
from judge.config import Config
from tests.audit.conftest import HUMAN, fill_like_a_spreadsheet, sample_label_and_import
from tests.conftest import QUESTIONS, RUN

Tiny = Callable[..., Config]


def test_the_sheet_is_blind(labelled_setup: tuple[Config, str], tmp_path: Path) -> None:
    config, toml = labelled_setup
    sheet = tmp_path / "sheet.csv"
    assert main(["--config", toml, "audit", "sample", "--n", "4", "--out", str(sheet)]) == 0
    text = sheet.read_text(encoding="utf-8-sig")
    header = text.splitlines()[0].split(",")
    # Blind: nothing from the judge in the sheet.
    assert "evidence" not in header and "note" in header and "faithfulness" in header
    rows = list(csv.DictReader(text.splitlines()))
    assert all(r["faithfulness"] == "" for r in rows)
    folder = (
        config.reports.dir / (config.reports.dir / "latest").read_text(encoding="utf-8").strip()
    )
    verdicts = (folder / "verdicts.jsonl").read_text(encoding="utf-8")
    for verdict in map(json.loads, verdicts.splitlines()):
        assert verdict["note"] not in text  # the judge's reasoning never reaches labellers


def test_import_is_idempotent(
    labelled_setup: tuple[Config, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, toml = labelled_setup
    sheet = tmp_path / "sheet.csv"
    assert main(["--config", toml, "audit", "sample", "--n", "4", "--out", str(sheet)]) == 0
    fill_like_a_spreadsheet(sheet, HUMAN, "ana")
    capsys.readouterr()
    assert main(["--config", toml, "audit", "import", str(sheet)]) == 0
    assert "4 added, 0 replaced, 0 already there" in capsys.readouterr().out
    # Idempotent.
    assert main(["--config", toml, "audit", "import", str(sheet)]) == 0
    assert "0 added, 0 replaced, 4 already there" in capsys.readouterr().out


def test_bad_rows_are_all_reported_and_nothing_is_imported(
    labelled_setup: tuple[Config, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, toml = labelled_setup
    sheet = tmp_path / "sheet.csv"
    assert main(["--config", toml, "audit", "sample", "--n", "4", "--out", str(sheet)]) == 0
    fill_like_a_spreadsheet(sheet, {"q1": (2, 2), "q2": (3, 2), "q3": (1, 1)}, "ana")
    rows = list(csv.reader(sheet.read_text(encoding="utf-8-sig").splitlines()))
    header = rows[0]
    for row in rows[1:]:
        if row[header.index("question_id")] == "q3":
            row[header.index("answer")] += "（編集）"  # someone edited the answer cell
    with sheet.open("w", encoding="utf-8-sig", newline="") as handle:
        csv.writer(handle).writerows(rows)
    capsys.readouterr()
    assert main(["--config", toml, "audit", "import", str(sheet)]) == 2
    err = capsys.readouterr().err
    assert "faithfulness must be 0, 1 or 2, got '3'" in err
    assert "the answer text was edited" in err
    assert "nothing was imported" in err
    assert not (tmp_path / "labels.jsonl").exists()


def test_conflicting_label_needs_replace(
    labelled_setup: tuple[Config, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, toml = labelled_setup
    sheet = tmp_path / "sheet.csv"
    sample_label_and_import(toml, sheet)
    fill_like_a_spreadsheet(sheet, {**HUMAN, "q2": (2, 2)}, "ana")
    assert main(["--config", toml, "audit", "import", str(sheet)]) == 2
    assert (
        "q2: ana already labelled this answer F1 R2, the file says F2 R2; pass --replace"
        in capsys.readouterr().err
    )
    assert main(["--config", toml, "audit", "import", str(sheet), "--replace"]) == 0
    assert "0 added, 1 replaced, 3 already there" in capsys.readouterr().out


def test_formula_like_cells_survive_a_spreadsheet_round_trip(
    tiny: Tiny, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = copy.deepcopy(RUN)
    run[2]["answer"] = "- 設定を開く\n- 復元をタップ"  # a list that Excel would read as a formula
    config = tiny(run=run, extra_toml=f'labels = "{tmp_path / "labels.jsonl"}"\n')
    assert config.source is not None
    toml = str(config.source)
    assert main(["--config", toml, "run", "--backend", "lexical"]) == 0
    sheet = tmp_path / "sheet.csv"
    assert main(["--config", toml, "audit", "sample", "--n", "4", "--out", str(sheet)]) == 0
    rows = {
        r["question_id"]: r
        for r in csv.DictReader(sheet.read_text(encoding="utf-8-sig").splitlines(keepends=True))
    }
    assert rows["q2"]["answer"].startswith("'- 設定")  # kept as text by the spreadsheet
    fill_like_a_spreadsheet(sheet, HUMAN, "ana")  # saved back with CRLF line ends
    capsys.readouterr()
    assert main(["--config", toml, "audit", "import", str(sheet)]) == 0
    assert "4 added" in capsys.readouterr().out


def test_a_formula_like_question_id_is_quoted_in_the_sheet_and_imported_back(
    tiny: Tiny, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    hostile = '=HYPERLINK("http://x","y")'
    questions = copy.deepcopy(QUESTIONS)
    questions[0]["id"] = hostile
    run = copy.deepcopy(RUN)
    run[1]["id"] = hostile
    config = tiny(
        questions=questions, run=run, extra_toml=f'labels = "{tmp_path / "labels.jsonl"}"\n'
    )
    assert config.source is not None
    toml = str(config.source)
    assert main(["--config", toml, "run", "--backend", "lexical"]) == 0
    sheet = tmp_path / "sheet.csv"
    assert main(["--config", toml, "audit", "sample", "--n", "4", "--out", str(sheet)]) == 0
    rows = list(csv.reader(sheet.read_text(encoding="utf-8-sig").splitlines(keepends=True)))
    header = rows[0]
    assert "'" + hostile in [row[header.index("question_id")] for row in rows]  # kept as text
    for row in rows[1:]:
        row[header.index("faithfulness")], row[header.index("relevance")] = "2", "1"
        row[header.index("labeller")] = "ana"
        row[header.index("note")] = "'- 一部だけ"  # a note a spreadsheet kept as text
    with sheet.open("w", encoding="utf-8-sig", newline="") as handle:
        csv.writer(handle, lineterminator="\r\n").writerows(rows)
    capsys.readouterr()
    assert main(["--config", toml, "audit", "import", str(sheet)]) == 0
    assert "4 added" in capsys.readouterr().out
    labels = [json.loads(line) for line in (tmp_path / "labels.jsonl").read_text().splitlines()]
    assert hostile in {label["question_id"] for label in labels}
    assert {label["note"] for label in labels} == {"- 一部だけ"}


def test_a_sheet_with_an_answer_past_the_csv_modules_default_limit_imports(tmp_path: Path) -> None:
    """An answer (up to 4 MB) or a chunk longer than the csv module's 128 KiB default is in the
    sheet the tool writes: that sheet must import; a cell over one record's limit is one
    located line, never a traceback."""
    import csv

    from judge.audit.sheet import parse_sheet, write_sheet
    from judge.errors import InputError
    from judge.formatting import csv_field_limit
    from judge.hashing import text_sha256
    from judge.inputs.golden import GoldenQuestion
    from judge.judging.types import ContextChunk
    from judge.results.item_record import ItemRecord

    answer = "長い回答です。" * 30_000  # 210,000 characters
    item = ItemRecord(
        question_id="q1",
        type="factual",
        split="",
        question="年額プランはいくらですか？",
        answer=answer,
        reference_answer=None,
        context=[ContextChunk(1, "c1", "The annual plan is 3,800 yen. " * 6_000)],
        relevant_chunks=["c1"],
        retrieval={},
        labels=[],
    )
    sheet = tmp_path / "sheet.csv"
    write_sheet(sheet, [item])
    rows = sheet.read_text(encoding="utf-8-sig").splitlines(True)
    with csv_field_limit(8 * 1024 * 1024):  # the test reads the sheet as a person's tool would
        table = list(csv.DictReader(rows))
    table[0].update(faithfulness="2", relevance="1", labeller="ana")
    with sheet.open("w", encoding="utf-8-sig", newline="") as out:
        writer = csv.DictWriter(out, list(table[0]))
        writer.writeheader()
        writer.writerows(table)
    questions = {
        "q1": GoldenQuestion(
            id="q1", type="factual", question=item.question, relevant_chunks=["c1"], answerable=True
        )
    }
    labels, blank = parse_sheet(sheet, questions, None)
    assert blank == 0 and [(lab.answer_sha256, lab.relevance) for lab in labels] == [
        (text_sha256(answer), 1)
    ]
    assert csv.field_size_limit() == 131072  # restored
    huge = tmp_path / "huge.csv"
    huge.write_text(
        "question_id,answer_sha256,faithfulness,relevance,answer\n"
        f'q1,{"0" * 64},2,2,"{"x" * (4 * 1024 * 1024 + 1)}"\n',
        encoding="utf-8",
    )
    with pytest.raises(InputError) as caught:
        parse_sheet(huge, questions, "ana")
    assert caught.value.problems == [
        f"{huge}:2: not readable as CSV (field larger than field limit (4194304)); save the "
        "sheet again as CSV"
    ]


def test_a_conflict_in_the_comment_alone_says_so() -> None:
    """The same scores with another comment was shown as "F2 R2, the file says F2 R2"."""
    from judge.audit.sheet import merge_labels
    from judge.inputs.labels import HumanLabel

    def label(note: str, faithfulness: int = 2) -> HumanLabel:
        return HumanLabel(
            question_id="q1",
            labeller="ana",
            faithfulness=faithfulness,
            relevance=2,
            note=note,
            answer_sha256="0" * 64,
        )

    _, _, conflicts = merge_labels(
        [label("根拠は第2段落。")], [label("quote is in chunk 2")], False
    )
    assert conflicts == [
        'q1: ana already labelled this answer F2 R2 with the comment "根拠は第2段落。"; the file '
        'gives the same scores with the comment "quote is in chunk 2" (only the comment '
        "differs); pass --replace to overwrite"
    ]
    _, _, none = merge_labels([label("")], [label("x" * 80)], False)
    assert none[0].endswith(
        f'with the comment "{"x" * 60}…" (only the comment differs); pass --replace to overwrite'
    )
    assert "with the comment (none);" in none[0]
    _, _, scores = merge_labels([label("a", 1)], [label("b")], False)
    assert scores == [
        "q1: ana already labelled this answer F1 R2, the file says F2 R2; pass "
        "--replace to overwrite"
    ]
