"""Accepting confirmed chunk labels into the questions file: reading the reviewer's file, the
conflicts, the in-place edit of one line, and the checked write (``judge.inputs.golden_edit``)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from judge.config import Config
from judge.errors import InputError
from judge.formatting import bom_csv
from judge.inputs.golden import load_golden
from judge.inputs.golden_edit import (
    CONFIRMED_NO,
    CONFIRMED_YES,
    Confirmations,
    LabelEdit,
    confirmed_value,
    insert_chunks,
    plan_label_edit,
    read_confirmations,
    write_label_edit,
)
from tests.conftest import QUESTIONS

Tiny = Callable[..., Config]

COLUMNS = [
    "question_id",
    "type",
    "chunk_id",
    "rank",
    "grade",
    "reason",
    "question",
    "chunk_text",
    "confirmed",
]


def _csv(path: Path, rows: list[tuple[str, str, str]], *, bom: bool = True) -> Path:
    """A missing-labels.csv as the report writes it (``bom_csv``), filled in: (qid, chunk,
    confirmed) per row, the other columns as a reviewer sees them."""
    cells = [[q, "factual", c, 2, 2, "理由", "質問", "チャンクの本文", mark] for q, c, mark in rows]
    text = bom_csv(COLUMNS, cells)
    path.write_text(text if bom else text.removeprefix("\ufeff"), encoding="utf-8")
    return path


def _plan(config: Config, rows: list[tuple[str, str, str]], tmp_path: Path) -> LabelEdit:
    confirmations = read_confirmations(_csv(tmp_path / "missing-labels.csv", rows))
    raw = config.data.questions.read_bytes()
    return plan_label_edit(confirmations, load_golden(config.data), config.data, raw)


def _conflicts(config: Config, rows: list[tuple[str, str, str]], tmp_path: Path) -> list[str]:
    with pytest.raises(InputError) as caught:
        _plan(config, rows, tmp_path)
    *problems, last = caught.value.problems
    assert last == (
        f"nothing was written to {config.data.questions}; fix the rows above and run again"
    )
    return problems


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
    path = _csv(
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
    path = _csv(tmp_path / "m.csv", [("q1", "pricing/trial", "Y")], bom=False)
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
    path = _csv(tmp_path / "m.csv", [("q1", "=calc/x", "yes")])
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
    path = _csv(tmp_path / "m.csv", [("", "pricing/trial", "yes"), ("q1", "", "")])
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


# --- inserting ids into one line -------------------------------------------------------------


def test_an_id_is_inserted_in_the_lines_own_style() -> None:
    spaced = '{"id": "q1", "relevant_chunks": ["a"], "answerable": true}'
    assert insert_chunks(spaced, ["b"]) == (
        '{"id": "q1", "relevant_chunks": ["a", "b"], "answerable": true}'
    )
    compact = '{"id":"q1","relevant_chunks":["a"],"answerable":true}'
    assert insert_chunks(compact, ["b", "c"]) == (
        '{"id":"q1","relevant_chunks":["a","b","c"],"answerable":true}'
    )
    # Two ids already: their own separator, even if the members use another.
    mixed = '{"id": "q1", "relevant_chunks": ["a","b"] , "answerable": true}\r'
    assert insert_chunks(mixed, ["c"]) == (
        '{"id": "q1", "relevant_chunks": ["a","b","c"] , "answerable": true}\r'
    )
    padded = '  { "relevant_chunks" : [ "a" ] ,  "id" : "q1" }'
    assert insert_chunks(padded, ["b"]) == '  { "relevant_chunks" : [ "a" ,  "b" ] ,  "id" : "q1" }'


def test_japanese_ids_stay_characters_unless_the_line_escapes() -> None:
    line = '{"id": "q1", "question": "年額は？", "relevant_chunks": ["料金/月額"]}'
    assert insert_chunks(line, ["料金/年額"]) == (
        '{"id": "q1", "question": "年額は？", "relevant_chunks": ["料金/月額", "料金/年額"]}'
    )
    escaped = json.dumps({"id": "q1", "question": "年額は？", "relevant_chunks": ["料金/月額"]})
    edited = insert_chunks(escaped, ["料金/年額"])
    assert edited.isascii()
    assert json.loads(edited)["relevant_chunks"] == ["料金/月額", "料金/年額"]


def test_the_last_of_duplicate_keys_is_edited_as_json_reads_it() -> None:
    line = '{"relevant_chunks": ["old"], "id": "q1", "relevant_chunks": ["a"]}'
    assert insert_chunks(line, ["b"]) == (
        '{"relevant_chunks": ["old"], "id": "q1", "relevant_chunks": ["a", "b"]}'
    )


def test_a_line_without_ids_to_append_to_is_refused() -> None:
    with pytest.raises(ValueError, match="no relevant_chunks field"):
        insert_chunks('{"id": "q1"}', ["a"])
    with pytest.raises(ValueError, match="relevant_chunks is empty"):
        insert_chunks('{"id": "q1", "relevant_chunks": []}', ["a"])


# --- planning the edit ----------------------------------------------------------------------


def test_a_confirmed_chunk_is_appended_and_every_other_byte_kept(
    tiny: Tiny, tmp_path: Path
) -> None:
    config = tiny()
    path = config.data.questions
    # A file as people leave it: a BOM, CRLF endings, a blank line, one compact line.
    lines = [json.dumps(q, ensure_ascii=False) for q in QUESTIONS]
    lines[1] = json.dumps(QUESTIONS[1], ensure_ascii=False, separators=(",", ":"))
    original = ("\ufeff" + "\r\n".join([lines[0], "", *lines[1:]]) + "\r\n").encode("utf-8")
    path.write_bytes(original)
    edit = _plan(
        config,
        [
            ("q1", "pricing/trial", "yes"),
            ("q2", "widgets/sizes", "✓"),
            ("q1", "pricing/plans", "y"),  # already listed
            ("q3", "pricing/plans", "no"),
            ("q1", "pricing/trial", "yes"),  # the same row twice: once
            ("q3", "backup/auto", ""),
        ],
        tmp_path,
    )
    assert edit.added == (("q1", "pricing/trial"), ("q2", "widgets/sizes"))
    assert (edit.already, edit.marked_no, edit.undecided) == (1, 1, 1)
    assert edit.lines == (1, 3)
    new = edit.text.encode("utf-8")
    assert new.startswith(b"\xef\xbb\xbf")
    old_lines, new_lines = original.split(b"\n"), new.split(b"\n")
    assert len(new_lines) == len(old_lines)
    changed = [i for i, (a, b) in enumerate(zip(old_lines, new_lines, strict=True)) if a != b]
    assert changed == [0, 2]  # q1 and q2; the blank line, q3, q4 and the end byte-identical
    assert new_lines[0] == old_lines[0].replace(
        b'["pricing/plans"]', b'["pricing/plans", "pricing/trial"]'
    )
    assert new_lines[2] == old_lines[2].replace(
        b'["backup/restore","backup/auto"]', b'["backup/restore","backup/auto","widgets/sizes"]'
    )


def test_nothing_to_add_gives_the_same_text(tiny: Tiny, tmp_path: Path) -> None:
    config = tiny()
    edit = _plan(config, [("q1", "pricing/plans", "yes"), ("q4", "pricing/plans", "no")], tmp_path)
    assert edit.added == ()
    assert edit.text.encode("utf-8") == config.data.questions.read_bytes()
    assert edit.lines == ()


def test_each_conflict_is_one_located_line_pointing_at_what_to_fix(
    tiny: Tiny, tmp_path: Path
) -> None:
    questions = [*QUESTIONS, {**QUESTIONS[0], "id": "q5", "relevant_chunks": None}]
    config = tiny(questions=questions)
    golden, corpus = config.data.questions, config.data.corpus
    m = tmp_path / "missing-labels.csv"
    problems = _conflicts(
        config,
        [
            ("q9", "pricing/trial", "yes"),  # 2: unknown question
            ("q1", "pricing/gone", "yes"),  # 3: unknown chunk
            ("q4", "pricing/trial", "yes"),  # 4: out of scope
            ("q5", "pricing/trial", "yes"),  # 5: unlabelled
            ("q2", "pricing/trial", "yes"),  # 6
            ("q2", "pricing/trial", "no"),  # 7: yes and no
            ("q1", "pricing/plans", "no"),  # 8: no for a listed chunk
            ("q3", "pricing/trial", "perhaps"),  # 9: not a decision
            ("q3", "backup/auto", "yes"),  # 10: fine, and not written either
        ],
        tmp_path,
    )
    assert problems == [
        f"{m}:2: question_id 'q9' is not in {golden} (renamed or removed?); fix the row or "
        "clear its confirmed cell",
        f"{m}:3: chunk_id 'pricing/gone' is not in the corpus {corpus} (re-chunked since the "
        "report?); fix the row or clear its confirmed cell",
        f"{m}:4: q4 pricing/trial is marked yes, but q4 is of type 'out_of_scope' (answerable: "
        f"false, {golden}:4): it has no relevant chunks by definition; if the corpus does "
        "answer it, fix its type and answerable there first, then run this again",
        f"{m}:5: q5 pricing/trial is marked yes, but q5 has no chunk labels yet "
        f"(relevant_chunks: null, {golden}:5): one added chunk would make its recall look "
        "complete; label all its relevant chunks there by hand",
        f"{m}:7: q2 pricing/trial is marked no here and yes at {m}:6; keep one of the two",
        f"{m}:8: q1 pricing/plans is marked no, but {golden}:1 lists it as relevant; accepting "
        "never removes a label: if the reviewer is right, remove it from relevant_chunks there "
        "by hand",
        f'{m}:9: confirmed: "perhaps" is not a decision; write yes (y, true, 1, x, ✓), no (n, '
        "false, 0), or leave it empty to decide later",
    ]


def test_a_no_for_an_unlabelled_or_out_of_scope_question_is_fine(
    tiny: Tiny, tmp_path: Path
) -> None:
    questions = [*QUESTIONS, {**QUESTIONS[0], "id": "q5", "relevant_chunks": None}]
    config = tiny(questions=questions)
    edit = _plan(config, [("q5", "pricing/trial", "no"), ("q4", "pricing/plans", "n")], tmp_path)
    assert (edit.added, edit.marked_no) == ((), 2)


# --- the checked write ----------------------------------------------------------------------


def test_the_write_replaces_the_file_with_one_the_loader_reads(tiny: Tiny, tmp_path: Path) -> None:
    config = tiny()
    path = config.data.questions
    path.chmod(0o640)
    original = path.read_bytes()
    edit = _plan(config, [("q3", "pricing/trial", "yes")], tmp_path)
    write_label_edit(edit, original, load_golden(config.data).corpus, config.data)
    assert path.read_text(encoding="utf-8") == edit.text
    by_id = load_golden(config.data).by_id()
    assert by_id["q3"].relevant_chunks == ("widgets/sizes", "pricing/trial")
    assert path.stat().st_mode & 0o777 == 0o640
    assert sorted(p.name for p in path.parent.iterdir() if p.name.startswith(".")) == []


def test_the_write_is_refused_when_the_file_changed_since_it_was_read(
    tiny: Tiny, tmp_path: Path
) -> None:
    config = tiny()
    path = config.data.questions
    original = path.read_bytes()
    edit = _plan(config, [("q3", "pricing/trial", "yes")], tmp_path)
    saved_meanwhile = original + b"\n"  # someone's editor saved the file
    path.write_bytes(saved_meanwhile)
    with pytest.raises(InputError) as caught:
        write_label_edit(edit, original, load_golden(config.data).corpus, config.data)
    assert caught.value.problems == [
        f"{path}: the file changed while the labels were being added (saved in an editor?); "
        "nothing was written: run judge golden accept again"
    ]
    assert path.read_bytes() == saved_meanwhile
    assert [p.name for p in path.parent.iterdir() if p.name.startswith(".")] == []
