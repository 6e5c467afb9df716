"""The reader and the writer of JSON state files (``judge.io.state``) on their own: the format
version, the limits, and the writer that refuses what its reader would refuse. The real CLI
commands that read each state file are in ``tests/test_state_files.py``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict

from judge.errors import ConfigError, InputError
from judge.io.state import (
    POINTER_MAX_BYTES,
    StateFile,
    json_document_text,
    read_json_document,
    read_pointer,
    write_json_document,
    write_pointer,
)

HUGE_INT = b"9" * 5000
DEEP = b"[" * 100_000 + b"]" * 100_000


# --- the reader -------------------------------------------------------------------------------


class Thing(BaseModel):
    model_config = ConfigDict(extra="forbid")

    format_version: int = 2
    name: str


THING = StateFile(what="thing", remedy="delete it", current=2)


def _write(tmp_path: Path, data: Any, raw: bytes | None = None) -> Path:
    path = tmp_path / "thing.json"
    path.write_bytes(raw if raw is not None else json.dumps(data).encode())
    return path


def _refusal(path: Path, kind: StateFile = THING, model: type[BaseModel] | None = Thing) -> str:
    with pytest.raises(InputError) as caught:
        read_json_document(path, model, kind)
    assert len(caught.value.problems) == 1
    return caught.value.problems[0]


def test_the_reader_validates_into_the_model(tmp_path: Path) -> None:
    path = _write(tmp_path, {"format_version": 2, "name": "x"})
    assert read_json_document(path, Thing, THING) == Thing(name="x")
    assert read_json_document(path, None, THING) == {"format_version": 2, "name": "x"}
    # A BOM (an editor's) is dropped, as the JSONL loader drops it.
    bom = _write(tmp_path, None, b"\xef\xbb\xbf" + path.read_bytes())
    assert read_json_document(bom, Thing, THING).name == "x"


def test_the_reader_takes_the_keywords_of_a_plain_file(tmp_path: Path) -> None:
    path = _write(tmp_path, {"format_version": 3, "name": "x"})
    assert read_json_document(path, what="thing")["name"] == "x"  # no version: not checked
    with pytest.raises(InputError, match=r"thing format 3 is newer than this judge reads"):
        read_json_document(path, Thing, what="thing", current=2)


@pytest.mark.parametrize(
    ("data", "said"),
    [
        (
            {"format_version": 99, "name": "x"},
            "thing format 99 is newer than this judge reads (up to 2); upgrade judge, or delete it",
        ),
        (
            {"name": "x"},
            "thing without a format_version (this judge reads format 2); delete it",
        ),
        (
            {"format_version": 1, "name": "x"},
            "thing format 1 is older than this judge reads (2); delete it",
        ),
        (
            {"format_version": "2", "name": "x"},
            'format_version: must be an integer such as 2, not "2" (remove the quotes)',
        ),
        (
            {"format_version": True, "name": "x"},
            "format_version: must be an integer such as 2, not true",
        ),
        ({"format_version": 2, "name": 1}, "name: must be a string, not 1; delete it"),
        ([1, 2], "expected a JSON object, got list; delete it"),
    ],
    ids=["newer", "missing", "older", "a-string", "a-bool", "invalid", "not-an-object"],
)
def test_the_format_version_is_checked_on_every_read(tmp_path: Path, data: Any, said: str) -> None:
    path = _write(tmp_path, data)
    assert _refusal(path) == f"{path}: {said}"


def test_an_older_version_is_read_through_its_upgrade(tmp_path: Path) -> None:
    def upgrade(version: int, old: dict[str, Any]) -> dict[str, Any]:
        if "title" not in old:
            raise ValueError("no title")
        return {"name": old["title"]}

    kind = THING._replace(upgrade=upgrade)
    path = _write(tmp_path, {"format_version": 1, "title": "old"})
    assert read_json_document(path, Thing, kind) == Thing(name="old", format_version=2)
    broken = _write(tmp_path, {"format_version": 1})
    assert (
        _refusal(broken, kind) == f"{broken}: thing format 1 cannot be read as format 2 (no title)"
    )


@pytest.mark.parametrize(
    ("raw", "said"),
    [
        (
            b'{"format_version": 2, "name": ' + HUGE_INT + b"}",
            "an integer has more than 4300 digits",
        ),
        (DEEP, "nested too deeply (arrays or objects inside each other)"),
        (b'{"format_version": 2,\n "name": "\xe5"}', ":2: not UTF-8 (byte 0xe5)"),
        (b'{"format_version": 2, "name": "\\ud800"}', "a \\u escape encodes half a character"),
        (b'{"format_version": 2,\n "name": }', ":2: not valid JSON (Expecting value at column 10)"),
        (b"", ":1: not valid JSON (Expecting value at column 1)"),
    ],
    ids=["digits", "deep", "not-utf8", "lone-surrogate", "not-json", "empty"],
)
def test_the_reader_has_the_jsonl_loaders_limits_and_words(
    tmp_path: Path, raw: bytes, said: str
) -> None:
    path = _write(tmp_path, None, raw)
    problem = _refusal(path)
    assert problem.startswith(str(path)) and said in problem
    assert problem.endswith("; delete it")


def test_the_reader_refuses_a_file_over_its_size_limit(tmp_path: Path) -> None:
    path = _write(tmp_path, {"format_version": 2, "name": "x" * 300_000})
    kind = THING._replace(max_mb=0.25)
    assert _refusal(path, kind) == (
        f"{path}: the file is 0.3 MB, over the 0.25 MB limit for a thing; delete it"
    )
    assert (
        _refusal(tmp_path / "gone.json") == f"{tmp_path / 'gone.json'}: file not found; delete it"
    )


def test_the_reader_raises_the_kinds_error_in_its_words(tmp_path: Path) -> None:
    kind = THING._replace(
        damaged="{path}: cannot be read ({located}); it is damaged", error=ConfigError
    )
    path = _write(tmp_path, None, b'{\n"name": ')
    with pytest.raises(ConfigError) as caught:
        read_json_document(path, Thing, kind)
    assert str(caught.value) == (
        f"{path}: cannot be read (line 2: not valid JSON (Expecting value at column 9)); it is "
        "damaged"
    )


# --- the writer -------------------------------------------------------------------------------


def _deep(levels: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(levels):
        value = [value]
    return value


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ({"n": 10**5000}, "it cannot be written as JSON (Exceeds the limit (4300 digits)"),
        ({"n": _deep(100_000)}, "nested too deeply (arrays or objects inside each other)"),
        ({"text": "half \ud800 a character"}, "a text holds half a character"),
        ({"text": "x" * 300_000}, "it is 0.3 MB, over the 0.25 MB limit for a thing"),
    ],
    ids=["digits", "deep", "lone-surrogate", "too-large"],
)
def test_the_writer_refuses_what_its_reader_would_refuse(
    tmp_path: Path, value: dict[str, Any], said: str
) -> None:
    path = tmp_path / "thing.json"
    path.write_text('{"format_version": 2, "name": "before"}', encoding="utf-8")
    kind = THING._replace(max_mb=0.25)
    with pytest.raises(InputError) as caught:
        write_json_document(path, {"format_version": 2, **value}, kind)
    (problem,) = caught.value.problems
    assert problem.startswith(f"{path}: the thing is not written: {said}")
    assert problem.endswith("and it could not be read back")
    assert read_json_document(path, Thing, kind).name == "before"  # the old file is intact
    assert [p.name for p in tmp_path.iterdir()] == ["thing.json"]  # and no temporary file


def test_what_the_writer_writes_its_reader_reads(tmp_path: Path) -> None:
    path = tmp_path / "thing.json"
    thing = Thing(name="名前 \u2028 with a line separator")
    write_json_document(path, thing, THING)
    assert read_json_document(path, Thing, THING) == thing
    assert path.read_text(encoding="utf-8") == json_document_text(thing, THING)
    assert path.read_text(encoding="utf-8").startswith('{\n  "format_version": 2,')


# --- the pointer ------------------------------------------------------------------------------

POINTER = StateFile(what="pointer", remedy="write a folder name into it", error=ConfigError)


@pytest.mark.parametrize(
    ("raw", "said"),
    [
        (b"a\xffb\n", ":1: not UTF-8 (byte 0xff)"),
        (b"one\ntwo\n", ":2: holds more than one line"),
        (b" \n", ": is empty"),
        (b"a\x1bb\n", ":1: holds U+001B (a control character)"),
        (b"x" * (POINTER_MAX_BYTES + 1), f": is longer than a pointer file ({POINTER_MAX_BYTES}"),
    ],
    ids=["not-utf8", "two-lines", "empty", "control", "too-long"],
)
def test_a_pointer_that_is_not_one_name_is_one_located_line(
    tmp_path: Path, raw: bytes, said: str
) -> None:
    path = tmp_path / "latest"
    path.write_bytes(raw)
    with pytest.raises(ConfigError) as caught:
        read_pointer(path, POINTER)
    assert str(caught.value).startswith(f"{path}{said}")
    assert str(caught.value).endswith("; write a folder name into it")


def test_a_pointer_is_written_and_read_back_and_a_bad_name_is_not_written(tmp_path: Path) -> None:
    path = tmp_path / "latest"
    write_pointer(path, "20261129T000000Z-aaaaaaaa", POINTER)
    assert path.read_text(encoding="utf-8") == "20261129T000000Z-aaaaaaaa\n"
    assert read_pointer(path, POINTER) == "20261129T000000Z-aaaaaaaa"
    with pytest.raises(InputError, match=r"latest: the pointer is not written: the name holds"):
        write_pointer(path, "two\nlines", POINTER)
    assert read_pointer(path, POINTER) == "20261129T000000Z-aaaaaaaa"
