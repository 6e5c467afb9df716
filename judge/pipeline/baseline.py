"""``judge baseline pin`` and ``judge baseline ratchet``: a report folder's per-question values
become (or raise) the pinned baseline the gate holds runs to."""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from judge.config import Config
from judge.record.store import ReportsDir
from judge.results.baseline import Raised, pin_baseline, ratchet_baseline
from judge.results.compare import GateRule


class Pinned(NamedTuple):
    path: Path
    """The baseline file written."""
    folder: str
    """The report folder it was pinned from."""
    questions: int


class Ratcheted(NamedTuple):
    path: Path
    folder: str
    raised: list[Raised]
    """Each per-type metric raised, its mean before and after (none is ever lowered)."""


def pin(config: Config, folder_name: str | None, *, replace: bool = False) -> Pinned:
    """Pin a report folder's values as ``reports.baseline``; an existing baseline is replaced
    only with ``replace``."""
    reports = ReportsDir(config.reports.dir)
    folder = reports.folder(folder_name)
    entry = reports.history_entry(folder)
    values = folder.record().values()
    path = config.reports.baseline
    pin_baseline(path, entry, values, replace=replace)
    return Pinned(path, folder.name, len(values.types))


def ratchet(config: Config, folder_name: str | None) -> Ratcheted:
    """Raise ``reports.baseline`` wherever the folder's run is shown better than it (the gate's
    own rule, ``judge.results.baseline.ratchet_values``)."""
    reports = ReportsDir(config.reports.dir)
    folder = reports.folder(folder_name)
    path = config.reports.baseline
    _, raised = ratchet_baseline(
        path,
        reports.history_entry(folder),
        folder.record().values(),
        GateRule.from_config(config.reports),
        config.data.question_types,
    )
    return Ratcheted(path, folder.name, raised)
