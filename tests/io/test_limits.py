"""The one table of limits (``judge.io.limits``): each writer refuses what its reader would
refuse, so every kind of file the harness writes, written at each limit, reads back with the
same limits; and just over a limit, the writer refuses it before anything is written."""

from __future__ import annotations

from pathlib import Path

import pytest

from judge.errors import InputError
from judge.io.jsonl import checked_line, read_jsonl, record_problem, write_jsonl
from judge.io.limits import (
    LIMITS,
    MAX_COUNT,
    MAX_INT_DIGITS,
    MAX_RECORD_MB,
    MAX_REPLY_KB,
    POINTER_MAX_BYTES,
    bounded_count,
    bounded_reply,
    file_size_problem,
    reply_problem,
    shown_size,
)
from judge.io.state import (
    StateFile,
    json_document_text,
    read_json_document,
    read_pointer,
    write_json_document,
    write_pointer,
)
from judge.io.text import read_text

REPO = Path(__file__).resolve().parents[2]
MB = 2**20
#: A state file kind with a small limit, so that a file at the limit is quick to write.
SMALL = StateFile(what="test state file", remedy="write it again", max_mb=1)


def _record_of_line_size(size: int) -> dict[str, str]:
    """A record whose JSONL line (with its newline) is exactly ``size`` bytes."""
    overhead = len(checked_line({"t": ""}, "x").encode("utf-8"))
    return {"t": "a" * (size - overhead)}


def test_a_jsonl_line_at_the_record_limit_is_written_and_read_back(tmp_path: Path) -> None:
    at = _record_of_line_size(MAX_RECORD_MB * MB)
    path = tmp_path / "at.jsonl"
    write_jsonl(path, [at])
    assert path.stat().st_size == MAX_RECORD_MB * MB
    assert read_jsonl(path)[0].value == at
    over = _record_of_line_size(MAX_RECORD_MB * MB + 1)
    assert record_problem(over) == "the line is 4.1 MB, over the 4 MB limit for one record"
    with pytest.raises(InputError):
        checked_line(over, "here")


def test_integers_at_the_digit_limit_are_written_and_read_back(tmp_path: Path) -> None:
    at = {"n": int("9" * MAX_INT_DIGITS)}
    path = tmp_path / "n.jsonl"
    path.write_text(checked_line(at, "here"), encoding="utf-8")
    assert read_jsonl(path)[0].value == at
    over = {"n": 10**MAX_INT_DIGITS}
    assert record_problem(over) is not None
    document = tmp_path / "n.json"
    write_json_document(document, at, SMALL)
    assert read_json_document(document, kind=SMALL) == at
    with pytest.raises(InputError):
        write_json_document(document, over, SMALL)


def test_nesting_the_writer_takes_is_read_back(tmp_path: Path) -> None:
    deep: object = "leaf"
    for _ in range(100):
        deep = [deep]
    path = tmp_path / "deep.jsonl"
    path.write_text(checked_line({"d": deep}, "here"), encoding="utf-8")
    assert read_jsonl(path)[0].value == {"d": deep}
    for _ in range(100_000):
        deep = [deep]
    assert record_problem({"d": deep}) is not None


def test_a_state_file_at_its_size_limit_is_written_and_read_back(tmp_path: Path) -> None:
    overhead = len(json_document_text({"t": ""}, SMALL).encode("utf-8"))
    at = {"t": "b" * (MB - overhead)}
    path = tmp_path / "state.json"
    write_json_document(path, at, SMALL)
    assert path.stat().st_size == MB
    assert read_json_document(path, kind=SMALL) == at
    with pytest.raises(InputError) as caught:
        write_json_document(path, {"t": at["t"] + "b"}, SMALL)
    assert "over the 1 MB limit" in caught.value.problems[0]
    assert read_json_document(path, kind=SMALL) == at  # the file as it was


def test_a_pointer_at_its_limit_is_written_and_read_back(tmp_path: Path) -> None:
    path = tmp_path / "latest"
    name = "n" * (POINTER_MAX_BYTES - 1)
    write_pointer(path, name, SMALL)
    assert read_pointer(path, SMALL) == name
    with pytest.raises(InputError):
        write_pointer(path, name + "n", SMALL)


def test_an_input_file_at_max_file_mb_is_read_and_just_over_it_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "big.txt"
    path.write_bytes(b"c" * MB)
    assert len(read_text(path, 1)) == MB
    assert file_size_problem(MB, 1, "run.jsonl") is None
    problem = file_size_problem(MB + 1, 1, "run.jsonl")
    assert problem == (
        "run.jsonl would be 1.1 MB, over the 1 MB limit (data.max_file_mb) that every command "
        "reading it applies"
    )
    path.write_bytes(b"c" * (MB + 1))
    with pytest.raises(InputError):
        read_text(path, 1)


def test_a_reply_at_the_reply_limit_is_kept_and_its_verdict_line_fits() -> None:
    from judge.judging.verdict import Reply

    at = "r" * (MAX_REPLY_KB * 1024)
    assert reply_problem(at) is None
    assert Reply(text=at).kind == "reply"
    # A verdict keeps the reply and the fields read from it: within the line limit.
    assert record_problem({"raw_reply": at, "note": at, "evidence": at}) is None
    over = Reply(text=at + "r")
    assert (over.kind, over.text) == ("error", "")
    assert over.detail is not None and over.detail.startswith(
        "the judge's reply is 512.1 kB, over the 512 kB limit for one reply, so it is not kept"
    )
    # Control characters count as JSON writes them (six bytes each).
    assert reply_problem("\x01" * (MAX_REPLY_KB * 1024 // 6 + 1)) is not None
    assert bounded_reply("not a dict") == "not a dict"
    assert bounded_reply({"text": 3}) == {"text": 3}


def test_counts_are_taken_only_as_bounded_plain_integers() -> None:
    assert bounded_count(MAX_COUNT) == MAX_COUNT
    assert bounded_count(0) == 0
    for bad in (MAX_COUNT + 1, 10**400, -1, True, 2.0, "3", None):
        assert bounded_count(bad) is None


def test_sizes_are_never_shown_smaller_than_they_are() -> None:
    assert shown_size(4 * MB + 1) == "4.1 MB"
    assert shown_size(1024) == "1 kB"
    assert shown_size(1025) == "1.1 kB"


def test_the_docs_give_the_table_of_limits() -> None:
    """docs/bad-input.md lists each limit of the table with its value."""
    docs = (REPO / "docs" / "bad-input.md").read_text(encoding="utf-8")
    for row in LIMITS:
        assert f"| {row.what} | {row.limit} |" in docs, row
        assert row.setting == "" or f"`{row.setting}`" in docs
