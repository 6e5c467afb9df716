"""The season read from real report folders: every run rebuilds history.html, each folder keeps
its gate marks, ``judge history`` prints them, and a changed canary under an unchanged embedder
name is named on the nightly's first line and on the season's axis."""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from judge.cli import main
from judge.config import Config
from judge.pipeline.evaluate import evaluate
from judge.pipeline.history import history, read_marks, season_view
from judge.record.store import ReportFolder, ReportsDir
from tests.conftest import RUN

Tiny = Callable[..., Config]


def _run_with(**meta: Any) -> list[dict[str, Any]]:
    run = copy.deepcopy(RUN)
    run[0]["run_meta"].update(meta)
    return run


def test_every_run_rebuilds_the_page_and_keeps_its_marks(tiny: Tiny) -> None:
    config = tiny()
    for _ in range(2):
        evaluate(config, backend="lexical")
    reports = ReportsDir(config.reports.dir)
    page = reports.path / "history.html"
    assert page.exists() and b'id="season-data"' in page.read_bytes()
    folders = [reports.folder(e.folder) for e in reports.history()]
    assert all((f.path / "marks.json").exists() for f in folders)
    marks = read_marks(folders[-1])
    assert marks is not None and marks.verdict == "ok: no regression" and marks.marks == ()
    view, path = history(config)
    assert path == page and len(view.nights) == 2 and view.changes == []


def test_marks_of_a_folder_without_marks_json_come_from_its_record(tiny: Tiny) -> None:
    config = tiny()
    folder = evaluate(config, backend="lexical").folder
    kept = read_marks(folder)
    (folder.path / "marks.json").unlink()
    assert read_marks(folder) == kept
    (folder.path / "report.json").write_text("{", encoding="utf-8")
    assert (
        read_marks(ReportFolder(folder.path)) is None
    )  # unreadable: the night is drawn without marks


def test_a_gone_folder_is_left_out_of_the_season(tiny: Tiny) -> None:
    config = tiny()
    first = evaluate(config, backend="lexical").folder
    evaluate(config, backend="lexical")
    for child in first.path.iterdir():
        child.unlink()
    first.path.rmdir()
    view = season_view(ReportsDir(config.reports.dir), config.reports.baseline)
    assert [n.folder for n in view.nights] == [ReportsDir(config.reports.dir).history()[-1].folder]


def test_a_changed_canary_under_the_same_name_is_on_the_nightlys_first_line(
    tiny: Tiny, capsys: pytest.CaptureFixture[str]
) -> None:
    canaries = [[0.1, 0.2, 0.3], [0.3, 0.2, 0.1]]
    config = tiny(run=_run_with(embedding_dimension=3, embedding_canaries=canaries))
    assert config.source is not None
    toml = str(config.source)
    assert main(["--config", toml, "nightly", "--backend", "lexical"]) == 1  # nothing to compare
    capsys.readouterr()
    moved = [[v + 0.05 for v in c] for c in canaries]
    tiny(run=_run_with(embedding_dimension=3, embedding_canaries=moved))
    main(["--config", toml, "nightly", "--backend", "lexical"])
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith("nightly: ")
    assert "the embedding canary changed since the last compatible run (c:" in first
    assert "e5-small" not in first  # the name did not change: only the canaries did
    view, _ = history(config)
    assert [(c.night, c.kind) for c in view.changes] == [(1, "index")]
    assert main(["--config", toml, "history"]) == 0
    out = capsys.readouterr().out
    assert " E index: the embedding canary (c:" in out


def test_a_malformed_canary_is_a_located_error_and_exit_2(
    tiny: Tiny, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tiny(run=_run_with(embedding_dimension=4, embedding_canaries=[[0.1, 0.2, 0.3]]))
    assert config.source is not None
    assert main(["--config", str(config.source), "nightly", "--backend", "lexical"]) == 2
    captured = capsys.readouterr()
    text = captured.out + captured.err
    run_file = Path(config.source).parent / "run.jsonl"
    assert f"{run_file}:1: " in text
    assert "embedding_canaries[0] has 3 values and the embedding dimension is 4" in text
    assert "Traceback" not in text


def test_history_before_any_run_says_what_to_do(
    tiny: Tiny, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tiny()
    assert config.source is not None
    assert main(["--config", str(config.source), "history"]) == 2
    assert "no runs in" in capsys.readouterr().err
