"""Accepting confirmed chunk labels into the questions file: the conflicts, the in-place edit
of one line, and the checked write (``judge.inputs.golden_edit``; the reviewer's file is read
in tests/inputs/test_confirmations.py)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from judge.config import Config
from judge.errors import InputError
from judge.inputs.confirmations import read_confirmations
from judge.inputs.golden import load_golden
from judge.inputs.golden_edit import (
    LabelEdit,
    insert_chunks,
    plan_label_edit,
    write_label_edit,
)
from tests.conftest import QUESTIONS
from tests.inputs.conftest import missing_labels_csv

Tiny = Callable[..., Config]


def _plan(config: Config, rows: list[tuple[str, str, str]], tmp_path: Path) -> LabelEdit:
    confirmations = read_confirmations(missing_labels_csv(tmp_path / "missing-labels.csv", rows))
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
