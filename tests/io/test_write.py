"""Appends, atomic writes and unique names (``judge.io.write``). Two commands at once and a
crash half-way are in ``tests/hostile/test_shared_files.py`` and ``tests/hostile/test_faults.py``."""

from __future__ import annotations

from pathlib import Path

from judge.io.write import append_line, claim_unique, end_with_newline, write_atomic


def test_an_atomic_write_replaces_the_whole_file_and_leaves_no_temporary_one(
    tmp_path: Path,
) -> None:
    path = tmp_path / "out.txt"
    write_atomic(path, "年額\n")
    assert path.read_text(encoding="utf-8") == "年額\n"
    write_atomic(path, b"bytes as they are\n")
    assert path.read_bytes() == b"bytes as they are\n"
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]


def test_an_appended_line_is_never_glued_onto_the_last_one(tmp_path: Path) -> None:
    path = tmp_path / "history.jsonl"
    append_line(path, "one\n")  # a missing file is made
    path.write_bytes(path.read_bytes() + b"two")  # a last line without its newline
    append_line(path, "three\n")
    assert path.read_text(encoding="utf-8") == "one\ntwo\nthree\n"


def test_end_with_newline_changes_only_a_file_that_needs_it(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    assert end_with_newline(path) is False  # missing
    path.write_bytes(b"")
    assert end_with_newline(path) is False  # empty
    path.write_bytes(b"a")
    assert end_with_newline(path) is True
    assert path.read_bytes() == b"a\n"
    assert end_with_newline(path) is False


def test_a_claimed_name_is_one_no_other_command_has(tmp_path: Path) -> None:
    first = claim_unique(tmp_path / "out", "20261129T000000Z", ".csv")
    second = claim_unique(tmp_path / "out", "20261129T000000Z", ".csv")
    folder = claim_unique(tmp_path / "out", "20261129T000000Z", folder=True)
    assert [first.name, second.name, folder.name] == [
        "20261129T000000Z.csv",
        "20261129T000000Z-2.csv",
        "20261129T000000Z",
    ]
    assert first.is_file() and first.stat().st_size == 0 and folder.is_dir()
