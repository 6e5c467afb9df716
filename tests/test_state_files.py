"""The JSON state files the harness writes and reads back: one reader, one writer.

Each state file (a report folder's ``manifest.json``, ``judge-baseline.json``, review.html's
marks file, a batch manifest) is damaged the ways a JSONL input can be (a 5,000-digit
integer, 100,000-deep nesting, bytes that are not UTF-8), and the real CLI command that reads
it must exit 2 with exactly one located line on stderr, never a traceback; so must
``reports/latest`` that is not UTF-8 and a ``history.jsonl`` line of a newer format. Then the
reader and the writer of ``judge.jsonl`` on their own: the format version, the limits, and the
writer that refuses what its reader would refuse.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from pydantic import BaseModel, ConfigDict

from judge.cli import main
from judge.config import Config
from judge.errors import ConfigError, InputError
from judge.jsonl import (
    POINTER_MAX_BYTES,
    StateFile,
    checked_line,
    json_document_text,
    read_json_document,
    read_pointer,
    record_problem,
    write_json_document,
    write_pointer,
)
from judge.results.history import read_history
from tests.conftest import history_entry, run_lexical

Tiny = Callable[..., Config]

HUGE_INT = b"9" * 5000
DEEP = b"[" * 100_000 + b"]" * 100_000
DAMAGE = {
    "5000-digit-integer": b'{"format_version": 1, "version": 1, "x": ' + HUGE_INT + b"}",
    "100000-deep": DEEP,
    "not-utf8": b'{"format_version": 1, "x": "\xff"}',
}
SAID = {
    "5000-digit-integer": "an integer has more than 4300 digits",
    "100000-deep": "nested too deeply",
    "not-utf8": "not UTF-8 (byte 0xff)",
}


class StateCase(NamedTuple):
    """A state file, how to make it exist, and the command that reads it."""

    prepare: Callable[[Config, Path], Path]
    """Make what the command needs; return the state file's path."""
    command: Callable[[Config, Path], list[str]]
    extra_toml: str = ""


def _report_folder_manifest(config: Config, tmp_path: Path) -> Path:
    assert run_lexical(config) == 0  # a real report folder, by a lexical run
    latest = (config.reports.dir / "latest").read_text(encoding="utf-8").strip()
    return config.reports.dir / latest / "manifest.json"


def _baseline(config: Config, tmp_path: Path) -> Path:
    return config.reports.baseline


def _marks(config: Config, tmp_path: Path) -> Path:
    return tmp_path / "marks.json"


def _batch_manifest(config: Config, tmp_path: Path) -> Path:
    return tmp_path / "batch" / "manifest.json"


def _cli(config: Config, *args: str) -> list[str]:
    assert config.source is not None
    return ["--config", str(config.source), *args]


CASES = {
    "manifest-show": StateCase(_report_folder_manifest, lambda c, p: _cli(c, "show", "q1")),
    "manifest-report": StateCase(_report_folder_manifest, lambda c, p: _cli(c, "report")),
    "baseline-run": StateCase(
        _baseline, lambda c, p: _cli(c, "run", "--backend", "lexical", "--fail-on-regression")
    ),
    "marks-audit-import": StateCase(
        _marks,
        lambda c, p: _cli(c, "audit", "import", str(p), "--labeller", "ana"),
        'labels = "labels.jsonl"',
    ),
    "batch-manifest-import": StateCase(
        _batch_manifest,
        lambda c, p: _cli(
            c, "batch", "import", str(p.parent / "results.jsonl"), "--manifest", str(p)
        ),
    ),
}


def _one_error_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = err.splitlines()
    assert len(lines) == 1, err
    return lines[0]


