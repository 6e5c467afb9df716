"""``judge history`` and ``reports/history.html``: the season read from the report folders and
drawn (``judge.results.season_view`` for the data, ``judge.report.history_page`` and
``judge.report.history_text`` for the views).

Each night is read from its history line and its folder's ``marks.json``: the gate's decisions
and the night's summary (per type and metric the value with its interval and n, the settings
its changes are computed from), written once by its run. A folder written before the summary
was kept falls back, once per drawing, to its ``manifest.json`` and ``values.json`` (and its
record for the marks, when it has no ``marks.json`` at all); nothing is written into it. The
golden set's change between two nights whose question ids differ is counted from their
``values.json`` (the only other read, on such nights only). A night whose folder is gone or
unreadable is left out of the picture (its history line stays). ``run``, ``nightly`` and
``judge report`` rebuild the page after writing a folder (``write_history_page``), under the
reports directory's lock.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

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
    golden_counts_needed,
    night_summary,
)


def _upgrade_marks(version: int, value: dict[str, Any]) -> dict[str, Any]:
    """``marks.json`` of format 1 (the marks without the night's summary) read as the current
    format: its summary is None, and the night is summarised from its values instead."""
    if version != 1:
        raise ValueError("of the formats before it, this judge reads 1 only")
    return value


#: ``marks.json``: a folder's gate decisions and night summary, for the season's views.
MARKS = StateFile(
    what=NIGHT_MARKS_FILE,
    remedy="write it again with 'judge report FOLDER'",
    current=NIGHT_MARKS_FORMAT,
    upgrade=_upgrade_marks,
    error=ConfigError,
)

_UNREADABLE = (ConfigError, InputError, OSError, ValueError)


def read_night_marks(folder: ReportFolder) -> NightMarks | None:
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


def _kept_marks(reports: ReportsDir, entry: HistoryEntry) -> NightMarks | None:
    """A night's ``marks.json`` when it holds the night's summary (None otherwise: no file, an
    older one, unreadable, or a folder name that is not a plain name in the directory)."""
    name = entry.folder
    if name in ("", ".", "..") or Path(name).name != name or "\\" in name:
        return None
    try:
        marks = read_json_document(reports.path / name / NIGHT_MARKS_FILE, NightMarks, MARKS)
    except _UNREADABLE:
        return None
    return marks if marks.night is not None else None


def night_input(reports: ReportsDir, entry: HistoryEntry) -> NightInput | None:
    """One night as the season's views read it (None: its folder is gone or unreadable): its
    ``marks.json`` alone when it keeps the night's summary, else its manifest and values."""
    kept = _kept_marks(reports, entry)
    if kept is not None:
        return NightInput(entry, None, None, kept, kept.night)
    try:
        folder = reports.folder(entry.folder)
        values: QuestionValues | None = folder.values()
        manifest = folder.manifest
    except _UNREADABLE:
        return None
    return NightInput(entry, manifest, values, read_night_marks(folder))


def _with_golden_counts(reports: ReportsDir, nights: list[NightInput]) -> list[NightInput]:
    """The nights, with the values of both nights around each golden-set change whose question
    ids differ read in (``golden_counts_needed``), so that the questions added and retired are
    counted; every other night stays as read."""
    out = list(nights)
    for index in range(1, len(out)):
        pair = (out[index - 1], out[index])
        if pair[0].entry.golden_hash == pair[1].entry.golden_hash:
            continue  # the same golden set: nothing to count (and no summary made for it)
        if golden_counts_needed(pair, (night_summary(pair[0]), night_summary(pair[1]))):
            for at in (index - 1, index):
                if out[at].values is None:
                    out[at] = out[at]._replace(values=_values(reports, out[at].entry))
    return out


def _values(reports: ReportsDir, entry: HistoryEntry) -> QuestionValues | None:
    try:
        return reports.folder(entry.folder).values()
    except _UNREADABLE:
        return None


def season_view(reports: ReportsDir, baseline_path: Path) -> SeasonView:
    """The season of every night in the history whose folder is still there."""
    read = [night_input(reports, entry) for entry in reports.history()]
    nights = _with_golden_counts(reports, [n for n in read if n is not None])
    baseline = read_baseline(baseline_path)
    pinned = None
    if baseline is not None:
        pinned = QuestionValues(dict(baseline.types), dict(baseline.values))
    return build_season(nights, pinned)


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
