"""The reviewer's confirmations file (``judge.inputs.confirmations``): every spelling a spreadsheet
gets, CSV as Excel and LibreOffice save it, JSONL for scripts, every problem located."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from judge.errors import InputError
from judge.inputs.confirmations import (
    CONFIRMED_NO,
    CONFIRMED_YES,
    Confirmations,
    confirmed_value,
    read_confirmations,
)
from tests.inputs.conftest import COLUMNS, missing_labels_csv

# --- the reviewer's words -------------------------------------------------------------------


@pytest.mark.parametrize("word", ["yes", "YES", "Yes", "y", "Y", "true", "TRUE", "1", "x", "X"])
def test_yes_is_read_in_every_spelling_a_spreadsheet_gets(word: str) -> None:
    assert confirmed_value(word) is True
    assert confirmed_value(f"  {word} ") is True


@pytest.mark.parametrize("word", ["no", "NO", "n", "N", "false", "False", "0"])
def test_no_is_read_in_every_spelling_a_spreadsheet_gets(word: str) -> None:
    assert confirmed_value(word) is False


def test_check_marks_and_full_width_forms_are_words_too() -> None:
    # A Japanese IME types full-width letters and digits: NFKC makes them the ASCII words.
    assert confirmed_value("✓") is True
    assert confirmed_value("✔") is True
    assert confirmed_value("ＹＥＳ") is True
    assert confirmed_value("１") is True
    assert confirmed_value("ｎｏ") is False
    assert confirmed_value("０") is False
    assert {"yes", "y", "true", "1", "x", "✓"} <= CONFIRMED_YES
    assert {"no", "n", "false", "0"} <= CONFIRMED_NO
    assert not CONFIRMED_YES & CONFIRMED_NO


def test_an_empty_cell_is_not_decided() -> None:
    assert confirmed_value("") is None
    assert confirmed_value("   ") is None
    assert confirmed_value("\u3000") is None  # an ideographic space: NFKC makes it a space


@pytest.mark.parametrize("word", ["maybe", "×", "○", "はい", "2", "yes!", "-"])
def test_anything_else_is_refused_never_guessed(word: str) -> None:
    # × is "no" to a Japanese reviewer and looks like the "x" of yes: neither is guessed.
    with pytest.raises(ValueError, match="is not a decision"):
        confirmed_value(word)


# --- reading the file -----------------------------------------------------------------------


def test_a_csv_from_excel_with_a_bom_is_read(tmp_path: Path) -> None:
    path = missing_labels_csv(
        tmp_path / "m.csv",
        [("q1", "pricing/trial", "yes"), ("q2", "widgets/sizes", "no"), ("q3", "backup/auto", "")],
    )
    assert path.read_bytes().startswith(b"\xef\xbb\xbf")
    read = read_confirmations(path)
    assert read.problems == ()
    assert [(c.question_id, c.chunk_id, c.relevant) for c in read.decided] == [
        ("q1", "pricing/trial", True),
        ("q2", "widgets/sizes", False),
    ]
    assert read.undecided == 1
    assert [c.where for c in read.decided] == [f"{path}:2", f"{path}:3"]


def test_a_csv_without_a_bom_and_with_crlf_is_read(tmp_path: Path) -> None:
    path = missing_labels_csv(tmp_path / "m.csv", [("q1", "pricing/trial", "Y")], bom=False)
    path.write_bytes(path.read_bytes().replace(b"\r\n", b"\n").replace(b"\n", b"\r\n"))
    (confirmation,) = read_confirmations(path).decided
    assert confirmation == ("q1", "pricing/trial", True, f"{path}:2")


def test_a_cell_spanning_lines_locates_the_row_by_line_and_row(tmp_path: Path) -> None:
    path = tmp_path / "m.csv"
    path.write_text(
        ",".join(COLUMNS) + "\n"
        'q1,factual,pricing/trial,1,2,r,q,"一行目\n二行目\n三行目",yes\n'
        "q2,procedural,backup/auto,2,2,r,q,t,maybe\n",
        encoding="utf-8",
    )
    read = read_confirmations(path)
    assert read.decided[0].where == f"{path}:2"
    # The second record starts on line 5 of the file; a spreadsheet shows it as row 3.
    assert read.problems == (
        f'{path}:5 (row 3): confirmed: "maybe" is not a decision; write yes (y, true, 1, x, '
        "✓), no (n, false, 0), or leave it empty to decide later",
    )


def test_blank_rows_are_skipped_uncounted_and_formula_quotes_come_off(tmp_path: Path) -> None:
    # bom_csv quotes a formula-like id ('=x'): the quote comes off again on reading.
    path = missing_labels_csv(tmp_path / "m.csv", [("q1", "=calc/x", "yes")])
    with path.open("a", encoding="utf-8") as handle:
        handle.write(",,,,,,,,\n,,,,,,,,\n")
    read = read_confirmations(path)
    assert [c.chunk_id for c in read.decided] == ["=calc/x"]
    assert read.undecided == 0


def test_missing_columns_are_one_line_and_a_semicolon_file_is_named(tmp_path: Path) -> None:
    path = tmp_path / "m.csv"
    path.write_text("question_id,chunk_id\nq1,pricing/trial\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        read_confirmations(path)
    assert caught.value.problems == [
        f"{path}:1: missing column(s) confirmed; use the missing-labels.csv of a report folder, "
        "with its header row"
    ]
    path.write_text(";".join(COLUMNS) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match="separated by ';': save it as CSV with commas"):
        read_confirmations(path)


def test_a_long_chunk_is_read_and_a_cell_over_a_records_limit_is_one_located_line(
    tmp_path: Path,
) -> None:
    path = tmp_path / "m.csv"
    # Over the csv module's default field limit (131072 characters): a chunk this long is in
    # the missing-labels.csv the harness writes, so it must read back.
    cell = "長" * 140_000
    path.write_text(
        ",".join(COLUMNS) + f'\nq1,factual,pricing/trial,1,2,r,q,"{cell}",yes\n', encoding="utf-8"
    )
    assert [(c.question_id, c.chunk_id) for c in read_confirmations(path).decided] == [
        ("q1", "pricing/trial")
    ]
    huge = "x" * (4 * 1024 * 1024 + 1)  # over one record's limit (MAX_RECORD_MB)
    path.write_text(
        ",".join(COLUMNS) + f'\nq1,factual,pricing/trial,1,2,r,q,"{huge}",yes\n', encoding="utf-8"
    )
    with pytest.raises(InputError) as caught:
        read_confirmations(path)
    assert caught.value.problems == [
        f"{path}:2: not readable as CSV (field larger than field limit (4194304)); save the file "
        "again as CSV"
    ]
    # The csv module's process-wide limit is restored.
    import csv

    assert csv.field_size_limit() == 131072


def test_a_decided_row_without_ids_is_a_problem(tmp_path: Path) -> None:
    path = missing_labels_csv(tmp_path / "m.csv", [("", "pricing/trial", "yes"), ("q1", "", "")])
    read = read_confirmations(path)
    assert read.problems == (
        f"{path}:2: question_id empty; copy the row from the report's missing-labels.csv",
    )
    assert read.undecided == 1  # an undecided row is not looked at


def test_jsonl_takes_bools_words_and_null(tmp_path: Path) -> None:
    path = tmp_path / "m.jsonl"
    records: list[dict[str, Any]] = [
        {"question_id": "q1", "chunk_id": "pricing/trial", "confirmed": True},
        {"question_id": "q2", "chunk_id": "widgets/sizes", "confirmed": "no"},
        {"question_id": "q3", "chunk_id": "backup/auto", "confirmed": None},
        {"question_id": "q3", "chunk_id": "pricing/plans"},
        {"question_id": "q1", "chunk_id": "backup/auto", "confirmed": False, "rank": 3},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    read = read_confirmations(path)
    assert [(c.question_id, c.chunk_id, c.relevant, c.where) for c in read.decided] == [
        ("q1", "pricing/trial", True, f"{path}:1"),
        ("q2", "widgets/sizes", False, f"{path}:2"),
        ("q1", "backup/auto", False, f"{path}:5"),
    ]
    assert read.undecided == 2


def test_jsonl_refuses_unknown_fields_lax_types_and_bad_words_all_at_once(tmp_path: Path) -> None:
    path = tmp_path / "m.jsonl"
    path.write_text(
        '{"question_id": "q1", "chunk_id": "pricing/trial", "confirm": "yes"}\n'
        '{"question_id": "q1", "chunk_id": "pricing/trial", "confirmed": "ok"}\n'
        '{"question_id": "q1", "chunk_id": "pricing/trial", "confirmed": 1}\n'
        '{"question_id": "q1", "chunk_id": "pricing/trial", "rank": "3", "confirmed": true}\n',
        encoding="utf-8",
    )
    problems = read_confirmations(path).problems
    assert problems[0] == f"{path}:1: unknown field 'confirm'"
    assert any(p.startswith(f'{path}:2: confirmed: "ok" is not a decision') for p in problems)
    assert any(p.startswith(f"{path}:3: confirmed") for p in problems)
    assert any(p.startswith(f"{path}:4: rank: must be an integer") for p in problems)


def test_an_empty_jsonl_file_has_nothing_to_decide(tmp_path: Path) -> None:
    path = tmp_path / "m.jsonl"
    path.write_text("", encoding="utf-8")
    assert read_confirmations(path) == Confirmations(path, (), 0, ())


def test_a_missing_file_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(InputError) as caught:
        read_confirmations(tmp_path / "nope.csv")
    assert caught.value.problems == [f"{tmp_path / 'nope.csv'}: file not found"]
