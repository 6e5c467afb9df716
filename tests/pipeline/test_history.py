"""The season read from real report folders: every run rebuilds history.html, each folder keeps
its gate marks, ``judge history`` prints them, and a changed canary under an unchanged embedder
name is named on the nightly's first line and on the season's axis."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from judge.cli import main
from judge.config import Config
from judge.pipeline.evaluate import evaluate
from judge.pipeline.history import history, read_night_marks, season_view
from judge.record.store import ReportFolder, ReportsDir
from tests.conftest import QUESTIONS, RUN

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
    marks = read_night_marks(folders[-1])
    assert marks is not None and marks.verdict == "ok: no regression" and marks.marks == ()
    view, path = history(config)
    assert path == page and len(view.nights) == 2 and view.changes == []


def test_marks_of_a_folder_without_marks_json_come_from_its_record(tiny: Tiny) -> None:
    config = tiny()
    folder = evaluate(config, backend="lexical").folder
    kept = read_night_marks(folder)
    (folder.path / "marks.json").unlink()
    assert read_night_marks(folder) == kept
    (folder.path / "report.json").write_text("{", encoding="utf-8")
    assert (
        read_night_marks(ReportFolder(folder.path)) is None
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


def _two_nights(tiny: Tiny) -> tuple[Config, list[ReportFolder]]:
    config = tiny()
    folders = [evaluate(config, backend="lexical").folder for _ in range(2)]
    return config, folders


def test_the_season_reads_each_nights_marks_json_only(tiny: Tiny) -> None:
    config, folders = _two_nights(tiny)
    reports = ReportsDir(config.reports.dir)
    view = season_view(reports, config.reports.baseline)
    marks = read_night_marks(folders[-1])
    assert marks is not None and marks.format_version == 2 and marks.night is not None
    assert marks.night.context_k == config.retrieval.context_k
    assert list(marks.night.points["judge:faithfulness"]) == [
        "all",
        "factual",
        "procedural",
        "negative",
        "out_of_scope",
    ]
    # The values and the record unreadable, the manifest too: the season is the same.
    for folder in folders:
        for name in ("values.json", "report.json", "manifest.json"):
            (folder.path / name).write_text("{", encoding="utf-8")
    assert season_view(reports, config.reports.baseline) == view


def test_an_old_folder_falls_back_to_its_values_and_is_left_as_it_is(tiny: Tiny) -> None:
    config, folders = _two_nights(tiny)
    reports = ReportsDir(config.reports.dir)
    view = season_view(reports, config.reports.baseline)
    # Format 1: the marks without the night's summary, as written before it was kept.
    first = folders[0].path / "marks.json"
    old = json.loads(first.read_text(encoding="utf-8"))
    old.pop("night")
    old["format_version"] = 1
    first.write_text(json.dumps(old), encoding="utf-8")
    written = first.read_bytes()
    assert season_view(reports, config.reports.baseline) == view
    assert first.read_bytes() == written  # nothing written into the old folder
    # No marks.json at all: the marks from the record, the points from values.json.
    first.unlink()
    assert season_view(reports, config.reports.baseline) == view
    assert not first.exists()
    # Neither summary nor values: the night is left out, as a gone folder.
    (folders[0].path / "values.json").write_text("{", encoding="utf-8")
    (folders[0].path / "report.json").write_text("{", encoding="utf-8")
    assert [n.folder for n in season_view(reports, config.reports.baseline).nights] == [
        folders[1].name
    ]


def test_questions_retired_are_counted_from_the_two_nights_values(tiny: Tiny) -> None:
    config = tiny()
    evaluate(config, backend="lexical")
    questions = [q for q in QUESTIONS if q["id"] != "q4"]
    run = [r for r in RUN if r.get("id") != "q4"]
    config = tiny(questions=questions, run=run)
    evaluate(config, backend="lexical")
    view, _ = history(config)
    golden = [c.text for c in view.changes if c.kind == "golden"]
    assert golden == ["the golden set changed (0 question(s) added, 1 retired)"]


def test_judge_report_rebuilds_the_season_page(
    tiny: Tiny, capsys: pytest.CaptureFixture[str]
) -> None:
    config, folders = _two_nights(tiny)
    assert config.source is not None
    page = ReportsDir(config.reports.dir).path / "history.html"
    as_run = page.read_bytes()
    marks = (folders[0].path / "marks.json").read_bytes()
    page.unlink()
    assert main(["--config", str(config.source), "report", folders[0].name]) == 0
    assert page.read_bytes() == as_run  # the same season: the run's page, byte for byte
    assert (folders[0].path / "marks.json").read_bytes() == marks
    # A folder's marks.json of format 1 is written again with its summary by 'judge report'.
    (folders[0].path / "marks.json").write_text(
        json.dumps({"format_version": 1, "verdict": "ok: no regression", "marks": []}),
        encoding="utf-8",
    )
    assert main(["--config", str(config.source), "report", folders[0].name]) == 0
    assert (folders[0].path / "marks.json").read_bytes() == marks
    capsys.readouterr()
