"""The JSON state files the harness writes and reads back: one reader, one writer.

Each state file (a report folder's ``manifest.json``, ``judge-baseline.json``, review.html's
marks file, a batch manifest) is damaged the ways a JSONL input can be (a 5,000-digit
integer, 100,000-deep nesting, bytes that are not UTF-8), and the real CLI command that reads
it must exit 2 with exactly one located line on stderr, never a traceback; so must
``reports/latest`` that is not UTF-8 and a ``history.jsonl`` line of a newer format. Then the
reader and the writer on their own are in ``tests/io/test_state.py``; here, a manifest the
reader would refuse is not rendered.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import pytest

from judge.cli import main
from judge.config import Config
from judge.errors import InputError
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


def test_a_manifest_the_reader_would_refuse_is_not_rendered(tiny: Tiny) -> None:
    from judge.pipeline.evaluate import evaluate

    manifest = evaluate(tiny(), backend="lexical").report.manifest
    meta = manifest.run.meta.model_copy(update={"chunking": {"x": 10**5000}})
    broken = manifest.model_copy(update={"run": manifest.run.model_copy(update={"meta": meta})})
    with pytest.raises(InputError, match=r"^manifest.json: the report folder manifest is not"):
        broken.to_json()
    assert json.loads(manifest.to_json())["format_version"] == 4