@pytest.mark.parametrize("damage", DAMAGE, ids=list(DAMAGE))
@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_a_damaged_state_file_is_exit_2_and_one_located_line(
    tiny: Tiny,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    case: str,
    damage: str,
) -> None:
    state = CASES[case]
    config = tiny(extra_toml=state.extra_toml)
    path = state.prepare(config, tmp_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(DAMAGE[damage])
    capsys.readouterr()
    assert main(state.command(config, path)) == 2
    line = _one_error_line(capsys)
    assert line.startswith(f"error: {path}"), line  # located: the file (and line when known)
    assert SAID[damage] in line
    if damage == "not-utf8":  # and its line
        assert line.startswith(f"error: {path}:1: ") or f"(line 1: {SAID[damage]}" in line, line


def test_a_latest_pointer_that_is_not_utf8_is_one_located_line(
    tiny: Tiny, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tiny()
    assert run_lexical(config) == 0
    latest = config.reports.dir / "latest"
    latest.write_bytes(b"2026\xff\n")
    capsys.readouterr()
    assert main(_cli(config, "show", "q1")) == 2
    assert _one_error_line(capsys) == (
        f"error: {latest}:1: not UTF-8 (byte 0xff); it holds the name of the newest report "
        "folder: write one of 'ls reports' into it, or delete it and run 'judge run'"
    )


def test_a_history_line_of_a_newer_format_is_refused_in_its_line(
    tiny: Tiny, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tiny()
    assert run_lexical(config) == 0
    history = config.reports.dir / "history.jsonl"
    entries = history.read_bytes().splitlines()
    newer = json.loads(entries[0]) | {"format_version": 99, "folder": "from-the-future"}
    with history.open("ab") as handle:
        handle.write(json.dumps(newer).encode() + b"\n" + entries[0] + b"\n")
    capsys.readouterr()
    assert run_lexical(config) == 2
    assert _one_error_line(capsys) == (
        f"error: {history}:2: history entry format 99 is newer than this judge reads (up to 1); "
        "upgrade judge, or remove the line (each line is one earlier run: removing it only "
        "loses comparisons with that run)"
    )
    assert history.read_bytes().count(b"\n") == 3  # nothing appended to it


def test_a_history_line_of_the_current_format_still_reads(tmp_path: Path) -> None:
    path = tmp_path / "history.jsonl"
    path.write_text(history_entry("run1").model_dump_json() + "\n", encoding="utf-8")
    assert [e.folder for e in read_history(path)] == ["run1"]


def test_history_lines_refuse_what_the_jsonl_loader_refuses(tmp_path: Path) -> None:
    path = tmp_path / "history.jsonl"
    good = history_entry("run1").model_dump_json()
    deep = '{"folder": ' + "[" * 100_000 + "]" * 100_000 + "}"
    path.write_text(good + "\n" + deep + "\n" + good + "\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        read_history(path)
    assert caught.value.problems == [
        f"{path}:2: not a history entry (nested too deeply (arrays or objects inside each "
        "other)); remove or fix the line (each line is one earlier run: removing it only loses "
        "comparisons with that run)"
    ]


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


def test_a_manifest_the_reader_would_refuse_is_not_rendered(tiny: Tiny) -> None:
    from judge.pipeline import evaluate

    manifest = evaluate(tiny(), backend="lexical").report.manifest
    meta = manifest.run.meta.model_copy(update={"chunking": {"x": 10**5000}})
    broken = manifest.model_copy(update={"run": manifest.run.model_copy(update={"meta": meta})})
    with pytest.raises(InputError, match=r"^manifest.json: the report folder manifest is not"):
        broken.to_json()
    assert json.loads(manifest.to_json())["format_version"] == 3


def test_record_lines_over_a_limit_are_found_before_they_are_written() -> None:
    assert record_problem({"answer": "回答"}) is None
    assert record_problem({"answer": "年" * 1_500_000}) == (
        "the line is 4.3 MB, over the 4 MB limit for one record"
    )
    assert record_problem({"answer": "\ud800"}) == (
        "a text holds half a character (a lone UTF-16 surrogate)"
    )
    assert checked_line({"a": 1}, "x.jsonl") == '{"a": 1}\n'
    with pytest.raises(
        InputError, match=r"^x.jsonl: the record is not written: it cannot be written as JSON"
    ):
        checked_line({"a": json.loads("9" * 4300) * 10}, "x.jsonl")


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
