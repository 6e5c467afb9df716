"""``judge history`` and ``reports/history.html``: the season read from the report folders and
drawn (``judge.results.season_view`` for the data, ``judge.report.history_page`` and
``judge.report.history_text`` for the views).

Each night is read from its history line and, in its folder, ``manifest.json``, ``values.json``
and ``marks.json`` (the gate's decisions; ``read_marks``): never a whole record, except for a
folder written before ``marks.json`` existed, whose record is read once. A night whose folder
is gone or unreadable is left out of the picture (its history line stays). ``run`` and
``nightly`` rebuild the page after each run (``write_history_page``), under the run's lock.
"""

from __future__ import annotations

from pathlib import Path

from judge.config import Config
from judge.errors import ConfigError, InputError
from judge.io.state import StateFile, read_json_document
from judge.io.write import write_atomic
from judge.record.store import ReportFolder, ReportsDir
from judge.report.history_page import (
    NIGHT_MARKS_FILE,
    record_marks,
    render_history_page,
)
from judge.results.baseline import read_baseline
from judge.results.compare import QuestionValues
from judge.results.history import HistoryEntry
from judge.results.season_view import (
    NIGHT_MARKS_FORMAT,
    NightInput,
    NightMarks,
    SeasonView,
    build_season,
)

#: ``marks.json``: a folder's gate decisions, for the season's views.
MARKS = StateFile(
    what=NIGHT_MARKS_FILE,
    remedy="write it again with 'judge report FOLDER'",
    current=NIGHT_MARKS_FORMAT,
    error=ConfigError,
)

_UNREADABLE = (ConfigError, InputError, OSError, ValueError)


def read_marks(folder: ReportFolder) -> NightMarks | None:
    """A folder's gate decisions: its ``marks.json``, else (a folder written before it) from
    its record; None when neither can be read. The one reader of the decisions the season's
    views show: a change in how the gate stores them is adapted here."""
    path = folder.path / NIGHT_MARKS_FILE
    try:
        if path.exists():
            return read_json_document(path, NightMarks, MARKS)
        return record_marks(folder.record())
    except _UNREADABLE:
        return None


def night_input(reports: ReportsDir, entry: HistoryEntry) -> NightInput | None:
    """One night as the season's views read it (None: its folder is gone or unreadable)."""
    try:
        folder = reports.folder(entry.folder)
        values: QuestionValues | None = folder.values()
        manifest = folder.manifest
    except _UNREADABLE:
        return None
    return NightInput(entry, manifest, values, read_marks(folder))


def season_view(reports: ReportsDir, baseline_path: Path) -> SeasonView:
    """The season of every night in the history whose folder is still there."""
    nights = [night_input(reports, entry) for entry in reports.history()]
    baseline = read_baseline(baseline_path)
    pinned = None
    if baseline is not None:
        pinned = QuestionValues(dict(baseline.types), dict(baseline.values))
    return build_season([n for n in nights if n is not None], pinned)


def write_history_page(
    config: Config, reports: ReportsDir | None = None
) -> tuple[SeasonView, Path]:
    """Rebuild ``reports/history.html`` from the folders; returns the season and its path."""
    reports = reports or ReportsDir(config.reports.dir)
    view = season_view(reports, config.reports.baseline)
    path = reports.path / "history.html"  # HISTORY_FILE, named here for the docs' scan
    baseline = config.reports.baseline
    name = baseline.name if baseline.exists() else None
    write_atomic(path, render_history_page(view, str(reports.path), name))
    return view, path


def history(config: Config) -> tuple[SeasonView, Path]:
    """``judge history``: the season, and the page rebuilt beside it."""
    reports = ReportsDir(config.reports.dir)
    if not reports.history_path.exists():
        raise ConfigError(f"no runs in {reports.path} yet; run 'judge run' first")
    with reports.lock():
        return write_history_page(config, reports)
