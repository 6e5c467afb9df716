"""``judge show`` and ``judge diff``: saved report folders read back (nothing is judged); the
views are ``judge.report.show``'s."""

from __future__ import annotations

from judge.config import Config
from judge.pipeline.diff import diff_records
from judge.record.model import Record, RunDiff
from judge.record.store import ReportsDir
from judge.results.compare import GateRule


def folder_record(config: Config, folder_name: str | None) -> Record:
    """The run record of a report folder (a path, a name under reports/, or latest)."""
    return ReportsDir(config.reports.dir).folder(folder_name).record()


def diff_folders(config: Config, a: str, b: str) -> RunDiff:
    """Report folder ``b`` against ``a``, question by question, with the gate's rule."""
    reports = ReportsDir(config.reports.dir)
    rule = GateRule.from_config(config.reports)
    return diff_records(reports.folder(a).record(), reports.folder(b).record(), rule)
