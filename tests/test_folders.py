"""``judge.folders``: a report folder found by path, by name or as the latest run (refused in one
line when it is none), its record read once, its history line, a new folder's name that takes
no name already used, and publishing: the folder whole, then its history line and ``latest``."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from judge.config import Config
from judge.errors import ConfigError
from judge.folders import ReportFolder, ReportsDir, read_record, read_saved_verdicts
from tests.conftest import run_lexical

Tiny = Callable[..., Config]
NOW = datetime(2026, 12, 1, 16, 58, 0, tzinfo=UTC)
FINGERPRINT = "h1:0123456789abcdef"


@pytest.fixture
def judged(tiny: Tiny) -> tuple[ReportsDir, str]:
    """The tiny set judged once by the lexical baseline: its reports directory and the folder
    name ``latest`` holds."""
    config = tiny()
    assert run_lexical(config) == 0
    reports = ReportsDir(config.reports.dir)
    return reports, (reports.path / "latest").read_text(encoding="utf-8").strip()


def test_no_latest_run_is_one_line_saying_what_to_do(tmp_path: Path) -> None:
    reports = ReportsDir(tmp_path / "reports")
    for name in (None, "latest"):
        with pytest.raises(ConfigError) as caught:
            reports.folder(name)
        assert str(caught.value) == f"no runs in {reports.path} yet; run 'judge run' first"


def test_a_folder_without_a_manifest_is_refused_by_name(tmp_path: Path) -> None:
    reports = ReportsDir(tmp_path)
    (tmp_path / "half").mkdir()
    with pytest.raises(ConfigError) as caught:
        reports.folder("half")
    assert str(caught.value) == f"half: not a report folder (no manifest.json); see 'ls {tmp_path}'"


def test_the_latest_a_name_and_a_path_find_the_same_folder(judged: tuple[ReportsDir, str]) -> None:
    reports, name = judged
    latest = reports.folder(None)
    assert latest.name == name and latest.path == reports.path / name
    assert reports.folder("latest").path == latest.path
    assert reports.folder(name).path == latest.path
    assert reports.folder(str(latest.path)).path == latest.path
    assert latest.run_path == latest.path / "run.jsonl" and latest.run_path.is_file()
    assert reports.runs_dir == reports.path / "runs"
    assert reports.history_path == reports.path / "history.jsonl"


def test_a_folders_record_is_read_once_and_gives_items_and_verdicts_in_order(
    judged: tuple[ReportsDir, str],
) -> None:
    reports, _ = judged
    folder = reports.folder(None)
    record = folder.record()
    assert folder.record() is record  # read once
    assert list(folder.items()) == ["q1", "q2", "q3", "q4"]
    assert list(folder.verdicts()) == ["q1", "q2", "q3", "q4"]
    assert folder.items()["q2"].question_id == "q2"
    assert folder.manifest.judge.backend == "lexical"
    # verdicts.jsonl holds the record's verdicts, one a line
    saved = read_saved_verdicts(folder.path)
    assert {k: v.model_dump() for k, v in saved.items()} == {
        k: v.model_dump() for k, v in folder.verdicts().items()
    }
    assert read_record(folder.path).model_dump() == record.model_dump()


def test_values_come_from_values_json_or_else_from_the_record(
    judged: tuple[ReportsDir, str],
) -> None:
    reports, name = judged
    saved = reports.folder(name).values()
    (reports.path / name / "values.json").unlink()
    assert ReportFolder(reports.path / name).values() == saved


def test_the_history_line_of_a_folder(judged: tuple[ReportsDir, str], tmp_path: Path) -> None:
    reports, name = judged
    folder = reports.folder(name)
    [entry] = reports.history()
    assert reports.history_entry(folder) == entry and entry.folder == name
    stranger = ReportFolder(tmp_path / "elsewhere")
    with pytest.raises(ConfigError) as caught:
        reports.history_entry(stranger)
    assert str(caught.value) == f"elsewhere is not in {reports.history_path}"


def test_a_new_folder_name_is_the_time_and_the_fingerprint_and_takes_no_used_name(
    judged: tuple[ReportsDir, str],
) -> None:
    reports, name = judged
    [entry] = reports.history()
    first = reports.new_folder_name(FINGERPRINT, NOW)
    assert first == "20261201T165800Z-01234567"
    (reports.path / first).mkdir()  # a folder of that name: the next suffix
    assert reports.new_folder_name(FINGERPRINT, NOW) == f"{first}-2"
    # a history line of a deleted folder keeps its name taken too
    taken = [entry.model_copy(update={"folder": f"{first}-2"})]
    assert reports.new_folder_name(FINGERPRINT, NOW, taken) == f"{first}-3"
    assert reports.new_folder_name(FINGERPRINT, NOW, []) == f"{first}-2"
    assert name != first


def test_publish_writes_the_folder_whole_then_history_and_latest(
    judged: tuple[ReportsDir, str],
) -> None:
    reports, name = judged
    [entry] = reports.history()
    stale = reports.path / ".dead.123.partial"
    stale.mkdir()
    (stale / "report.json").write_text("{", encoding="utf-8")
    new = reports.new_folder_name(FINGERPRINT, NOW)
    files: dict[str, str | bytes] = {"a.txt": "first\n", "b.bin": b"\x00\x01"}
    with reports.lock():
        published = reports.publish(new, files, entry.model_copy(update={"folder": new}))
    assert published.path == reports.path / new
    assert (published.path / "a.txt").read_text(encoding="utf-8") == "first\n"
    assert (published.path / "b.bin").read_bytes() == b"\x00\x01"
    assert not stale.exists() and not list(reports.path.glob(".*.partial"))
    assert [e.folder for e in reports.history()] == [name, new]
    assert (reports.path / "latest").read_text(encoding="utf-8").strip() == new
    published.write_files({"a.txt": "second\n"})
    assert (published.path / "a.txt").read_text(encoding="utf-8") == "second\n"
    assert sorted(p.name for p in published.path.iterdir()) == ["a.txt", "b.bin"]
