"""The reports directory: resolving folders, reading their records, publishing a new one whole."""

import os
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from judge.config import Config
from judge.errors import ConfigError
from judge.folders import ReportsDir
from judge.judging.types import ContextChunk
from judge.pipeline.evaluate import evaluate
from judge.results.item_record import ItemRecord
from tests.conftest import RUN, history_entry

Tiny = Callable[..., Config]


def test_no_latest_folder_before_the_first_run(tmp_path: Path) -> None:
    reports = ReportsDir(tmp_path / "reports")
    with pytest.raises(ConfigError, match="no runs in") as caught:
        reports.folder(None)
    assert str(caught.value) == f"no runs in {tmp_path / 'reports'} yet; run 'judge run' first"


def test_latest_a_name_and_a_path_resolve_to_the_same_folder(tiny: Tiny) -> None:
    config = tiny()
    result = evaluate(config, backend="lexical")
    reports = ReportsDir(config.reports.dir)
    by_latest = reports.folder(None)
    by_name = reports.folder(result.folder.name)
    by_path = reports.folder(str(result.folder.path))
    assert by_latest.path == by_name.path == by_path.path == config.reports.dir / result.folder.name
    assert by_latest.manifest == by_name.manifest == by_path.manifest
    with pytest.raises(ConfigError, match="not a report folder"):
        reports.folder("19700101T000000Z-00000000")


def test_items_are_typed_records_of_what_the_judge_saw(tiny: Tiny) -> None:
    config = tiny()
    folder = evaluate(config, backend="lexical").folder
    items = folder.items()
    assert list(items) == ["q1", "q2", "q3", "q4"]
    q2 = items["q2"]
    assert isinstance(q2, ItemRecord)
    assert q2.type == "procedural" and q2.split == "tune"
    assert q2.answer == RUN[2]["answer"]
    assert all(isinstance(c, ContextChunk) for c in q2.context)
    # context_k is 5 by default: all three chunks q2's run retrieved, in rank order.
    assert [(c.rank, c.chunk_id) for c in q2.context] == [
        (1, "backup/auto"),
        (2, "widgets/sizes"),
        (3, "backup/restore"),
    ]
    assert q2.context[2].text.startswith("1. 設定を開きます。")
    assert q2.relevant_chunks == ["backup/restore", "backup/auto"]
    assert items["q4"].relevant_chunks == []
    assert q2.labels == []
    assert set(folder.verdicts()) == {"q1", "q2", "q3", "q4"}


def test_publish_leaves_no_partial_folder_and_points_latest_at_it(tiny: Tiny) -> None:
    config = tiny()
    first = evaluate(config, backend="lexical").folder
    second = evaluate(config, backend="lexical").folder
    assert first.name != second.name
    reports = config.reports.dir
    assert list(reports.glob("*.partial")) == list(reports.glob(".*.partial")) == []
    assert (reports / "latest").read_text(encoding="utf-8") == second.name + "\n"
    assert [e.folder for e in ReportsDir(reports).history()] == [first.name, second.name]
    assert {"manifest.json", "items.jsonl", "verdicts.jsonl", "run.jsonl", "report.md"} <= {
        p.name for p in second.path.iterdir()
    }


def test_new_folder_name_adds_a_suffix_when_the_name_is_taken(tmp_path: Path) -> None:
    reports = ReportsDir(tmp_path)
    now = datetime(2026, 11, 29, 13, 5, 28, tzinfo=UTC)
    fingerprint = "h1:4f71d269aabbccdd"
    name = reports.new_folder_name(fingerprint, now)
    assert name == "20261129T130528Z-4f71d269"
    (tmp_path / name).mkdir()
    assert reports.new_folder_name(fingerprint, now) == "20261129T130528Z-4f71d269-2"
    (tmp_path / "20261129T130528Z-4f71d269-2").mkdir()
    assert reports.new_folder_name(fingerprint, now) == "20261129T130528Z-4f71d269-3"


def test_publish_replaces_a_stale_partial_folder_of_this_process(tmp_path: Path) -> None:
    reports = ReportsDir(tmp_path / "reports")
    name = "20261129T130528Z-4f71d269"
    stale = tmp_path / "reports" / f".{name}.{os.getpid()}.partial"
    stale.mkdir(parents=True)
    (stale / "left-over.txt").write_text("from a crashed attempt", encoding="utf-8")
    entry = history_entry(name, started_at="2026-11-29T13:05:28+00:00")
    folder = reports.publish(name, {"report.md": "# Report\n"}, entry)
    assert folder.path == tmp_path / "reports" / name
    assert sorted(p.name for p in folder.path.iterdir()) == ["report.md"]
    assert not stale.exists()
    assert sorted(p.name for p in reports.path.iterdir()) == [name, "history.jsonl", "latest"]
    assert (reports.path / "latest").read_text(encoding="utf-8") == name + "\n"
    assert reports.history() == [entry]


def test_publish_removes_the_partial_folder_of_a_run_that_died(tiny: Tiny) -> None:
    from judge.pipeline.evaluate import evaluate

    config = tiny()
    config.reports.dir.mkdir(parents=True)
    dead = config.reports.dir / ".20261129T000000Z-deadbeef.99999.partial"
    dead.mkdir()
    (dead / "manifest.json").write_text("{", encoding="utf-8")
    evaluate(config, backend="lexical")
    assert not dead.exists()
    assert [p.name for p in config.reports.dir.glob(".*.partial")] == []


def test_latest_is_a_name_too(tiny: Tiny) -> None:
    from judge.pipeline.evaluate import evaluate

    config = tiny()
    folder = evaluate(config, backend="lexical").folder
    reports = ReportsDir(config.reports.dir)
    assert reports.folder("latest").path == folder.path == reports.folder(None).path
